import DepotBackendConformance
import Foundation
import Testing

@testable import Depot

/// A thousand requests at once through one ``URLSessionBackend``: every one answered,
/// correctly, exactly once. The count and duration are printed (a `load:` line).
@Suite struct LoadTests {
    /// Once with the completion-handler tasks, once with the delegate-driven tasks of a
    /// response-size limit.
    @Test(.liveServers, arguments: [nil, 1 << 20] as [Int?])
    func aThousandRequestsInFlightThroughOneURLSessionBackend(limit: Int?) async throws {
        let count = 1000
        let backend = URLSessionBackend(
            baseURL: try #require(LiveServer.fault), timeout: 30, maximumResponseBytes: limit)
        let tally = Tally(count: count)
        let clock = ContinuousClock()
        let start = clock.now
        // All started before any is awaited: a thousand tasks in flight, each with its deadline.
        let work = (0..<count).map { index in
            backend.send(
                BackendRequest(path: "json", query: [URLQueryItem(name: "id", value: String(index))])
            )
            .start { result in
                let id = result.value.flatMap { try? JSONDecoder().decode(Answer.self, from: $0.body) }?.id
                tally.record(index, right: id == index)
            }
        }
        await tally.wait(atMost: 60)
        let elapsed = start.duration(to: clock.now)
        // A spurious second completion would come from the same request's other ending.
        try await Task.sleep(for: .milliseconds(250))
        let summary = tally.summary
        print(
            "load: \(count) requests in flight through one URLSessionBackend (fault server /json, timeout 30 s,",
            "maximumResponseBytes \(limit.map(String.init) ?? "none")):",
            "\(summary.right) right, \(summary.once) completed exactly once, \(summary.more) more than once,",
            "in \(elapsed.formatted(.units(allowed: [.milliseconds])))")
        #expect(summary.once == count && summary.more == 0)
        #expect(summary.right == count)
        withExtendedLifetime(work) {}
    }
}

/// The fault server's `/json` answer.
private struct Answer: Decodable {
    let id: Int
}
