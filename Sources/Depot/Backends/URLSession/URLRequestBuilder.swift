import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a ``BackendRequest`` into a `URLRequest` for one base URL: the URL, the
/// headers and their defaults, the body and the timeout.
struct URLRequestBuilder: Sendable {
    let baseURL: URL
    let headers: HTTPHeaders
    let timeout: TimeInterval?
    /// `baseURL` taken apart once, not on every request; `nil` when it is not an
    /// `http` or `https` URL with a host.
    private let base: BaseURL?
    /// The first of ``headers`` that must not be sent, checked once: every request
    /// fails while there is one.
    private let unsafeDefault: HTTPHeaders.Field?

    init(baseURL: URL, headers: HTTPHeaders, timeout: TimeInterval?) {
        self.baseURL = baseURL
        self.headers = headers
        self.timeout = timeout
        self.base = BaseURL(baseURL)
        self.unsafeDefault = headers.firstUnsafeField
    }

    /// The `URLRequest` to send for `request`.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for what
    ///   ``BackendRequest/validate()`` refuses, an unsafe default header, a base URL
    ///   that is not `http` or `https`, a path on another origin, or a URL that does
    ///   not parse.
    func urlRequest(for request: BackendRequest) throws(ServiceError) -> URLRequest {
        try request.validate()
        if let unsafeDefault { throw BackendRequest.unsafeField(unsafeDefault) }
        let url = try url(for: request)
        // A download takes whatever the resource is; everything else is read as JSON.
        var fields: HTTPHeaders = ["Accept": request.destination == nil ? "application/json" : "*/*"]
        fields.merge(headers)
        fields.merge(request.headers)
        let body = request.body ?? Data()
        if request.bodyMediaType != nil, !fields.contains("Content-Type") {
            fields["Content-Type"] = request.defaultContentType
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
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
        if !body.isEmpty { urlRequest.httpBody = body }
        // A request with validators (from CacheMiddleware, say) must reach the server and
        // get its 304 back: the URL loading system's own cache would otherwise answer it,
        // or revalidate it itself and hand over its stored copy as a 200.
        if request.isConditional { urlRequest.cachePolicy = .reloadIgnoringLocalCacheData }
        if let timeout { urlRequest.timeoutInterval = Self.platformTimeout(timeout) }
        return urlRequest
    }

    /// The absolute URL for `request`: its path resolved against ``baseURL``, then its
    /// query items, encoded per RFC 3986.
    func url(for request: BackendRequest) throws(ServiceError) -> URL {
        guard let base else {
            throw .invalidRequest(
                "the base URL \(baseURL.absoluteString) is not an http or https URL with a host")
        }
        let encoded = QueryEncoding.encode(request.query)
        let target: String
        var query = ""
        if Self.isPlainRelative(request.path) {
            // The common case (`posts/1`): no query, fragment, scheme or leading slash.
            target = base.directory + request.path
            query = encoded
        } else {
            target = try resolvedTarget(request.path, base: base, query: &query)
            if !encoded.isEmpty { query = query.isEmpty ? encoded : query + "&" + encoded }
        }
        let string = query.isEmpty ? target : target + "?" + query
        guard let url = URL(string: string), url.host != nil else {
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
        var reference = Substring(fullPath)
        if let hash = reference.firstIndex(of: "#") { reference = reference[..<hash] }
        var path = reference
        if let mark = reference.firstIndex(of: "?") {
            path = reference[..<mark]
            query = String(reference[reference.index(after: mark)...])
        }
        let target: String
        if path.hasPrefix("//") || Self.hasScheme(path) {
            let absolute = path.hasPrefix("//") ? base.scheme + ":" + path : String(path)
            guard let url = URL(string: absolute), let origin = Origin(url), origin == base.origin else {
                throw .invalidRequest(
                    "\(absolute.prefix(200)) is not on the backend's origin \(base.originPrefix)")
            }
            target = absolute
        } else if path.hasPrefix("/") {
            target = base.originPrefix + path
        } else {
            target = base.directory + path
        }
        return target
    }

    /// Whether `path` is relative with no query, fragment or scheme and no leading `/`
    /// (`posts/1`), so that it only needs appending to the base.
    private static func isPlainRelative(_ path: String) -> Bool {
        guard path.utf8.first != UInt8(ascii: "/") else { return false }
        return !path.utf8.contains { byte in
            byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: ":")
        }
    }

    /// Whether `path` starts with an RFC 3986 scheme (`http:`, `https:`, …).
    private static func hasScheme(_ path: Substring) -> Bool {
        guard let colon = path.firstIndex(of: ":"), let first = path.first, first.isASCII, first.isLetter
        else { return false }
        return path[..<colon].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
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
        guard let origin = Origin(url) else { return nil }
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

/// An RFC 6454 origin: scheme, host and port, compared without regard to case.
struct Origin: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int

    /// The origin of an `http` or `https` URL with a host; `nil` for any other URL.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}

/// Query strings encoded per RFC 3986, stricter than `URLComponents`.
enum QueryEncoding {
    /// `name=value` pairs joined with `&`; a `nil` value gives a bare `name`. Names and
    /// values keep only unreserved characters, so `+`, `&`, `=`, `/`, `?` and spaces
    /// are all percent-encoded and reach the server as they were.
    static func encode(_ items: [URLQueryItem]) -> String {
        items.map { item in
            let name = component(item.name)
            guard let value = item.value else { return name }
            return name + "=" + component(value)
        }
        .joined(separator: "&")
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
