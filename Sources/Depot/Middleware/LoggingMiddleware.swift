import Foundation

/// Reports every request to a closure the app sets: a ``LogEvent`` when it is sent and one
/// when it ends, numbered, timed on a monotonic clock, with secrets redacted.
///
/// `Authorization`, `Cookie`, `Set-Cookie` and `Proxy-Authorization` are always redacted,
/// in request and response headers alike (names compared without regard to case); add
/// your own (`X-API-Key`) and query items (`api_key`), which are redacted wherever the
/// request carries them: in its query items or in a query inside its path (a server's
/// `Link` URL, say). Depot depends on no logging library:
/// forward the events to swift-log or `os.Logger` in a few lines (see the README).
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: url).with(
///     .logging { event in print(event) }   // #1 GET users?_page=2 -> 200 (84.1 ms, 2301 B)
/// )
/// ```
///
/// Where it sits in the chain decides what it sees: in front of ``RetryMiddleware`` it
/// reports one request per call, whatever the attempts; behind it, every attempt.
/// Behind ``BearerAuthMiddleware`` it sees the `Authorization` field (redacted).
public struct LoggingMiddleware: Middleware {
    /// The fields that are always redacted.
    public static let sensitiveHeaders: Set<String> = [
        "Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization",
    ]

    /// What stands in for a redacted value.
    public static let redacted = "<redacted>"

    private let log: @Sendable (LogEvent) -> Void
    private let redactedHeaders: Set<String>
    private let redactedQueryItems: Set<String>
    private let counter = Counter()

    /// Creates a logging middleware.
    ///
    /// - Parameters:
    ///   - headers: more header names to redact, besides ``sensitiveHeaders``.
    ///   - queryItems: query item names whose values to redact (`api_key`, `token`).
    ///   - log: receives each event, on the thread where it happened; keep it quick.
    public init(
        redactingHeaders headers: Set<String> = [],
        redactingQueryItems queryItems: Set<String> = [],
        log: @escaping @Sendable (LogEvent) -> Void
    ) {
        self.log = log
        self.redactedHeaders = Set(Self.sensitiveHeaders.union(headers).map { $0.lowercased() })
        self.redactedQueryItems = Set(queryItems.map { $0.lowercased() })
    }

    /// Reports `request` as sent, sends it on, and reports how it ended.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        Future { [self] completion in
            let clock = ContinuousClock()
            // Redact the URL as it will be sent: a query carried in the path (a server's
            // `Link`, a custom endpoint) comes first, then the request's own items.
            let (path, pathQuery) = Self.splitQuery(request.path)
            let sent = LogEvent(
                requestNumber: counter.next(),
                method: request.method,
                path: path,
                query: (pathQuery + request.query).map(redact),
                headers: redact(request.headers),
                bodySize: request.bodySize,
                phase: .sent
            )
            log(sent)
            let start = clock.now
            return next(request).run { result in
                var ended = sent
                ended.duration = start.duration(to: clock.now)
                switch result {
                case .success(let response):
                    ended.phase = .succeeded(
                        status: response.status, headers: redact(response.headers),
                        bodySize: response.bodySize)
                case .failure(let error):
                    ended.phase = .failed(redact(error))
                }
                log(ended)
                completion(result)
            }
        }
    }

    /// `path` without a query or fragment it carries, and that query's items.
    private static func splitQuery(_ path: String) -> (path: String, query: [URLQueryItem]) {
        guard path.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else {
            return (path, [])
        }
        return QueryString.split(path)
    }

    private func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(
            headers.fields.map { field in
                redactedHeaders.contains(field.name.lowercased())
                    ? HTTPHeaders.Field(name: field.name, value: Self.redacted) : field
            })
    }

    private func redact(_ item: URLQueryItem) -> URLQueryItem {
        guard item.value != nil, redactedQueryItems.contains(item.name.lowercased()) else { return item }
        return URLQueryItem(name: item.name, value: Self.redacted)
    }

    /// `error` with the headers of the response it keeps redacted.
    private func redact(_ error: ServiceError) -> ServiceError {
        func clean(_ response: FailureResponse) -> FailureResponse {
            var response = response
            response.headers = redact(response.headers)
            return response
        }
        switch error {
        case .unauthorized(let response, let challenges):
            return .unauthorized(clean(response), challenges: challenges)
        case .forbidden(let response): return .forbidden(clean(response))
        case .notFound(let response): return .notFound(clean(response))
        case .conflict(let response): return .conflict(clean(response))
        case .clientError(let response): return .clientError(clean(response))
        case .serviceUnavailable(let response, let retryAfter):
            return .serviceUnavailable(clean(response), retryAfter: retryAfter)
        case .serverError(let response): return .serverError(clean(response))
        case .unexpectedStatus(let response): return .unexpectedStatus(clean(response))
        case .invalidRequest, .cannotConnect, .noConnection, .timedOut, .cancelled, .transport, .decoding,
            .queued:
            return error
        }
    }
}

/// Hands out request numbers 1, 2, 3… to concurrent callers.
private final class Counter: Sendable {
    private let value = Locked(0)

    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
