/// Adds default header fields to every request: an `Accept`, a `User-Agent`, an API version.
///
/// A request's own value wins: a default is added only when the request has no field of
/// that name (compared without regard to case). A default with several values (two
/// `Accept` lines, say) is added with all of them.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: url).with(
///     .headers(["Accept": "application/json", "X-Client": "ios/2.3"])
/// )
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
