import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// An app's token store: the token it holds, and the refreshes it was asked for.
private final class TokenStore: Sendable {
    private let state: Locked<(token: String?, reads: Int, refreshes: [String?])>
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
    /// The tokens each refresh was given (`nil`: the request went out without one).
    var refreshes: [String?] { state.withLock { $0.refreshes } }

    func token() async throws -> String? {
        state.withLock { state in
            state.reads += 1
            return state.token
        }
    }

    func refresh(_ rejected: String?) async throws -> String {
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

    @Test func withoutATokenTheRequestGoesUnsignedAndA401RefreshesWithNilAndReplays() async throws {
        let store = TokenStore(token: nil)
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)

        let response = try await backend.with(store.middleware).send(BackendRequest(path: "me")).value

        #expect(response.status == 200)
        #expect(store.refreshes == [nil])
        #expect(backend.requests.map(\.headers["Authorization"]) == [nil, "Bearer new"])
    }

    @Test func withoutATokenAFailedRefreshReturnsThe401() async {
        let store = TokenStore(token: nil, refreshError: RefreshTokenExpired())
        let backend = ScriptedBackend(respond: acceptsOnlyNewToken)

        let result = await backend.with(store.middleware).send(BackendRequest(path: "me")).result

        guard case .failure(.unauthorized(_, let challenges)) = result else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(challenges.first?.parameters["error"] == "invalid_token")
        #expect(store.refreshes == [nil])
        #expect(backend.requests.count == 1)
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
        let auth = BearerAuthMiddleware(token: { throw RefreshTokenExpired() }, refresh: { $0 ?? "" })
        let offline = BearerAuthMiddleware(token: { throw ServiceError.noConnection }, refresh: { $0 ?? "" })

        let failed = await backend.with(auth).send(BackendRequest(path: "me")).result
        let passed = await backend.with(offline).send(BackendRequest(path: "me")).result

        guard case .failure(.invalidRequest) = failed else {
            Issue.record("expected .invalidRequest, got \(failed)")
            return
        }
        #expect(throws: ServiceError.noConnection) { try passed.get() }
        #expect(backend.requests.isEmpty)
    }

    /// With a stale token or with none, every request meets a 401 and all share one refresh.
    @Test(arguments: [(String?.some("old"), 10), (nil, 20)])
    func concurrent401sShareOneRefresh(token: String?, count: Int) async throws {
        let store = TokenStore(token: token)
        let first = token.map { "Bearer \($0)" }
        // Holds the first answers until all the requests arrived with the first token (or
        // none), so that every one of them meets a 401.
        let allArrived = OneShotGate()
        let firstAttempts = Locked(0)
        let backend = ScriptedBackend { request, _, reply in
            guard request.headers["Authorization"] == first else {
                return reply(acceptsOnlyNewToken(request))
            }
            if firstAttempts.withLock({ arrived in
                arrived += 1
                return arrived
            }) == count {
                allArrived.open()
            }
            Task {
                await allArrived.wait()
                reply(acceptsOnlyNewToken(request))
            }
        }
        let results = await sendConcurrently(count, through: backend.with(store.middleware)) { id in
            BackendRequest(path: "items/\(id)")
        }

        #expect(results.count == count)
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        #expect(store.refreshes == [token])
        let tokens = backend.requests.map { $0.headers["Authorization"] }
        #expect(tokens.filter { $0 == first }.count == count)
        #expect(tokens.filter { $0 == "Bearer new" }.count == count)
    }

    @Test func aSignedOutClientGetsItsFirstTokenFromOneRefreshOnAnInMemoryRoute() async throws {
        let server = InMemoryBackend()
        server.route(.get, "me") { context in
            context.request.headers["Authorization"] == "Bearer issued"
                ? .json(["name": "Ada"])
                : BackendResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer realm="api""#])
        }
        let session = SignedOutSession(issuing: "issued")

        let results = await sendConcurrently(20, through: server.with(session.middleware)) { _ in
            BackendRequest(path: "me")
        }

        #expect(results.count == 20)
        #expect(results.allSatisfy { (try? $0.get().json()["name"]) == "Ada" })
        #expect(await session.refreshes == [nil])
        let sent = server.requests.map { $0.headers["Authorization"] }
        #expect(sent.filter { $0 == "Bearer issued" }.count == 20)
        #expect(sent.allSatisfy { $0 == nil || $0 == "Bearer issued" })
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

@Suite("BearerAuthMiddleware and the request's context")
struct BearerAuthContextTests {
    @Test("requests that wait for one shared refresh are retried each with its own receipt")
    func waitersKeepTheirOwnContext() async throws {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let refreshes = Locked(0)
        let auth = BearerAuthMiddleware(
            token: { "stale" },
            refresh: { _ in
                refreshes.withLock { $0 += 1 }
                for await _ in released { break }
                return "fresh"
            })
        let seen = Locked([ObjectIdentifier?]())
        let backend = AsyncAuthServer().with(auth, ReceiptProbe(seen: seen))
        let receipts = (0..<3).map { _ in AnswerReceipt() }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for receipt in receipts {
                group.addTask {
                    try await receipt.collect {
                        try await backend.send(BackendRequest(path: "me")).value.status
                    }
                }
            }
            // The first was refused and the one refresh runs (the others were refused too, or
            // wait for it unsent, as the scheduler had it): now it ends.
            while refreshes.withLock({ $0 }) < 1 { await Task.yield() }
            release.yield()
            for try await status in group { #expect(status == 200) }
        }
        #expect(refreshes.withLock { $0 } == 1)
        // Every pass carried its own caller's receipt, retries after the shared refresh
        // included: each receipt once or twice (refused, then retried), none missing, no other.
        let counts = seen.withLock { $0 }.reduce(into: [ObjectIdentifier?: Int]()) { $0[$1, default: 0] += 1 }
        #expect(Set(counts.keys) == Set(receipts.map { Optional(ObjectIdentifier($0)) }))
        #expect(counts.values.allSatisfy { (1...2).contains($0) })
        #expect(counts.values.contains(2))
    }

    @Test("a request retried after a 401 that came on another thread keeps its receipt")
    func retryKeepsItsContext() async throws {
        let seen = Locked([ObjectIdentifier?]())
        let auth = BearerAuthMiddleware(token: { "stale" }, refresh: { _ in "fresh" })
        let backend = AsyncAuthServer().with(auth, ReceiptProbe(seen: seen))
        let receipt = AnswerReceipt()
        let response = try await receipt.collect { try await backend.send(BackendRequest(path: "me")).value }
        #expect(response.status == 200)
        // Sent twice (stale, then fresh); the retry in the caller's receipt too.
        #expect(seen.withLock { $0 } == [ObjectIdentifier(receipt), ObjectIdentifier(receipt)])
    }
}

/// Accepts only `Bearer fresh`, answering from another thread, as a network backend does.
private struct AsyncAuthServer: Backend {
    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future { promise in
            DispatchQueue.global().async {
                guard request.headers["Authorization"] == "Bearer fresh" else {
                    let failure = FailureResponse(status: 401, headers: ["WWW-Authenticate": "Bearer"])
                    promise(.failure(.unauthorized(failure, challenges: [])))
                    return
                }
                promise(.success(BackendResponse(status: 200)))
            }
            return NotCancellable()
        }
    }
}

/// Notes the receipt each request carries when it passes.
private struct ReceiptProbe: Middleware {
    let seen: Locked<[ObjectIdentifier?]>

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let future = next(request)
        return Future { [seen] promise in
            seen.withLock { $0.append(request.context.receipt.map(ObjectIdentifier.init)) }
            return future.start { promise($0) }
        }
    }
}
