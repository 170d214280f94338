import Foundation
import Testing

@testable import Depot

/// An app's token store: the token it holds, and the refreshes it was asked for.
private final class TokenStore: Sendable {
    private let state: Locked<(token: String?, reads: Int, refreshes: [String])>
    private let fresh: String
    private let refreshGate: OneShotGate?
    private let refreshError: (any Error & Sendable)?
    /// Opens when a refresh begins.
    let refreshStarted = OneShotGate()

    init(
        token: String?, fresh: String = "new", refreshGate: OneShotGate? = nil,
        refreshError: (any Error & Sendable)? = nil
    ) {
        self.state = Locked((token, 0, []))
        self.fresh = fresh
        self.refreshGate = refreshGate
        self.refreshError = refreshError
    }

    var reads: Int { state.withLock { $0.reads } }
    var refreshes: [String] { state.withLock { $0.refreshes } }

    func token() async throws -> String? {
        state.withLock { state in
            state.reads += 1
            return state.token
        }
    }

    func refresh(_ rejected: String) async throws -> String {
        state.withLock { $0.refreshes.append(rejected) }
        refreshStarted.open()
        if let refreshGate { await refreshGate.wait() }
        if let refreshError { throw refreshError }
        state.withLock { $0.token = fresh }
        return fresh
    }

    var middleware: BearerAuthMiddleware {
        BearerAuthMiddleware(token: { try await self.token() }, refresh: { try await self.refresh($0) })
    }
}

private struct RefreshTokenExpired: Error {}

/// A server that accepts only `Bearer new`, and answers 401 with a challenge otherwise.
private func acceptsOnlyNewToken(_ request: BackendRequest) -> ScriptedBackend.Reply {
    request.headers["Authorization"] == "Bearer new"
        ? .status(200, body: "ok")
        : .status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
}

@Suite("BearerAuthMiddleware")
struct BearerAuthMiddlewareTests {
    @Test func signsTheRequestWithTheProvidersToken() async throws {
        let store = TokenStore(token: "t-1")
        let backend = ScriptedBackend([.status(200, body: "ok")])

        let response = try await backend.with(store.middleware).send(BackendRequest(path: "me")).value

        #expect(response.body == Data("ok".utf8))
        #expect(backend.requests.first?.headers["Authorization"] == "Bearer t-1")
        #expect(store.refreshes.isEmpty)
    }

    @Test func aRequestWithItsOwnAuthorizationIsLeftAlone() async throws {
        let store = TokenStore(token: "t-1")
        let backend = ScriptedBackend([.status(401), .status(200)])

        let result = await backend.with(store.middleware)
            .send(
                BackendRequest(method: .post, path: "oauth/token", headers: ["Authorization": "Basic YTpi"])
            )
            .result

        #expect(result.failureStatus == 401)
        #expect(backend.requests.map(\.headers["Authorization"]) == ["Basic YTpi"])
        #expect(store.reads == 0)
        #expect(store.refreshes.isEmpty)
    }

    @Test func withoutATokenTheRequestGoesUnsignedAndA401IsReturned() async {
        let store = TokenStore(token: nil)
        let backend = ScriptedBackend([.status(401), .status(200)])

        let result = await backend.with(store.middleware).send(BackendRequest(path: "me")).result

        #expect(result.failureStatus == 401)
        #expect(backend.requests.count == 1)
        #expect(backend.requests.first?.headers.contains("Authorization") == false)
        #expect(store.refreshes.isEmpty)
    }

    @Test func a401RefreshesOnceAndReplaysWithTheNewToken() async throws {
        let store = TokenStore(token: "old")
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)

        let response = try await backend.with(store.middleware)
            .send(BackendRequest(method: .put, path: "me", body: Data("{}".utf8))).value

        #expect(response.status == 200)
        #expect(store.refreshes == ["old"])
        #expect(backend.requests.map(\.headers["Authorization"]) == ["Bearer old", "Bearer new"])
        #expect(backend.requests.allSatisfy { $0.method == .put && $0.body == Data("{}".utf8) })
    }

    @Test func aSecond401AfterTheRefreshIsReturnedAsUnauthorized() async {
        let store = TokenStore(token: "old")
        let backend = ScriptedBackend([
            .status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#]),
            .status(401, headers: ["WWW-Authenticate": #"Bearer error="insufficient_scope""#]),
            .status(200),
        ])

        let result = await backend.with(store.middleware).send(BackendRequest(path: "me")).result

        guard case .failure(.unauthorized(let response, let challenges)) = result else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(response.status == 401)
        #expect(challenges.first?.parameters["error"] == "insufficient_scope")  // the replay's answer
        #expect(store.refreshes == ["old"])
        #expect(backend.requests.count == 2)
    }

    @Test func aFailedRefreshReturnsTheOriginal401() async {
        let store = TokenStore(token: "old", refreshError: RefreshTokenExpired())
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)

        let result = await backend.with(store.middleware).send(BackendRequest(path: "me")).result

        guard case .failure(.unauthorized(_, let challenges)) = result else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(challenges.first?.parameters["error"] == "invalid_token")
        #expect(backend.requests.count == 1)
    }

    @Test func aRefreshThatFailsWithAServiceErrorReturnsThatError() async {
        let store = TokenStore(token: "old", refreshError: ServiceError.noConnection)
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)

        let result = await backend.with(store.middleware).send(BackendRequest(path: "me")).result

        #expect(throws: ServiceError.noConnection) { try result.get() }
        #expect(backend.requests.count == 1)
    }

    @Test func aFailingTokenProviderFailsTheRequestBeforeItIsSent() async {
        let backend = ScriptedBackend([])
        let auth = BearerAuthMiddleware(token: { throw RefreshTokenExpired() }, refresh: { $0 })
        let offline = BearerAuthMiddleware(token: { throw ServiceError.noConnection }, refresh: { $0 })

        let failed = await backend.with(auth).send(BackendRequest(path: "me")).result
        let passed = await backend.with(offline).send(BackendRequest(path: "me")).result

        guard case .failure(.invalidRequest) = failed else {
            Issue.record("expected .invalidRequest, got \(failed)")
            return
        }
        #expect(throws: ServiceError.noConnection) { try passed.get() }
        #expect(backend.requests.isEmpty)
    }

    @Test func concurrent401sShareOneRefresh() async throws {
        let store = TokenStore(token: "old")
        // Holds the first answers until all ten requests arrived with the old token, so
        // that every one of them meets a 401.
        let allArrived = OneShotGate()
        let oldTokens = Locked(0)
        let backend = ScriptedBackend { request, _, reply in
            guard request.headers["Authorization"] == "Bearer old" else {
                return reply(acceptsOnlyNewToken(request))
            }
            if oldTokens.withLock({ count in
                count += 1
                return count
            }) == 10 {
                allArrived.open()
            }
            Task {
                await allArrived.wait()
                reply(acceptsOnlyNewToken(request))
            }
        }
        let client = backend.with(store.middleware)

        let results: [Result<BackendResponse, ServiceError>] =
            await boundedWait(10) {
                await withTaskGroup(of: Result<BackendResponse, ServiceError>.self) { group in
                    for id in 1...10 {
                        group.addTask { await client.send(BackendRequest(path: "items/\(id)")).result }
                    }
                    return await group.reduce(into: [Result<BackendResponse, ServiceError>]()) {
                        $0.append($1)
                    }
                }
            } ?? []

        #expect(results.count == 10)
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        #expect(store.refreshes == ["old"])
        let tokens = backend.requests.map { $0.headers["Authorization"] ?? "" }
        #expect(tokens.filter { $0 == "Bearer old" }.count == 10)
        #expect(tokens.filter { $0 == "Bearer new" }.count == 10)
    }

    @Test func aLate401WithAnAlreadyReplacedTokenDoesNotRefreshAgain() async throws {
        let store = TokenStore(token: "old")
        let release = OneShotGate()
        let backend = ScriptedBackend { request, _, reply in
            if request.path == "slow", request.headers["Authorization"] == "Bearer old" {
                Task {
                    await release.wait()
                    reply(acceptsOnlyNewToken(request))
                }
            } else {
                reply(acceptsOnlyNewToken(request))
            }
        }
        let client = backend.with(store.middleware)

        let slow = StartedFuture(client.send(BackendRequest(path: "slow")))
        _ = await nextRequest(to: backend)  // the slow request is out with the old token
        let fast = await client.send(BackendRequest(path: "fast")).result
        release.open()
        let late = await slow.result()

        #expect(try fast.get().status == 200)
        #expect(try late?.get().status == 200)
        #expect(store.refreshes == ["old"])
        #expect(backend.requests.map(\.path) == ["slow", "fast", "fast", "slow"])
        #expect(backend.requests.last?.headers["Authorization"] == "Bearer new")
    }

    @Test func requestsStartedDuringARefreshWaitForItsToken() async throws {
        let refreshGate = OneShotGate()
        let store = TokenStore(token: "old", refreshGate: refreshGate)
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)
        let client = backend.with(store.middleware)

        let first = StartedFuture(client.send(BackendRequest(path: "a")))
        await store.refreshStarted.wait()
        let second = StartedFuture(client.send(BackendRequest(path: "b")))
        refreshGate.open()

        #expect(try await first.result()?.get().status == 200)
        #expect(try await second.result()?.get().status == 200)
        #expect(store.reads == 1)
        #expect(store.refreshes == ["old"])
        let sent = backend.requests.map { "\($0.path) \($0.headers["Authorization"] ?? "")" }
        #expect(sent.filter { $0.hasPrefix("b") } == ["b Bearer new"])
    }

    @Test func aRequestWaitingForARefreshCanBeCancelled() async throws {
        let refreshGate = OneShotGate()
        let store = TokenStore(token: "old", refreshGate: refreshGate)
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)
        let client = backend.with(store.middleware)

        let first = StartedFuture(client.send(BackendRequest(path: "a")))
        await store.refreshStarted.wait()
        let waiting = StartedFuture(client.send(BackendRequest(path: "b")))
        waiting.cancel()
        let cancelled = try #require(waiting.current)  // at once, while the refresh still runs
        refreshGate.open()

        #expect(throws: ServiceError.cancelled) { try cancelled.get() }
        #expect(try await first.result()?.get().status == 200)
        #expect(backend.requests.map(\.path) == ["a", "a"])
    }
}
