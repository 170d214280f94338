import DepotBackendConformance
import Foundation
import Testing

@testable import Depot

/// Timeouts, cancellation and refused connections over real sockets.
@Suite(.liveServers) struct HTTPBinTransportTests {
    @Test func aDelayLongerThanTheTimeoutTimesOut() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), timeout: 1)
        let (result, elapsed) = await measure { await backend.send(BackendRequest(path: "delay/5")).result }
        #expect(result.failure == .timedOut)
        #expect(elapsed < 2, "timed out after \(elapsed) s; the timeout was 1 s")
    }

    @Test func aShortDelayWithinTheTimeoutSucceeds() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), timeout: 5)
        let response = try await backend.send(BackendRequest(path: "delay/1")).value
        #expect(response.status == 200)
    }

    @Test func theTimeoutBoundsTheWholeRequestNotTheWaitBetweenBytes() async throws {
        // One byte a second for 10 s: the connection is never idle for 2 s, yet the
        // request as a whole takes longer than its timeout.
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), timeout: 2)
        let (result, elapsed) = await measure {
            await backend.send(BackendRequest(path: "drip?duration=10&numbytes=10&delay=0")).result
        }
        #expect(result.failure == .timedOut)
        #expect(elapsed < 4, "timed out after \(elapsed) s; the timeout was 2 s")
    }

    @Test func requestsWithinTheTimeoutSucceed() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), timeout: 2)
        #expect(try await backend.send(BackendRequest(path: "get")).value.status == 200)
        // A slow body that still ends in time: two bytes over about a second.
        let drip = try await backend.send(BackendRequest(path: "drip?duration=1&numbytes=2&delay=0")).value
        #expect(drip.body == Data("**".utf8))
    }

    @Test func aFractionalTimeoutIsKeptToTheMillisecond() async throws {
        // FoundationNetworking's own timeout is whole seconds (0.5 becomes 1); Depot's is not.
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), timeout: 0.5)
        let (result, elapsed) = await measure { await backend.send(BackendRequest(path: "delay/3")).result }
        #expect(result.failure == .timedOut)
        #expect(elapsed < 0.95, "timed out after \(elapsed) s; the timeout was 0.5 s")
    }

    @Test func cancellingBeforeTheDeadlineIsACancellationNotATimeout() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), timeout: 2)
        let calls = Locked(0)
        let (result, elapsed) = await measure {
            await withCheckedContinuation { continuation in
                let work = backend.send(BackendRequest(path: "drip?duration=10&numbytes=10&delay=0")).start {
                    result in
                    if calls.withLock({
                        $0 += 1
                        return $0
                    }) == 1 {
                        continuation.resume(returning: result)
                    }
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { work.cancel() }
            }
        }
        #expect(result.failure == .cancelled)
        #expect(elapsed < 1.3, "completed \(elapsed) s after the start; cancelled after 0.3 s")
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func cancellingTheCancellableCancelsTheRequest() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let clock = ContinuousClock()
        let (result, sinceCancel) = await withCheckedContinuation { continuation in
            let cancelledAt = Locked<ContinuousClock.Instant?>(nil)
            let work = backend.send(BackendRequest(path: "delay/10")).start { result in
                let end = clock.now
                let elapsed = cancelledAt.withLock { $0 }.map { $0.duration(to: end) } ?? .seconds(99)
                continuation.resume(returning: (result, elapsed))
            }
            // Let the request reach the server, then cancel it mid-flight.
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
                cancelledAt.withLock { $0 = clock.now }
                work.cancel()
            }
        }
        #expect(result.failure == .cancelled)
        #expect(sinceCancel < .seconds(1), "completed \(sinceCancel) after cancel()")
    }

    @Test func cancellingTheAwaitingTaskCancelsTheRequest() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let task = Task { await backend.send(BackendRequest(path: "delay/10")).result }
        try await Task.sleep(for: .milliseconds(300))
        let (result, elapsed) = await measure {
            task.cancel()
            return await task.value
        }
        #expect(result.failure == .cancelled)
        #expect(elapsed < 1, "completed \(elapsed) s after cancel()")
    }

    @Test func aClosedPortCannotConnect() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.closed), timeout: 5)
        let (result, elapsed) = await measure { await backend.send(BackendRequest(path: "posts")).result }
        #expect(result.failure == .cannotConnect)
        #expect(elapsed < 5)
    }

    @Test func manyRequestsAtOnceAllComplete() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let futures = (1...20).map { index in
            backend.send(BackendRequest(path: "anything/\(index)")).map { $0.status }
        }
        let statuses = try await Future.all(futures).value
        #expect(statuses == Array(repeating: 200, count: 20))
    }
}
