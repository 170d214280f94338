import Foundation

/// Where a link's `href` leads, as the path and query of a ``BackendRequest``.
///
/// - A relative href (`movies/1`) is a path relative to the backend's base.
/// - An absolute-path href (`/movies/1`) is resolved against the API's root URL: under
///   the root it becomes a path relative to it (`https://h/api/` + `/api/movies/1` →
///   `movies/1`), elsewhere on the same origin an absolute URL. With no root known it
///   loses its leading `/` and counts as relative to the backend's base.
/// - An absolute URL (`https://h/api/movies/1`, or `//h/api/movies/1`) of the root's
///   origin is treated the same way; one of any other origin is refused with
///   ``ServiceError/invalidRequest(_:)`` unless foreign origins are allowed, and is
///   then sent as the absolute URL.
struct LinkTarget: Equatable {
    var path: String
    var query: [URLQueryItem]

    /// Expands the href's template with `values` and places the result.
    static func resolve(
        _ link: Link, values: [String: JSONValue], root: URL?, allowsForeignOrigins: Bool
    ) throws(ServiceError) -> LinkTarget {
        var href = link.href
        if link.templated || href.contains("{") {
            href = try URITemplate(href).expand(values.compactMapValues(URITemplate.Value.init))
        }
        guard var components = URLComponents(string: href) else {
            throw .invalidRequest("the \"\(link.rel)\" link has an invalid href: \(href.prefix(200))")
        }
        let query = components.queryItems ?? []
        components.query = nil
        components.fragment = nil
        let rootOrigin = root.flatMap(LinkOrigin.init)

        if components.scheme == nil, components.host != nil, let rootOrigin {
            components.scheme = rootOrigin.scheme  // `//host/path` takes the root's scheme
        }
        if components.scheme != nil || components.host != nil {
            let origin = LinkOrigin(components)
            if let origin, origin == rootOrigin, let root {
                return LinkTarget(
                    path: relativePath(components.percentEncodedPath, under: root, origin: origin),
                    query: query)
            }
            guard allowsForeignOrigins else {
                let expected =
                    rootOrigin.map { "the API's origin \($0)" } ?? "a known origin (give the API's root URL)"
                let target = origin?.description ?? String(href.prefix(200))
                throw .invalidRequest(
                    "the \"\(link.rel)\" link leads to \(target), not \(expected); "
                        + "allow foreign origins to follow it")
            }
            return LinkTarget(path: components.string ?? href, query: query)
        }

        let path = components.percentEncodedPath
        if path.hasPrefix("/") {
            guard let root, let rootOrigin else {
                return LinkTarget(path: String(path.dropFirst()), query: query)
            }
            return LinkTarget(path: relativePath(path, under: root, origin: rootOrigin), query: query)
        }
        return LinkTarget(path: path, query: query)
    }

    /// `path` relative to the root's directory when it lies under it, else the
    /// absolute URL of `path` on the root's origin.
    private static func relativePath(_ path: String, under root: URL, origin: LinkOrigin) -> String {
        var directory = URLComponents(url: root, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? "/"
        if !directory.hasSuffix("/") { directory += "/" }
        let absolutePath = path.isEmpty ? "/" : path
        if absolutePath == directory || absolutePath + "/" == directory { return "" }
        if absolutePath.hasPrefix(directory) { return String(absolutePath.dropFirst(directory.count)) }
        return origin.description + absolutePath
    }
}

/// An RFC 6454 origin: scheme, host and port, compared without regard to case and
/// with default ports filled in.
struct LinkOrigin: Hashable, CustomStringConvertible {
    var scheme: String
    var host: String
    var port: Int?

    init?(_ url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        self.init(components)
    }

    init?(_ components: URLComponents) {
        guard let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased() else {
            return nil
        }
        self.scheme = scheme
        self.host = host
        let defaultPort = ["http": 80, "https": 443][scheme]
        port = components.port == defaultPort ? nil : components.port
    }

    var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host  // IPv6 literal
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }
}
