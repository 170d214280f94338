/// A step between a repository and a backend that can change the request, send it
/// again, or change the outcome: authentication, retry, logging, caching.
///
/// ```swift
/// struct APIVersion: Middleware {
///     func intercept(
///         _ request: BackendRequest,
///         next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
///     ) -> Future<BackendResponse, ServiceError> {
///         var request = request
///         request.headers["API-Version"] = "2"
///         return next(request)
///     }
/// }
///
/// let backend = URLSessionBackend(baseURL: url).with(APIVersion(), RetryMiddleware())
/// ```
public protocol Middleware: Sendable {
    /// Handles `request`, usually by calling `next` (the rest of the chain) once or
    /// more, and returns the outcome.
    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError>
}

extension Backend {
    /// This backend behind `middleware`; the first one listed sees the request first
    /// and the outcome last.
    ///
    /// ```swift
    /// let backend = InMemoryBackend().with(HeadersMiddleware(["X-Client": "demo"]), logging)
    /// ```
    public func with(_ middleware: any Middleware...) -> any Backend {
        with(middleware)
    }

    /// This backend behind each of `middleware`, the first outermost.
    public func with(_ middleware: [any Middleware]) -> any Backend {
        middleware.reversed().reduce(self as any Backend) { inner, step in
            MiddlewareBackend(middleware: step, next: inner)
        }
    }
}

/// A backend that runs one middleware in front of another backend.
struct MiddlewareBackend: Backend {
    let middleware: any Middleware
    let next: any Backend

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        middleware.intercept(request, next: next.send)
    }
}
