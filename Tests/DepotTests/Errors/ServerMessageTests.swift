import Foundation
import Testing

@testable import Depot

@Suite("ServiceError: server messages and descriptions")
struct ServerMessageTests {
    private static let json: HTTPHeaders = ["Content-Type": "application/json"]

    @Test(
        arguments: [
            (#"{"message":"Validation Failed"}"#, "Validation Failed"),
            (#"{"error":"invalid_grant"}"#, "invalid_grant"),
            (#"{"error":"invalid_grant","error_description":"Bad password"}"#, "Bad password"),
            (#"{"error":{"message":"Rate limit exceeded","code":429}}"#, "Rate limit exceeded"),
            (#"{"detail":"Not found."}"#, "Not found."),
            (
                #"{"type":"https://example.com/probs/out-of-credit","title":"You do not have enough credit.","status":403,"detail":"Your current balance is 30, but that costs 50."}"#,
                "Your current balance is 30, but that costs 50."
            ),
            (#"{"type":"about:blank","title":"Not Found","status":404}"#, "Not Found"),
            (#"{"message":""}"#, nil),
            // Found by depot-fuzz (target error-body): empty strings are no message either.
            (#""""#, nil),
            (#"{"error":{"message":""}}"#, nil),
            (#"{"error":{"message":""},"title":"Conflict"}"#, "Conflict"),
            (#""Service down""#, "Service down"),
            (#"{"errors":[{"field":"title"}]}"#, nil),
            (#"[1,2,3]"#, nil),
            ("", nil),
        ] as [(String, String?)]
    )
    func readsTheMessageFromJSON(body: String, expected: String?) {
        let response = FailureResponse(status: 400, headers: Self.json, body: Data(body.utf8))
        #expect(response.message == expected)
        #expect(ServiceError.clientError(response).message == expected)
    }

    @Test(
        arguments: [
            ("text/plain; charset=utf-8", "Service down for maintenance\n", "Service down for maintenance"),
            (nil, "upstream connect error", "upstream connect error"),
            ("text/html", "<html><body><h1>500 Internal Server Error</h1></body></html>", nil),
            (nil, "<!DOCTYPE html><html><body>Oops</body></html>", nil),
            ("text/plain", String(repeating: "x", count: 2_000), nil),
            ("application/octet-stream", "binary", nil),
        ] as [(String?, String, String?)]
    )
    func readsShortPlainTextButNotMarkup(contentType: String?, body: String, expected: String?) {
        var headers: HTTPHeaders = [:]
        headers["Content-Type"] = contentType
        let response = FailureResponse(status: 500, headers: headers, body: Data(body.utf8))
        #expect(response.message == expected)
    }

    @Test func anExplicitMessageWins() {
        let response = FailureResponse(
            status: 400, headers: Self.json, body: Data(#"{"message":"from body"}"#.utf8), message: "given")
        #expect(response.message == "given")
    }

    @Test(arguments: [401, 403, 404, 409, 410, 422, 429, 500, 503, 302])
    func descriptionMentionsTheStatusAndTheMessage(status: Int) throws {
        let response = BackendResponse(
            status: status, headers: Self.json, body: Data(#"{"message":"Widget 7 is locked"}"#.utf8))
        let error = try #require(ServiceError(response: response, for: BackendRequest(path: "widgets/7")))
        let description = try #require(error.errorDescription)
        #expect(description.contains(String(status)))
        #expect(description.contains("Widget 7 is locked"))
        #expect(error.localizedDescription == description)
        #expect(error.description == description)
    }

    @Test func descriptionsOfFailuresWithoutAResponse() {
        let decoding = ServiceError.decoding(
            DecodingFailure(type: "Array<Post>", codingPath: "[1].title", description: "expected String"))
        #expect(decoding.errorDescription?.contains("Array<Post>") == true)
        #expect(decoding.errorDescription?.contains("[1].title") == true)
        #expect(
            ServiceError.invalidRequest("header X-Bad has a line break").errorDescription?
                .contains("header X-Bad has a line break") == true)
        #expect(
            ServiceError.transport(code: -1005, description: "lost").errorDescription?.contains("-1005")
                == true)
        let retry = ServiceError.serviceUnavailable(FailureResponse(status: 503), retryAfter: 120)
        #expect(retry.errorDescription?.contains("120") == true)
    }
}
