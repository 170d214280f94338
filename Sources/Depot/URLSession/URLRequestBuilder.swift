import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a ``BackendRequest`` into a `URLRequest` for one base URL: the URL, the
/// headers and their defaults and the body as ``HTTPRequestPreparation`` works them out
/// for every HTTP backend, plus the cache policy and the timeout.
struct URLRequestBuilder: Sendable {
    /// The URL, headers and body, as every HTTP backend works them out.
    let preparation: HTTPRequestPreparation
    let timeout: TimeInterval?

    init(baseURL: URL, headers: HTTPHeaders, timeout: TimeInterval?) {
        self.preparation = HTTPRequestPreparation(baseURL: baseURL, headers: headers)
        self.timeout = timeout
    }

    /// The URL relative paths are resolved against.
    var baseURL: URL { preparation.baseURL }

    /// The absolute URL for `request` (``HTTPRequestPreparation/url(for:)``).
    func url(for request: BackendRequest) throws(ServiceError) -> URL {
        try preparation.url(for: request)
    }

    /// The `URLRequest` to send for `request`.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for what
    ///   ``BackendRequest/validate()`` refuses, an unsafe default header, a base URL
    ///   that is not `http` or `https`, a path on another origin, or a URL that does
    ///   not parse.
    func urlRequest(for request: BackendRequest) throws(ServiceError) -> URLRequest {
        let prepared = try preparation.prepare(request)
        let fields = prepared.headers
        var urlRequest = URLRequest(url: prepared.url)
        // `GET` is a new request's method already (setting it again costs a bridged string).
        if prepared.method != .get { urlRequest.httpMethod = prepared.method.rawValue }
        let list = Array(fields)
        let distinct = list.indices.allSatisfy { index in
            !list[..<index].contains { $0.name.caseInsensitiveEquals(list[index].name) }
        }
        if distinct {
            // The common case: one value per name, set as is.
            for field in list { urlRequest.setValue(field.value, forHTTPHeaderField: field.name) }
        } else {
            for name in fields.names {
                urlRequest.setValue(
                    fields.values(for: name).joined(separator: ", "), forHTTPHeaderField: name)
            }
        }
        if !prepared.body.isEmpty { urlRequest.httpBody = prepared.body }
        // A request with validators (from CacheMiddleware, say) must reach the server and
        // get its 304 back: the URL loading system's own cache would otherwise answer it,
        // or revalidate it itself and hand over its stored copy as a 200. So must one that
        // says `Cache-Control: no-cache` (a replay's read of the server's record).
        if request.isConditional
            || (request.headers.contains("Cache-Control") && CacheControl(request.headers).noCache)
        {
            urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        }
        if let timeout { urlRequest.timeoutInterval = Self.platformTimeout(timeout) }
        return urlRequest
    }

    /// `timeout` as the platform will honour it: FoundationNetworking cuts timeouts to
    /// whole seconds, so there it is rounded up (never below one second).
    static func platformTimeout(_ timeout: TimeInterval) -> TimeInterval {
        #if canImport(FoundationNetworking)
            return max(1, timeout.rounded(.up))
        #else
            return timeout
        #endif
    }
}
