import Foundation

/// A response as a ``Backend`` delivers it: status, headers and body.
///
/// A backend hands a response on only when it is a success (2xx, or 304 for a
/// conditional request); every other status arrives as a ``ServiceError``.
public struct BackendResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders {
        get { fields.headers }
        set { fields = .given(newValue) }
    }
    /// The body; empty when there is none, and when it went to ``file``.
    public var body: Data
    /// The file the body was written to, for a request with a
    /// ``BackendRequest/destination`` (the destination's file, complete); `nil` when the
    /// body is in ``body``. A middleware that builds a new response keeps it.
    public var file: URL?
    /// The header fields, or how to read them.
    private var fields: ResponseFields

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), file: URL? = nil) {
        self.status = status
        self.fields = .given(headers)
        self.body = body
        self.file = file
    }

    /// A response whose header fields `read` makes the first time they are asked for: a
    /// backend whose client keeps them in a form of its own (`URLSession`'s untyped
    /// dictionary) converts them only for a caller that looks, and a `findByID` that reads the
    /// body alone does not pay for it.
    init(status: Int, body: Data, readingHeaders read: @escaping @Sendable () -> HTTPHeaders) {
        self.status = status
        self.fields = .deferred(Locked(.pending(HeaderReader(read: read))))
        self.body = body
        self.file = nil
    }

    /// Responses are equal when their status, headers (as ``HTTPHeaders`` compares them),
    /// body and file are.
    public static func == (lhs: BackendResponse, rhs: BackendResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.file == rhs.file && lhs.headers == rhs.headers
    }

    /// Hashes the response consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(file)
    }
}

/// The header fields of a ``BackendResponse``: as given, or read once, on first use, by a
/// reader that copies share (under a lock, since copies may be read on several threads).
private enum ResponseFields: Sendable {
    case given(HTTPHeaders)
    case deferred(Locked<DeferredFields>)

    var headers: HTTPHeaders {
        switch self {
        case .given(let headers):
            return headers
        case .deferred(let fields):
            return fields.withLock { fields in
                switch fields {
                case .read(let headers):
                    return headers
                case .pending(let reader):
                    let headers = reader.read()
                    fields = .read(headers)
                    return headers
                }
            }
        }
    }
}

/// The state of fields read on first use: the reader until then (let go once it ran), the
/// fields after.
private enum DeferredFields {
    case pending(HeaderReader)
    case read(HTTPHeaders)
}

/// The closure that reads a response's fields, in a named field (see ``LockedStorage``: a
/// closure kept directly as a lock's state is reabstracted on every read).
private struct HeaderReader {
    let read: @Sendable () -> HTTPHeaders
}
