import Depot
import Foundation

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
