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
        _modify {
            // Changed in place: the fields are taken out while they change, so that `fields`
            // holds no second reference to their array, which would make the change copy it.
            var headers = fields.headers
            fields = .given([:])
            defer { fields = .given(headers) }
            yield &headers
        }
    }
    /// The body; empty when there is none, and when it went to ``file``.
    public var body: Data
    /// The file the body was written to, for a request with a
    /// ``BackendRequest/destination`` (the destination's file, complete); `nil` when the
    /// body is in ``body``. A middleware that builds a new response keeps it.
    public var file: URL?
    /// The header fields, or how to read them.
    private(set) var fields: ResponseFields

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
    ///
    /// `read` runs once, on the thread that first reads the fields of this response or of a
    /// copy, maybe long after the response arrived, and under a lock that the copies share: it
    /// must not read them itself.
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

extension BackendResponse: CustomReflectable {
    /// The response's fields, as `print`, `dump` and a debugger show a struct's, with the header
    /// fields read: how they are kept would show instead.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["status": status, "headers": headers, "body": body, "file": file as Any],
            displayStyle: .struct)
    }
}

/// The header fields of a ``BackendResponse``: as given, or read once, on first use, by a
/// reader that copies share (under a lock, since copies may be read on several threads).
enum ResponseFields: Sendable {
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
enum DeferredFields: Sendable {
    case pending(HeaderReader)
    case read(HTTPHeaders)
}

/// The closure that reads a response's fields, in a named field (see ``LockedStorage``: a
/// closure kept directly as a lock's state is reabstracted on every read).
struct HeaderReader: Sendable {
    let read: @Sendable () -> HTTPHeaders
}
