import Foundation
import Testing

@testable import Depot

@Suite("ServiceError: the status classifier")
struct ServiceErrorClassifierTests {
    private static let get = BackendRequest(path: "posts/1")

    private static func classify(
        _ status: Int, headers: HTTPHeaders = [:], body: String = "", request: BackendRequest = get
    ) -> ServiceError? {
        ServiceError(
            response: BackendResponse(status: status, headers: headers, body: Data(body.utf8)), for: request)
    }

    @Test(
        arguments: [
            (200, nil), (201, nil), (204, nil), (299, nil),
            (101, "unexpectedStatus"), (301, "unexpectedStatus"), (302, "unexpectedStatus"),
            (304, "unexpectedStatus"),
            (400, "clientError"), (401, "unauthorized"), (403, "forbidden"), (404, "notFound"),
            (410, "notFound"), (409, "conflict"), (418, "clientError"), (422, "clientError"),
            (429, "serviceUnavailable"), (503, "serviceUnavailable"),
            (500, "serverError"), (502, "serverError"), (599, "serverError"),
        ] as [(Int, String?)]
    )
    func classifiesTheStatus(status: Int, expected: String?) {
        let error = Self.classify(status)
        #expect(error?.caseName == expected)
        if expected != nil {
            #expect(error?.statusCode == status)
            #expect(error?.response?.status == status)
        }
        let response = BackendResponse(status: status)
        switch ServiceError.check(response, for: Self.get) {
        case .success(let passed): #expect(expected == nil && passed == response)
        case .failure(let failure): #expect(failure == error)
        }
    }

    @Test(
        arguments: [
            ["If-None-Match": "\"v1\""], ["if-none-match": "W/\"v1\""],
            ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"],
        ] as [HTTPHeaders]
    )
    func notModifiedIsASuccessForAConditionalRequest(validators: HTTPHeaders) {
        let request = BackendRequest(path: "posts/1", headers: validators)
        #expect(request.isConditional)
        #expect(Self.classify(304, request: request) == nil)
        #expect(Self.classify(304, request: Self.get)?.caseName == "unexpectedStatus")
    }

    @Test func teapotIsAClientErrorWithItsStatus() {
        let error = Self.classify(418, body: "I'm a teapot")
        guard case .clientError(let response) = error else {
            Issue.record("expected clientError, got \(String(describing: error))")
            return
        }
        #expect(response.status == 418)
        #expect(error?.statusCode == 418)
        #expect(error?.message == "I'm a teapot")
    }

    @Test func validationErrorKeepsItsBody() throws {
        let body = #"{"message":"Validation Failed","errors":[{"field":"title","code":"missing"}]}"#
        let error = Self.classify(422, headers: ["Content-Type": "application/json"], body: body)
        guard case .clientError(let response) = error else {
            Issue.record("expected clientError, got \(String(describing: error))")
            return
        }
        #expect(response.body == Data(body.utf8))
        #expect(response.headers["content-type"] == "application/json")
        #expect(error?.message == "Validation Failed")
        let decoded = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect((decoded?["errors"] as? [Any])?.count == 1)
    }

    @Test(arguments: unauthorizedCases)
    func unauthorizedParsesEveryChallenge(values: [String], expected: [AuthenticationChallenge]) {
        var headers: HTTPHeaders = [:]
        for value in values { headers.add("WWW-Authenticate", value) }
        let error = Self.classify(401, headers: headers)
        guard case .unauthorized(let response, let challenges) = error else {
            Issue.record("expected unauthorized, got \(String(describing: error))")
            return
        }
        #expect(response.status == 401)
        #expect(error?.statusCode == 401)
        #expect(challenges == expected)
    }

    @Test func unauthorizedWithoutAChallenge() {
        guard case .unauthorized(_, let challenges) = Self.classify(401) else {
            Issue.record("expected unauthorized")
            return
        }
        #expect(challenges.isEmpty)
    }

    @Test(arguments: [429, 503], retryAfterForms)
    func serviceUnavailableReadsRetryAfter(status: Int, form: (String, TimeInterval?)) {
        let headers: HTTPHeaders = ["Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Retry-After": form.0]
        let error = Self.classify(status, headers: headers)
        guard case .serviceUnavailable(let response, let retryAfter) = error else {
            Issue.record("expected serviceUnavailable, got \(String(describing: error))")
            return
        }
        #expect(response.status == status)
        #expect(retryAfter == form.1)
    }

    @Test(arguments: [429, 503])
    func serviceUnavailableWithoutRetryAfter(status: Int) {
        guard case .serviceUnavailable(_, let retryAfter) = Self.classify(status) else {
            Issue.record("expected serviceUnavailable")
            return
        }
        #expect(retryAfter == nil)
    }

    @Test func retryAfterDateWithoutADateHeaderCountsFromNow() {
        let now = Date(timeIntervalSince1970: 784_111_777)
        let headers: HTTPHeaders = ["Retry-After": "Sun, 06 Nov 1994 08:50:07 GMT"]
        #expect(RetryAfter.seconds(in: headers, now: now) == 30)
    }

    @Test func errorsWithoutAResponseHaveNoStatus() {
        let errors: [ServiceError] = [
            .invalidRequest("bad"), .cannotConnect, .noConnection, .timedOut, .cancelled,
            .transport(code: -1005, description: "lost"),
            .decoding(DecodingFailure(type: "Post", codingPath: "id", description: "wrong")),
        ]
        for error in errors {
            #expect(error.statusCode == nil)
            #expect(error.message == nil)
        }
    }
}

/// `Retry-After` values and the delay they mean, for a response dated
/// `Sun, 06 Nov 1994 08:49:37 GMT`.
private let retryAfterForms: [(String, TimeInterval?)] = [
    ("120", 120), (" 30 ", 30), ("0", 0),
    ("Sun, 06 Nov 1994 08:51:37 GMT", 120),
    ("Sunday, 06-Nov-94 08:50:37 GMT", 60),
    ("Sun Nov  6 08:49:47 1994", 10),
    ("Sun, 06 Nov 1994 08:40:00 GMT", 0),
    ("soon", nil),
]

/// `WWW-Authenticate` field values and the challenges they hold.
private let unauthorizedCases: [([String], [AuthenticationChallenge])] = [
    (
        [#"Basic realm="Fake Realm""#],
        [AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "Fake Realm"])]
    ),
    (
        [#"Bearer realm="api", error="invalid_token", error_description="expired""#],
        [
            AuthenticationChallenge(
                scheme: "Bearer",
                parameters: ["realm": "api", "error": "invalid_token", "error_description": "expired"])
        ]
    ),
    (
        [#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#],
        [
            AuthenticationChallenge(
                scheme: "Newauth", parameters: ["realm": "apps", "type": "1", "title": #"Login to "apps""#]),
            AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "simple"]),
        ]
    ),
    (
        [#"Basic realm="one""#, "Bearer"],
        [
            AuthenticationChallenge(scheme: "Basic", parameters: ["realm": "one"]),
            AuthenticationChallenge(scheme: "Bearer"),
        ]
    ),
]
