import Foundation

/// What every HTTP backend sends for a ``BackendRequest``, worked out once for one base
/// URL and its default headers: the absolute URL, the method, the header fields and the
/// body. ``URLSessionBackend`` builds its `URLRequest` from it, and so should a backend on
/// another HTTP client, so that a request goes out (or is refused) the same way on both.
///
/// ```swift
/// let preparation = HTTPRequestPreparation(baseURL: api, headers: ["X-Client": "1"])
/// let prepared = try preparation.prepare(BackendRequest(path: "posts/1"))
/// ```
///
/// How it resolves paths, fills in fields, and what it refuses: the article *Writing a Backend*.
@_spi(BackendSupport)
public struct HTTPRequestPreparation: Sendable {
    /// The URL relative paths are resolved against.
    public let baseURL: URL
    /// The header fields sent with every request, unless the request sets the same name.
    public let headers: HTTPHeaders
    /// `baseURL` taken apart once, not on every request; `nil` when it is not an
    /// `http` or `https` URL with a host.
    private let base: BaseURL?
    /// The first of ``headers`` that must not be sent, checked once: every request
    /// fails while there is one.
    private let unsafeDefault: HTTPHeaders.Field?

    /// A preparation for requests to `baseURL` carrying `headers` by default.
    public init(baseURL: URL, headers: HTTPHeaders = [:]) {
        self.baseURL = baseURL
        self.headers = headers
        self.base = BaseURL(baseURL)
        self.unsafeDefault = headers.firstUnsafeField
    }

    /// The request to send for `request`: checked, resolved and with its defaults.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for what
    ///   ``BackendRequest/validate()`` refuses, an unsafe default header, a base URL
    ///   that is not `http` or `https`, a path on another origin, or a URL that does not
    ///   parse.
    public func prepare(_ request: BackendRequest) throws(ServiceError) -> PreparedHTTPRequest {
        try request.validate()
        if let unsafeDefault { throw BackendRequest.unsafeField(unsafeDefault) }
        let url = try url(for: request)
        // A download takes whatever the resource is; everything else is read as JSON.
        var fields: HTTPHeaders = ["Accept": request.destination == nil ? "application/json" : "*/*"]
        fields.merge(headers)
        fields.merge(request.headers)
        if request.bodyMediaType != nil, !fields.contains("Content-Type") {
            fields["Content-Type"] = request.defaultContentType
        }
        return PreparedHTTPRequest(
            url: url, method: request.method, headers: fields, body: request.body ?? Data(),
            bodyFile: request.bodyFile)
    }

    /// The absolute URL for `request`: its path resolved against ``baseURL``, then its
    /// query items, encoded per RFC 3986 (everything but unreserved characters is
    /// percent-encoded).
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for a base URL that is not `http` or
    ///   `https` with a host, an absolute path on another origin, or a URL that does not
    ///   parse.
    public func url(for request: BackendRequest) throws(ServiceError) -> URL {
        guard let base else {
            throw .invalidRequest(
                "the base URL \(baseURL.absoluteString) is not an http or https URL with a host")
        }
        let encoded = QueryString.encode(request.query)
        let target: String
        var query = ""
        // The common case (`posts/1`): no query, fragment, scheme or leading slash, so the URL
        // keeps the base's host, which need not be read back.
        let plain = PathReference.isPlainRelative(request.path)
        if plain {
            target = base.directory + request.path
            query = encoded
        } else {
            target = try resolvedTarget(request.path, base: base, query: &query)
            if !encoded.isEmpty { query = query.isEmpty ? encoded : query + "&" + encoded }
        }
        let string = query.isEmpty ? target : target + "?" + query
        guard let url = URL(string: string), plain || url.host != nil else {
            // The query stays out of the message: it may carry a token.
            throw .invalidRequest("\(QueryString.withoutQuery(string).prefix(200)) is not a valid URL")
        }
        return url
    }

    /// The URL, without a query, of a path that is not plain relative; the query string
    /// the path itself carried goes to `query`.
    private func resolvedTarget(_ fullPath: String, base: BaseURL, query: inout String) throws(ServiceError)
        -> String
    {
        let reference = PathReference(fullPath, scheme: base.scheme)
        query = String(reference.query)
        if let absolute = reference.absoluteURL {
            guard let url = URL(string: absolute), let origin = Origin(url), origin == base.origin else {
                throw .invalidRequest(
                    "\(absolute.prefix(200)) is not on the backend's origin \(base.originPrefix)")
            }
            return absolute
        }
        return reference.path.hasPrefix("/")
            ? base.originPrefix + reference.path : base.directory + reference.path
    }
}

/// A request as it goes out on the wire, made by ``HTTPRequestPreparation/prepare(_:)``:
/// an absolute URL, a method, every header field (defaults included) and the body.
@_spi(BackendSupport)
public struct PreparedHTTPRequest: Sendable, Equatable {
    /// The absolute `http` or `https` URL, query included.
    public var url: URL
    /// The method.
    public var method: HTTPMethod
    /// Every header field to send, in order; a name may repeat (send each value, or
    /// join them with `, `).
    public var headers: HTTPHeaders
    /// The body in memory; empty for none.
    public var body: Data
    /// The file to stream the body from instead (``BackendRequest/bodyFile``), or `nil`.
    public var bodyFile: URL?

    /// A request with these parts.
    public init(url: URL, method: HTTPMethod, headers: HTTPHeaders, body: Data = Data(), bodyFile: URL? = nil)
    {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.bodyFile = bodyFile
    }
}

/// The parts of a base URL that paths are resolved against.
struct BaseURL: Sendable {
    /// `http` or `https`, lowercased.
    let scheme: String
    /// Everything before the path: `https://api.example.com:8443`.
    let originPrefix: String
    /// The origin prefix and the base path, ending in `/`: `https://h/api/v1/`.
    let directory: String
    /// The base URL's origin.
    let origin: Origin

    /// Reads `url`, or returns `nil` when it is not an `http` / `https` URL with a host.
    init?(_ url: URL) {
        guard let origin = Origin(url), origin.isHTTP else { return nil }
        let absolute = url.absoluteString
        guard let separator = absolute.range(of: "://") else { return nil }
        let afterScheme = absolute[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? absolute.endIndex
        let rest = absolute[authorityEnd...]
        let basePath = rest.prefix { $0 != "?" && $0 != "#" }
        self.scheme = origin.scheme
        self.origin = origin
        self.originPrefix = String(absolute[..<authorityEnd])
        self.directory = originPrefix + basePath + (basePath.hasSuffix("/") ? "" : "/")
    }
}
