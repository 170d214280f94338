import Foundation

/// What ``LoggingMiddleware`` reports: one event when a request is sent, one when it ends.
///
/// Secrets are already redacted: `Authorization`, `Cookie`, `Set-Cookie` and
/// `Proxy-Authorization` (and any field or query item the middleware was told to hide)
/// read `<redacted>`, in the request's headers, the response's, and those kept in a
/// ``ServiceError``. Bodies are never included, only their sizes.
///
/// ``description`` is a one-line summary (`#3 GET users/1 -> 200 (12.4 ms, 512 B)`),
/// ``level`` a suggested severity and ``metadata`` the fields as strings, which is all a
/// logging library needs.
public struct LogEvent: Sendable, Hashable, CustomStringConvertible {
    /// Where the request is.
    public enum Phase: Sendable, Hashable {
        /// The request is being sent.
        case sent
        /// The request succeeded with this status; `headers` are the response's, and
        /// `bodySize` counts its body (a download's file).
        case succeeded(status: Int, headers: HTTPHeaders, bodySize: Int)
        /// The request failed.
        case failed(ServiceError)
    }

    /// A suggested severity, to map onto a logging library's levels.
    public enum Level: Int, Sendable, Hashable, Comparable {
        /// A request is being sent.
        case debug
        /// A request succeeded, or was cancelled by the caller.
        case info
        /// The server refused a request (4xx).
        case warning
        /// The server or the transport failed (5xx, timeouts, unreachable hosts), or the
        /// body did not decode.
        case error

        /// Orders levels by severity.
        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.rawValue < rhs.rawValue
        }
    }

    /// The request's number, counting from 1 for each ``LoggingMiddleware``; the two
    /// events of one request share it.
    public var requestNumber: Int
    /// The request's method.
    public var method: HTTPMethod
    /// The request's path, relative to the backend's base (or absolute), without the
    /// query a path may carry: that is in ``query``.
    public var path: String
    /// The request's query items, redacted: those of a query inside its path first,
    /// then its own, as the URL sent carries them.
    public var query: [URLQueryItem]
    /// The request's header fields as they left this middleware, redacted.
    public var headers: HTTPHeaders
    /// The size of the request body in bytes (a body file's size for an upload).
    public var bodySize: Int
    /// Sent, succeeded or failed.
    public var phase: Phase
    /// The time from sending to the end, on a monotonic clock; `nil` for ``Phase/sent``.
    public var duration: Duration?

    /// Creates an event.
    public init(
        requestNumber: Int,
        method: HTTPMethod,
        path: String,
        query: [URLQueryItem] = [],
        headers: HTTPHeaders = [:],
        bodySize: Int = 0,
        phase: Phase,
        duration: Duration? = nil
    ) {
        self.requestNumber = requestNumber
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.bodySize = bodySize
        self.phase = phase
        self.duration = duration
    }

    /// The response's status: the success's, or the failed response's; `nil` while sent
    /// or after a failure without a response.
    public var status: Int? {
        switch phase {
        case .sent: return nil
        case .succeeded(let status, _, _): return status
        case .failed(let error): return error.statusCode
        }
    }

    /// The failure, for ``Phase/failed(_:)``.
    public var error: ServiceError? {
        guard case .failed(let error) = phase else { return nil }
        return error
    }

    /// The path with its query, as the request line shows it (`users?_page=2&q=a%20b`);
    /// a redacted value shows as `<redacted>`.
    public var target: String {
        guard !query.isEmpty else { return path }
        let items = query.map { item in
            let name = Self.encode(item.name)
            guard let value = item.value else { return name }
            return name + "=" + (value == Redaction.mask ? value : Self.encode(value))
        }
        return path + "?" + items.joined(separator: "&")
    }

    /// A suggested severity: debug when sent, info on success or cancellation, warning
    /// for a 4xx, error for everything else.
    public var level: Level {
        switch phase {
        case .sent: return .debug
        case .succeeded: return .info
        case .failed(.cancelled): return .info
        case .failed(let error):
            if let status = error.statusCode, (400..<500).contains(status) { return .warning }
            return .error
        }
    }

    /// One line: `#3 GET users/1 -> 200 (12.4 ms, 512 B)`, `#3 GET users/1 failed: …`.
    public var description: String {
        let request = "#\(requestNumber) \(method.rawValue) \(target)"
        let elapsed = duration.map(Self.milliseconds).map { String(format: "%.1f ms", $0) } ?? ""
        switch phase {
        case .sent:
            return bodySize > 0 ? "\(request) (\(bodySize) B)" : request
        case .succeeded(let status, _, let size):
            return "\(request) -> \(status) (\(elapsed), \(size) B)"
        case .failed(let error):
            return "\(request) failed (\(elapsed)): \(error.description)"
        }
    }

    /// The event as flat string fields, for structured logging (swift-log metadata, say):
    /// `request`, `method`, `path`, `query`, `phase`, and when known `status`,
    /// `duration_ms`, `error`, and `request_header.<name>` for each request field.
    public var metadata: [String: String] {
        var fields = [
            "request": String(requestNumber), "method": method.rawValue, "path": path,
        ]
        if !query.isEmpty { fields["query"] = String(target.dropFirst(path.count + 1)) }
        for name in headers.names {
            fields["request_header.\(name.lowercased())"] = headers.values(for: name).joined(separator: ", ")
        }
        switch phase {
        case .sent: fields["phase"] = "sent"
        case .succeeded: fields["phase"] = "succeeded"
        case .failed(let error):
            fields["phase"] = "failed"
            fields["error"] = error.description
        }
        if let status { fields["status"] = String(status) }
        if let duration { fields["duration_ms"] = String(format: "%.3f", Self.milliseconds(duration)) }
        return fields
    }

    /// Characters a query name or value keeps as they are.
    private static let queryValueAllowed = CharacterSet.urlQueryAllowed.subtracting(
        CharacterSet(charactersIn: "&=+#"))

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: queryValueAllowed) ?? text
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
