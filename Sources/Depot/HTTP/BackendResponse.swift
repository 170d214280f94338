import Foundation

/// A response as a ``Backend`` delivers it: status, headers and body.
///
/// A backend hands a response on only when it is a success (2xx, or 304 for a
/// conditional request); every other status arrives as a ``ServiceError``.
public struct BackendResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body; empty when there is none, and when it went to ``file``.
    public var body: Data
    /// The file the body was written to, for a request with a
    /// ``BackendRequest/destination`` (the destination's file, complete); `nil` when the
    /// body is in ``body``. A middleware that builds a new response keeps it.
    public var file: URL?

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), file: URL? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = file
    }
}
