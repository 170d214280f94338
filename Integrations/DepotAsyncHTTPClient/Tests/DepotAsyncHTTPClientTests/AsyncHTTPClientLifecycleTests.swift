import AsyncHTTPClient
import Depot
import DepotAsyncHTTPClient
import DepotBackendConformance
import Foundation
import NIOCore
import NIOPosix
import Testing

/// What only `AsyncHTTPClientBackend` has: its client's lifetime and idle timeout.
@Suite(.liveServers) struct AsyncHTTPClientLifecycleTests {
    @Test(
        "shutdown() with a request in flight ends it as .transport, not .cancelled; later requests fail the same way"
    )
    func shutdownInFlight() async throws {
        let base = try #require(LiveServer.fault)
        let backend = AsyncHTTPClientBackend(baseURL: base, timeout: 10)
        let pending = Task { await backend.send(BackendRequest(path: "silent")).result }
        try await Task.sleep(for: .milliseconds(300))

        try await backend.shutdown()
        let inFlight = await pending.value
        let after = await backend.send(BackendRequest(path: "json")).result

        for result in [inFlight, after] {
            guard case .failure(.transport) = result else {
                Issue.record("expected .transport, got \(result)")
                continue
            }
        }
    }

    @Test("without a timeout, the client's idle timeout ends a silent answer as .timedOut")
    func idleTimeoutWithoutATimeout() async throws {
        var configuration = AsyncHTTPClientBackend.recommendedConfiguration()
        configuration.timeout.read = .seconds(1)
        let client = HTTPClient(
            eventLoopGroup: NIOSingletons.posixEventLoopGroup, configuration: configuration)
        let backend = AsyncHTTPClientBackend(baseURL: try #require(LiveServer.fault), client: client)

        let result = await backend.send(BackendRequest(path: "silent")).result
        try await client.shutdown()

        guard case .failure(.timedOut) = result else {
            Issue.record("expected .timedOut, got \(result)")
            return
        }
    }

    @Test("the recommended configuration bounds an idle connection: 60 s to read, 10 s to connect")
    func recommendedTimeouts() {
        let timeout = AsyncHTTPClientBackend.recommendedConfiguration().timeout
        #expect(timeout.read == .seconds(60))
        #expect(timeout.connect == .seconds(10))
    }
}
