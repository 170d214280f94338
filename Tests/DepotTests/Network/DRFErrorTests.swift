import Depot
import DepotBackendConformance
import Foundation
import Testing

/// The server's own message and details, from every common error body shape
/// (the DRF app's `/errors/<status>?style=…`).
@Suite(.liveServers) struct DRFErrorTests {
    private func send(_ status: Int, _ query: [String: String]) async throws -> ServiceError {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.drf))
        let items = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        let result = await backend.send(BackendRequest(segments: ["errors", String(status)], query: items))
            .result
        return try #require(result.failure)
    }

    @Test(arguments: ["detail", "message", "error", "problem", "text"])
    func keepsTheServerMessage(style: String) async throws {
        let error = try await send(409, ["style": style])
        #expect(error.caseName == "conflict")
        #expect(error.message == "Conflict: asked for 409")
        #expect(error.localizedDescription.contains("Conflict: asked for 409"))
    }

    @Test func anEmptyBodyHasNoMessage() async throws {
        let error = try await send(500, ["style": "empty"])
        #expect(error.caseName == "serverError")
        #expect(error.message == nil)
    }

    @Test func a422KeepsItsValidationErrors() async throws {
        let error = try await send(422, ["style": "validation"])
        #expect(error.caseName == "clientError")
        #expect(error.statusCode == 422)
        let fields = try JSONDecoder().decode(
            [String: [String]].self, from: try #require(error.response?.body))
        #expect(fields["title"] == ["This field is required."])
    }

    @Test func a503KeepsRetryAfterInSeconds() async throws {
        guard case .serviceUnavailable(_, let retryAfter) = try await send(503, ["retry_after": "7"]) else {
            Issue.record("expected .serviceUnavailable")
            return
        }
        #expect(retryAfter == 7)
    }

    @Test func a429KeepsRetryAfterAsAnHTTPDate() async throws {
        let date = HTTPDate.format(Date().addingTimeInterval(120))
        guard
            case .serviceUnavailable(let response, let retryAfter) = try await send(
                429, ["retry_after": date])
        else {
            Issue.record("expected .serviceUnavailable")
            return
        }
        #expect(response.status == 429)
        let seconds = try #require(retryAfter)
        #expect((110...121).contains(seconds))
    }

    @Test func a401ParsesTheBearerChallenge() async throws {
        guard case .unauthorized(_, let challenges) = try await send(401, [:]) else {
            Issue.record("expected .unauthorized")
            return
        }
        #expect(challenges == [AuthenticationChallenge(scheme: "Bearer", parameters: ["realm": "depot"])])
    }
}
