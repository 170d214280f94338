import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLSessionOutcomeTests {
    @Test(arguments: [
        (URLError.Code.cancelled, "cancelled"),
        (.timedOut, "timedOut"),
        (.cannotConnectToHost, "cannotConnect"),
        (.cannotFindHost, "cannotConnect"),
        (.notConnectedToInternet, "noConnection"),
        (.dataNotAllowed, "noConnection"),
        (.networkConnectionLost, "transport"),
        (.secureConnectionFailed, "transport"),
        (.badServerResponse, "transport"),
    ])
    func mapsURLErrors(code: URLError.Code, kind: String) {
        let error = ServiceError(transportError: URLError(code))
        #expect(error.caseName == kind)
        if case .transport(let transportCode, _) = error { #expect(transportCode == code.rawValue) }
    }

    @Test func keepsTheCodeOfOtherErrors() {
        let error = ServiceError(transportError: NSError(domain: "Other", code: 42))
        #expect(error.caseName == "transport")
        if case .transport(let code, _) = error { #expect(code == 42) }
    }

    private func response(_ status: Int, headers: [String: String] = [:]) throws -> HTTPURLResponse {
        let url = try #require(URL(string: "http://h/p"))
        return try #require(
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    @Test func classifiesTheStatusAndKeepsTheServerMessage() throws {
        let body = Data(#"{"message": "no such post"}"#.utf8)
        let outcome = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: body,
            response: try response(404, headers: ["Content-Type": "application/json"]), error: nil,
            ending: .finished)
        #expect(outcome.failure?.caseName == "notFound")
        #expect(outcome.failure?.message == "no such post")
        #expect(outcome.failure?.response?.body == body)
    }

    @Test func deliversASuccessWithItsHeaders() throws {
        let outcome = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: Data("[]".utf8),
            response: try response(
                200, headers: ["X-Total-Count": "100", "Link": "<http://h/p?_page=2>; rel=\"next\""]),
            error: nil, ending: .finished)
        let answer = try outcome.get()
        #expect(answer.status == 200)
        #expect(answer.headers["x-total-count"] == "100")
        #expect(answer.headers["link"] == "<http://h/p?_page=2>; rel=\"next\"")
        #expect(answer.body == Data("[]".utf8))
    }

    @Test func convertsASuccessFieldsOnlyWhenTheyAreRead() throws {
        var answer = try URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: Data("{}".utf8),
            response: try response(200, headers: ["ETag": "\"1\""]), error: nil, ending: .finished
        ).get()
        guard case .deferred = answer.fields else {
            Issue.record("the fields of a success were converted before anyone read them")
            return
        }
        answer.headers.add("Age", "3")
        guard case .given(let fields) = answer.fields else {
            Issue.record("the changed fields are not the response's own")
            return
        }
        #expect(fields.map { $0.name.lowercased() } == ["etag", "age"])
    }

    @Test func keepsTheResponseHeadersSortedByNameWithoutRegardToCase() throws {
        let answer = try URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: Data(),
            response: try response(200, headers: ["x-b": "2", "X-a": "1", "ETag": "e", "content-type": "t"]),
            error: nil, ending: .finished
        ).get()
        // The platform may recase some names (FoundationNetworking writes `Etag`).
        #expect(answer.headers.map { $0.name.lowercased() } == ["content-type", "etag", "x-a", "x-b"])
        #expect(answer.headers["x-a"] == "1" && answer.headers["X-B"] == "2")
        #expect("Accept".caseInsensitiveLess("accept-encoding"))
        #expect(!"ACCEPT".caseInsensitiveLess("accept"))
        #expect(!"accept".caseInsensitiveLess("ACCEPT"))
        #expect("X-A".caseInsensitiveLess("x_a"))  // "-" (45) sorts before "_" (95)
    }

    @Test func reportsCancellationWhateverTheTaskEndedWith() throws {
        let outcome = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: Data(), response: try response(200), error: nil,
            ending: .cancelled)
        #expect(outcome.failure == .cancelled)
    }

    @Test func reportsTheDeadlineAsATimeoutWhateverTheTaskEndedWith() throws {
        // The deadline cancels the task, which then reports -999: the caller must see a timeout.
        let outcome = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: nil, response: nil, error: URLError(.cancelled),
            ending: .timedOut)
        #expect(outcome.failure == .timedOut)
    }

    @Test func reportsABodyOverTheLimitAsDataLengthExceedsMaximum() throws {
        let declared = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: nil, response: try response(200),
            error: URLError(.cancelled),
            ending: .tooLarge(limit: 100, declared: 5000))
        guard case .transport(let code, let description) = declared.failure else {
            Issue.record("expected a transport failure, got \(declared)")
            return
        }
        #expect(code == URLError.Code.dataLengthExceedsMaximum.rawValue)
        #expect(description.contains("5000") && description.contains("100 bytes"))
        let grown = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: nil, response: nil, error: nil,
            ending: .tooLarge(limit: 100, declared: nil))
        #expect(grown.failure?.caseName == "transport")
        if case .transport(_, let description) = grown.failure { #expect(description.contains("100 bytes")) }
    }

    @Test func refusesAnAnswerThatIsNotHTTP() throws {
        let plain = URLResponse(
            url: try #require(URL(string: "http://h/p")), mimeType: nil, expectedContentLength: 0,
            textEncodingName: nil)
        let outcome = URLSessionTransport.outcome(
            of: BackendRequest(path: "p"), data: nil, response: plain, error: nil, ending: .finished)
        #expect(outcome.failure?.caseName == "transport")
    }

    @Test func aBadRequestFailsWithoutTouchingTheNetwork() async throws {
        let backend = URLSessionBackend(baseURL: try #require(URL(string: "http://127.0.0.1:9/")))
        let result = await backend.send(BackendRequest(path: "p", headers: ["X": "a\nb"])).result
        #expect(result.failure?.caseName == "invalidRequest")
        let foreign = await backend.send(BackendRequest(path: "https://example.com/steal")).result
        #expect(foreign.failure?.caseName == "invalidRequest")
    }
}
