/// Adds default header fields to every request (an `Accept`, a `User-Agent`, an API version)
/// that the request does not set itself: the article *Using Middleware*.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: url).with(.headers(["X-Client": "ios/2.3"]))
/// ```
public struct HeadersMiddleware: Middleware {
    /// The fields added to requests that lack them.
    public var headers: HTTPHeaders

    /// Creates a middleware that adds `headers` to every request that lacks them.
    public init(_ headers: HTTPHeaders) {
        self.headers = headers
    }

    /// Sends `request` on with each default field it does not already carry.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        next(applied(to: request))
    }

    /// `request` with the defaults it lacks added after its own fields.
    func applied(to request: BackendRequest) -> BackendRequest {
        var request = request
        let own = request.headers
        for field in headers where !own.contains(field.name) {
            request.headers.add(field.name, field.value)
        }
        return request
    }
}
