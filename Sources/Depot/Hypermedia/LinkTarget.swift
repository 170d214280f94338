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
        let rootOrigin = root.flatMap(Origin.init)

        if components.scheme == nil, components.host != nil, let rootOrigin {
            components.scheme = rootOrigin.scheme  // `//host/path` takes the root's scheme
        }
        if components.scheme != nil || components.host != nil {
            let origin = Origin(components)
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
    private static func relativePath(_ path: String, under root: URL, origin: Origin) -> String {
        var directory = URLComponents(url: root, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? "/"
        if !directory.hasSuffix("/") { directory += "/" }
        let absolutePath = path.isEmpty ? "/" : path
        if absolutePath == directory || absolutePath + "/" == directory { return "" }
        if absolutePath.hasPrefix(directory) { return String(absolutePath.dropFirst(directory.count)) }
        return origin.description + absolutePath
    }
}
