import Depot
import Foundation
import Testing

/// Bearer and basic credentials, as httpbin checks them.
@Suite(.liveServers) struct HTTPBinAuthTests {
    private func httpbin() throws -> URL {
        try #require(LiveServer.httpbin)
    }

    @Test func sendsABearerToken() async throws {
        let backend = URLSessionBackend(baseURL: try httpbin(), headers: ["Authorization": "Bearer t0ken"])
        let response = try await backend.send(BackendRequest(path: "bearer")).value
        let json = try response.json()
        #expect(json["authenticated"] == .bool(true))
        #expect(json["token"] == .string("t0ken"))
    }

    @Test func aMissingBearerTokenIsUnauthorizedWithItsChallenge() async throws {
        let backend = URLSessionBackend(baseURL: try httpbin())
        let result = await backend.send(BackendRequest(path: "bearer")).result
        guard case .unauthorized(_, let challenges) = result.failure else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(challenges.first?.scheme == "Bearer")
    }

    @Test func withoutATokenHTTPBinsBearer401RefreshesOnceForTwentyRequestsAndEachSucceeds() async throws {
        let session = SignedOutSession(issuing: "first-t0ken")
        let backend = URLSessionBackend(baseURL: try httpbin()).with(session.middleware)

        let results = await sendConcurrently(20, through: backend, within: 30) { _ in
            BackendRequest(path: "bearer")
        }

        #expect(results.count == 20)
        for result in results {
            let json = try result.get().json()
            #expect(json["authenticated"] == .bool(true))
            #expect(json["token"] == .string("first-t0ken"))
        }
        #expect(await session.refreshes == [nil])
    }

    @Test func sendsBasicCredentials() async throws {
        let credentials = Data("ada:s3cret:with:colons".utf8).base64EncodedString()
        let backend = URLSessionBackend(baseURL: try httpbin())
        let request = BackendRequest(
            segments: ["basic-auth", "ada", "s3cret:with:colons"],
            headers: ["Authorization": "Basic \(credentials)"])
        let response = try await backend.send(request).value
        let json = try response.json()
        #expect(json["authenticated"] == .bool(true))
        #expect(json["user"] == .string("ada"))
    }

    @Test func wrongBasicCredentialsAreUnauthorized() async throws {
        let credentials = Data("ada:wrong".utf8).base64EncodedString()
        let backend = URLSessionBackend(baseURL: try httpbin())
        let request = BackendRequest(
            segments: ["basic-auth", "ada", "right"], headers: ["Authorization": "Basic \(credentials)"])
        let result = await backend.send(request).result
        guard case .unauthorized(_, let challenges) = result.failure else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(challenges.first?.scheme == "Basic")
        #expect(challenges.first?.realm == "Fake Realm")
    }
}
