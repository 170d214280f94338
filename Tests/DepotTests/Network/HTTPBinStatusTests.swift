import Depot
import DepotBackendConformance
import Foundation
import Testing

/// Every status of DESIGN.md's table, from a real server (httpbin's `/status/N`).
@Suite(.liveServers) struct HTTPBinStatusTests {
    private func backend() throws -> URLSessionBackend {
        URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
    }

    @Test(arguments: [
        (401, "unauthorized"), (403, "forbidden"), (404, "notFound"), (409, "conflict"), (410, "notFound"),
        (418, "clientError"), (422, "clientError"), (429, "serviceUnavailable"), (500, "serverError"),
        (502, "serverError"), (503, "serviceUnavailable"), (300, "unexpectedStatus"),
    ])
    func classifiesTheStatus(status: Int, kind: String) async throws {
        let result = try await backend().send(BackendRequest(segments: ["status", String(status)])).result
        let error = try #require(result.failure)
        #expect(error.caseName == kind)
        #expect(error.statusCode == status)
    }

    @Test(arguments: [200, 201, 202, 204])
    func deliversEverySuccess(status: Int) async throws {
        let response = try await backend().send(BackendRequest(segments: ["status", String(status)])).value
        #expect(response.status == status)
    }

    @Test func keepsTheChallengeOfA401() async throws {
        let result = try await backend().send(BackendRequest(path: "status/401")).result
        guard case .unauthorized(let response, let challenges) = result.failure else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(response.headers["WWW-Authenticate"] == #"Basic realm="Fake Realm""#)
        #expect(challenges == [AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "Fake Realm"])])
    }

    @Test func a418IsAClientErrorWithItsStatus() async throws {
        let result = try await backend().send(BackendRequest(path: "status/418")).result
        #expect(result.failure?.statusCode == 418)
        #expect(result.failure?.response?.body.isEmpty == false)
    }

    @Test func aHeadRequestHasNoBody() async throws {
        let response = try await backend().send(BackendRequest(method: .head, path: "get")).value
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
    }
}
