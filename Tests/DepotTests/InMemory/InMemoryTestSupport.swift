import Depot
import DepotInMemory
import Foundation
import Testing

/// JSONPlaceholder-shaped data generated for the InMemoryBackend tests: 10 users,
/// 100 posts (ten per user), 300 comments (three per post) and a profile.
enum MemoryFixture {
    static let cities = ["Gwenborough", "Wisokyburgh", "McKenziehaven", "South Elvis", "Roscoeview"]

    /// User `id` lives in `cities[(id - 1) % 5]`.
    static func users() -> [JSONValue] {
        (1...10).map { id in
            [
                "id": .int(id), "name": .string("User \(id)"), "username": .string("user\(id)"),
                "address": [
                    "city": .string(cities[(id - 1) % cities.count]), "zipcode": .string("0000\(id)"),
                ],
            ]
        }
    }

    /// Post `id` belongs to user `(id - 1) / 10 + 1`; its title is `post <id>`, with
    /// ` Lorem` appended when `id` is a multiple of 25; `views` is `(id * 37) % 101`.
    static func posts() -> [JSONValue] {
        (1...100).map { id in
            [
                "id": .int(id), "userId": .int((id - 1) / 10 + 1),
                "title": .string("post \(id)" + (id % 25 == 0 ? " Lorem" : "")),
                "body": .string("body of post \(id)"), "views": .int((id * 37) % 101),
            ]
        }
    }

    /// Comment `id` belongs to post `(id - 1) / 3 + 1`.
    static func comments() -> [JSONValue] {
        (1...300).map { id in
            ["id": .int(id), "postId": .int((id - 1) / 3 + 1), "body": .string("comment \(id)")]
        }
    }

    /// The whole data set as a db.json document.
    static func database() -> Data {
        let database: [String: JSONValue] = [
            "users": .array(users()), "posts": .array(posts()), "comments": .array(comments()),
            "profile": ["name": "Ada", "theme": "dark"],
        ]
        return (try? JSONEncoder().encode(database)) ?? Data()
    }

    /// A backend seeded with ``database()``.
    static func backend() throws -> InMemoryBackend {
        try InMemoryBackend(database: database())
    }
}

/// Sends one request to `backend` and awaits the outcome.
func memorySend(
    _ backend: InMemoryBackend,
    _ method: HTTPMethod = .get,
    _ path: String,
    query: [(String, String)] = [],
    body: String? = nil
) async -> Result<BackendResponse, ServiceError> {
    let request = BackendRequest(
        method: method, path: path, query: query.map { URLQueryItem(name: $0.0, value: $0.1) },
        body: body.map { Data($0.utf8) })
    return await backend.send(request).result
}

extension Result where Success == BackendResponse, Failure == ServiceError {
    /// The response, when the request succeeded.
    var memoryResponse: BackendResponse? {
        try? get()
    }

    /// The error, when the request failed.
    var memoryError: ServiceError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// The body of a successful response as JSON.
    var memoryJSON: JSONValue? {
        memoryResponse.flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0.body) }
    }

    /// The `id`s of the records in a successful response whose body is an array.
    var memoryIDs: [Int]? {
        memoryJSON?.arrayValue?.map { $0["id"]?.intValue ?? -1 }
    }
}

/// The name of an error's case, for table-driven assertions.
func memoryKind(_ error: ServiceError?) -> String? {
    error?.caseName
}
