import Depot
import Foundation

/// A user, reduced to what the tests read.
struct LiveUser: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
    var email: String
}

/// The repository a user of Depot would write for `/users`.
struct LiveUserRepository: Readable {
    typealias Entity = LiveUser
    let backend: any Backend
    let name = "users"

    /// A custom endpoint: `GET /users/:id/posts`.
    func posts(of userID: Int) -> Future<[Post], ServiceError> {
        request(.get, ["users", String(userID), "posts"])
    }
}

/// Seconds elapsed while `body` runs.
func measure<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
    let clock = ContinuousClock()
    let start = clock.now
    let value = try await body()
    let elapsed = start.duration(to: clock.now)
    return (value, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

extension BackendResponse {
    /// The body as a JSON object, for httpbin's echoes.
    func json() throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: body)
    }
}
