import Foundation
import Testing

@testable import Depot

@Suite("Middleware composition")
struct MiddlewareCompositionTests {
    /// A server that is briefly unavailable, then rejects the old token, then serves.
    private static func flakyServer() -> ScriptedBackend {
        ScriptedBackend { request, index, reply in
            switch (index, request.headers["Authorization"]) {
            case (0, _): reply(.status(503, headers: ["Retry-After": "0"]))
            case (_, "Bearer new"): reply(.status(200, body: "ok"))
            default: reply(.status(401, headers: ["WWW-Authenticate": "Bearer"]))
            }
        }
    }

    @Test func theFirstListedSeesTheRequestFirstAndTheOutcomeLast() async throws {
        let backend = Self.flakyServer()
        let events = Locked<[LogEvent]>([])
        let refreshes = Locked<[String]>([])
        let token = Locked("old")
        let scheduler = RecordingScheduler()
        let client = backend.with(
            LoggingMiddleware { event in events.withLock { $0.append(event) } },
            HeadersMiddleware(["X-Client": "depot-tests"]),
            RetryMiddleware(policy: RetryPolicy(jitter: .none), scheduler: scheduler.scheduler),
            BearerAuthMiddleware(
                token: { token.withLock { $0 } },
                refresh: { rejected in
                    refreshes.withLock { $0.append(rejected ?? "") }
                    token.withLock { $0 = "new" }
                    return "new"
                })
        )

        let response = try await client.send(BackendRequest(path: "me")).value

        #expect(response.body == Data("ok".utf8))
        // Retry runs auth again on each attempt; auth replays once after the 401.
        #expect(
            backend.requests.map { $0.headers["Authorization"] } == [
                "Bearer old", "Bearer old", "Bearer new",
            ])
        #expect(backend.requests.allSatisfy { $0.headers["X-Client"] == "depot-tests" })
        #expect(scheduler.delays == [0])  // the Retry-After, not the backoff
        #expect(refreshes.withLock { $0 } == ["old"])
        // Logging is outermost: one request, before auth, so no Authorization to see.
        let logged = events.withLock { $0 }
        #expect(logged.map(\.requestNumber) == [1, 1])
        #expect(logged.last?.status == 200)
        #expect(logged.first?.headers.contains("Authorization") == false)
        #expect(logged.first?.headers.contains("X-Client") == false)
    }

    @Test func loggingBehindRetryAndAuthSeesEveryAttemptRedacted() async throws {
        let backend = Self.flakyServer()
        let events = Locked<[LogEvent]>([])
        let token = Locked("old")
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.001, jitter: .none)
        let client = backend.with(
            .retry(policy),
            .bearer(
                token: { token.withLock { $0 } },
                refresh: { _ in
                    token.withLock { $0 = "new" }
                    return "new"
                }),
            .headers(["X-Client": "depot-tests"]),
            .logging { event in events.withLock { $0.append(event) } }
        )

        let response = await boundedWait(hangBound) { await client.send(BackendRequest(path: "me")).result }

        #expect(try response?.get().status == 200)
        let logged = events.withLock { $0 }
        #expect(logged.map(\.requestNumber) == [1, 1, 2, 2, 3, 3])
        #expect(logged.compactMap(\.status) == [503, 401, 200])
        #expect(logged.allSatisfy { $0.headers["Authorization"] == "<redacted>" })
        #expect(logged.allSatisfy { $0.headers["X-Client"] == "depot-tests" })
    }
}
