import Foundation

/// Reports every request to a closure the app sets: a ``LogEvent`` when it is sent and one
/// when it ends, numbered, timed on a monotonic clock, with secrets masked (``Redaction``).
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: url).with(
///     .logging { event in print(event) }   // #1 GET users?_page=2 -> 200 (84.1 ms, 2301 B)
/// )
/// ```
///
/// What it masks, and where it goes in the chain: the article *Using Middleware*.
public struct LoggingMiddleware: Middleware {
    private let log: @Sendable (LogEvent) -> Void
    private let redaction: Redaction
    private let counter = Counter()

    /// Creates a logging middleware.
    ///
    /// - Parameters:
    ///   - redaction: the header fields and query items whose values are masked.
    ///   - log: receives each event, on the thread where it happened; keep it quick.
    public init(redacting redaction: Redaction = .default, log: @escaping @Sendable (LogEvent) -> Void) {
        self.log = log
        self.redaction = redaction
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
                query: (pathQuery + request.query).map(redaction.masking),
                headers: redaction.masking(request.headers),
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
                        status: response.status, headers: redaction.masking(response.headers),
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

    /// `error` with the headers of the response it keeps masked.
    private func redact(_ error: ServiceError) -> ServiceError {
        func clean(_ response: FailureResponse) -> FailureResponse {
            var response = response
            response.headers = redaction.masking(response.headers)
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
