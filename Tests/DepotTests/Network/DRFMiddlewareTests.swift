import Depot
import DepotBackendConformance
import Foundation
import Testing

/// The built-in middleware over real HTTP, against the DRF app's `/flaky` and `/auth/*`
/// endpoints, which count what they receive per `key`.
@Suite(.liveServers) struct DRFMiddlewareTests {
    private func drf() throws -> URL {
        try #require(LiveServer.drf)
    }

    private func freshKey() -> String {
        UUID().uuidString.lowercased()
    }

    /// The JSON of `GET path?key=key`, one of the app's counters.
    private func counters(_ path: String, key: String) async throws -> [String: JSONValue] {
        let request = BackendRequest(path: path, query: [URLQueryItem(name: "key", value: key)])
        return try await URLSessionBackend(baseURL: drf()).send(request).value.json()
    }

    @Test func retriesAfterRetryAfterUntilTheServerAnswers() async throws {
        let key = freshKey()
        let backend = URLSessionBackend(
            baseURL: try drf(), middleware: [RetryMiddleware(policy: RetryPolicy(maxAttempts: 3))])
        let request = BackendRequest(
            path: "flaky",
            query: [URLQueryItem(name: "key", value: key), URLQueryItem(name: "fail", value: "2")])
        let (response, elapsed) = try await measure { try await backend.send(request).value }
        #expect(response.status == 200)
        #expect(try response.json()["attempt"] == .int(3))
        #expect(try await counters("flaky/count", key: key)["attempts"] == .int(3))
        // Two answers said `Retry-After: 1`.
        #expect(elapsed >= 1.9, "retried after \(elapsed) s in all")
    }

    @Test func aPostIsNotRetried() async throws {
        let key = freshKey()
        let backend = URLSessionBackend(
            baseURL: try drf(), middleware: [RetryMiddleware(policy: RetryPolicy(maxAttempts: 3))])
        let request = BackendRequest(
            method: .post, path: "flaky",
            query: [URLQueryItem(name: "key", value: key), URLQueryItem(name: "fail", value: "1")],
            body: Data("{}".utf8))
        let result = await backend.send(request).result
        guard case .serviceUnavailable(_, let retryAfter) = result.failure else {
            Issue.record("expected .serviceUnavailable, got \(result)")
            return
        }
        #expect(retryAfter == 1)
        #expect(try await counters("flaky/count", key: key)["attempts"] == .int(1))
    }

    @Test func concurrentRequestsShareOneTokenRefresh() async throws {
        let key = freshKey()
        let base = try drf()
        let issue = { @Sendable () async throws -> String in
            let request = BackendRequest(
                method: .post, path: "auth/token", query: [URLQueryItem(name: "key", value: key)])
            let json = try await URLSessionBackend(baseURL: base).send(request).value.json()
            return try #require(json["access_token"]?.stringValue)
        }
        let store = TokenStore(token: try await issue())
        let expire = BackendRequest(
            method: .post, path: "auth/expire", query: [URLQueryItem(name: "key", value: key)])
        _ = try await URLSessionBackend(baseURL: base).send(expire).value

        let auth = BearerAuthMiddleware(
            token: { await store.token },
            refresh: { _ in
                let fresh = try await issue()
                await store.set(fresh)
                return fresh
            })
        let backend = URLSessionBackend(baseURL: base, middleware: [auth])
        let me = BackendRequest(path: "auth/me", query: [URLQueryItem(name: "key", value: key)])
        let statuses = try await Future.all((1...8).map { _ in backend.send(me).map(\.status) }).value
        #expect(statuses == Array(repeating: 200, count: 8))

        let count = try await counters("auth/count", key: key)
        #expect(count["issued"] == .int(2), "one token at the start, one refresh for all")
        #expect(count["accepted"] == .int(8))
    }
}

/// Where the app keeps its access token.
private actor TokenStore {
    var token: String?

    init(token: String?) {
        self.token = token
    }

    func set(_ token: String) {
        self.token = token
    }
}
