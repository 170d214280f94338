import Foundation

/// Every way a Depot call can fail, as one typed error, the same case for the same situation
/// on every backend: the article *Handling Errors*.
///
/// ```swift
/// do throws(ServiceError) {
///     let post = try await posts.findByID(9999).value
/// } catch .notFound {
///     showEmptyState()
/// } catch {
///     show(error.localizedDescription)
/// }
/// ```
public enum ServiceError: Error, Sendable, Hashable {
    /// The request could not be built: a bad base URL, a body that would not encode,
    /// a header with CR or LF, a link to a foreign origin.
    case invalidRequest(String)
    /// The server refused the connection or could not be reached.
    case cannotConnect
    /// The device is offline.
    case noConnection
    /// The request took longer than its timeout.
    case timedOut
    /// The caller cancelled the request.
    case cancelled
    /// Any other transport failure, with the platform's code (a `URLError` code).
    case transport(code: Int, description: String)
    /// 401: credentials are missing or wrong; `challenges` come from `WWW-Authenticate`.
    case unauthorized(FailureResponse, challenges: [AuthenticationChallenge])
    /// 403: the credentials do not allow this.
    case forbidden(FailureResponse)
    /// 404 or 410: no such resource.
    case notFound(FailureResponse)
    /// 409: the request conflicts with the resource's state (a duplicate id, say).
    case conflict(FailureResponse)
    /// Any other 4xx; a 422's validation errors are in the response body.
    case clientError(FailureResponse)
    /// 503 or 429: try again later, after `retryAfter` seconds when the server says.
    case serviceUnavailable(FailureResponse, retryAfter: TimeInterval?)
    /// Any other 5xx.
    case serverError(FailureResponse)
    /// A 1xx or 3xx status reached the client (for example a redirect that was not followed).
    case unexpectedStatus(FailureResponse)
    /// A successful body did not decode to the expected type.
    case decoding(DecodingFailure)
    /// The write did not reach the server and was stored to be sent later (DepotOffline's
    /// outbox): not a failure of the server, and not lost. The payload identifies the
    /// outbox entry, whose outcome the outbox reports when it is sent.
    case queued(QueuedWrite)

    /// The HTTP status of the response that failed, if there was one.
    public var statusCode: Int? {
        response?.status
    }

    /// The response that failed, for the cases that come from one.
    public var response: FailureResponse? {
        switch self {
        case .unauthorized(let response, _), .forbidden(let response), .notFound(let response),
            .conflict(let response), .clientError(let response), .serviceUnavailable(let response, _),
            .serverError(let response), .unexpectedStatus(let response):
            return response
        case .invalidRequest, .cannotConnect, .noConnection, .timedOut, .cancelled, .transport,
            .decoding, .queued:
            return nil
        }
    }

    /// The server's own explanation, when its body carried one (`message`, `error`,
    /// `detail`, or an RFC 9457 problem document).
    public var message: String? {
        response?.message
    }
}

/// The parts of a failed HTTP response worth keeping: status, headers, body and the
/// server's message.
public struct FailureResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The response's header fields.
    public var headers: HTTPHeaders
    /// The raw body, for validation errors and other details a caller may decode.
    public var body: Data
    /// The server's message, read from the body when it is JSON with `message`,
    /// `error`, `detail` or `title`, or short plain text.
    public var message: String?

    /// Creates a failure response; `message` is read from `body` unless given.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), message: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.message = message ?? ServerMessage.extract(from: body, headers: headers)
    }
}

/// Where and why a body did not decode.
public struct DecodingFailure: Sendable, Hashable {
    /// The type that was expected, e.g. `Array<Post>`.
    public var type: String
    /// The coding path to the value that failed (`[3].author.id`), or what was being
    /// read (`header X-Total-Count`).
    public var codingPath: String
    /// What went wrong.
    public var description: String

    /// Creates a decoding failure.
    public init(type: String, codingPath: String, description: String) {
        self.type = type
        self.codingPath = codingPath
        self.description = description
    }
}
