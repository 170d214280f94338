import Depot
import Foundation
import JSONServerEngine

/// Where a request is aimed, taken apart the way a server would: the path's decoded
/// segments relative to the backend's base, and the query (the path's own query
/// string first, then the request's items, as ``Depot/URLSessionBackend`` sends them).
struct RequestTarget {
    /// The decoded segments: `["users", "1", "posts"]`. Each was percent-decoded
    /// after splitting on `/`, so an id `a/b?c` sent as `a%2Fb%3Fc` is one segment.
    var segments: [String]
    /// The query items, in order.
    var query: [URLQueryItem]

    /// The path again, each segment percent-encoded: for links and `Location`.
    var encodedPath: String { PathSegment.join(segments) }

    /// Takes `request` apart for a backend at `base`.
    ///
    /// - Returns: `nil` segments (in a `.success`) when the path is on the base's
    ///   origin but outside its base path: that is a 404.
    /// - Throws: ``Depot/ServiceError/invalidRequest(_:)`` for an absolute URL of another
    ///   origin, or one that does not parse.
    static func parse(_ request: BackendRequest, base: BaseLocation) throws(ServiceError) -> RequestTarget? {
        if let segments = request.segments {
            return RequestTarget(segments: segments, query: request.query)
        }
        if PathReference.isPlainRelative(request.path) {
            return RequestTarget(segments: split(Substring(request.path)), query: request.query)
        }
        let reference = PathReference(request.path, scheme: base.scheme)
        let path = reference.path
        let query = QueryString.parse(reference.query) + request.query

        let relative: Substring
        if let absolute = reference.absoluteURL {
            guard let inside = try base.relativePath(ofURL: absolute) else { return nil }
            relative = inside
        } else if path.hasPrefix("/") {
            relative = base.relativePath(String(path)) ?? path.drop { $0 == "/" }
        } else {
            relative = path
        }
        return RequestTarget(segments: split(relative), query: query)
    }

    /// `request` as the request log keeps it: relative to the backend, as the app addresses it.
    /// A path that is an absolute URL under `base` (a `Link` header's next page,
    /// `http://localhost/posts?_page=2`) becomes its path relative to the base (`posts`), and
    /// the query it carried goes before the request's own items in ``Depot/BackendRequest/query``,
    /// as a relative request has them; the rest of the request (method, headers, body, the
    /// resource its maker wrote, its context) is kept. Any other request is kept as it was
    /// sent: a relative or absolute path, or a URL of another origin or outside the base.
    static func logged(_ request: BackendRequest, base: BaseLocation) -> BackendRequest {
        if request.segments != nil || PathReference.isPlainRelative(request.path) { return request }
        let reference = PathReference(request.path, scheme: base.scheme)
        guard let absolute = reference.absoluteURL,
            let relative = try? base.relativePath(ofURL: absolute)
        else { return request }
        return request.readdressed(
            path: String(relative), query: QueryString.parse(reference.query) + request.query)
    }

    /// The decoded segments of a relative path; a trailing `/` is ignored. Each
    /// segment is decoded on its own, after the split.
    private static func split(_ path: Substring) -> [String] {
        var path = path
        return path.withUTF8 { split($0) }
    }

    /// The decoded segments of the bytes of a relative path, as for a `Substring`.
    private static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        var end = bytes.count
        if end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard end > 0 else { return [] }
        // Sized once: a request for one record would otherwise grow the array twice.
        var slashes = 0
        for index in 0..<end where bytes[index] == UInt8(ascii: "/") { slashes += 1 }
        var segments: [String] = []
        segments.reserveCapacity(slashes + 1)
        var start = 0
        var encoded = false
        // Split on the bytes: `/` and `%` are ASCII, so every piece is whole UTF-8.
        for index in 0...end {
            if index == end || bytes[index] == UInt8(ascii: "/") {
                let segment = String(
                    decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                segments.append(encoded ? PathSegment.decode(segment) : segment)
                start = index + 1
                encoded = false
            } else if bytes[index] == UInt8(ascii: "%") {
                encoded = true
            }
        }
        return segments
    }
}

/// The parts of ``InMemoryBackend/baseURL`` that requests are resolved against and
/// links are built from. A class, immutable: every request reads it, and passing one
/// reference costs less than copying its strings.
final class BaseLocation: Sendable {
    /// `http` or `https` (or whatever the base says), lowercased.
    let scheme: String
    /// The base's origin; `nil` when the base URL names no host.
    let identity: Origin?
    /// `scheme://host[:port]`, as the base spells it.
    let origin: String
    /// The base's percent-encoded path, ending in `/`: `/api/`.
    let path: String

    /// The location of `url`.
    init(_ url: URL) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        scheme = (components?.scheme ?? "http").lowercased()
        identity = components.flatMap(Origin.init)
        var origin = scheme + "://" + (components?.percentEncodedHost ?? "localhost")
        if let explicit = components?.port { origin += ":\(explicit)" }
        self.origin = origin
        var basePath = components?.percentEncodedPath ?? "/"
        if !basePath.hasPrefix("/") { basePath = "/" + basePath }
        if !basePath.hasSuffix("/") { basePath += "/" }
        path = basePath
    }

    /// The absolute URL of `relativePath` (already encoded): `http://localhost/posts/1`.
    func url(_ relativePath: String, query: String = "") -> String {
        origin + path + relativePath + (query.isEmpty ? "" : "?" + query)
    }

    /// Whether `components` names this origin.
    func isSameOrigin(_ components: URLComponents) -> Bool {
        identity != nil && Origin(components) == identity
    }

    /// The percent-encoded path of the absolute URL `absolute` relative to the base path:
    /// `posts` for `http://localhost/posts?_page=2`; `nil` when it is on the base's origin
    /// but outside the base path.
    ///
    /// - Throws: ``Depot/ServiceError/invalidRequest(_:)`` for a URL of another origin, or one
    ///   that does not parse.
    func relativePath(ofURL absolute: String) throws(ServiceError) -> Substring? {
        guard let components = URLComponents(string: absolute) else {
            throw .invalidRequest("\(absolute.prefix(200)) is not a valid URL")
        }
        guard isSameOrigin(components) else {
            throw .invalidRequest(
                "\(absolute.prefix(200)) is not on the in-memory backend's origin \(origin)")
        }
        let fullPath = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return relativePath(fullPath)
    }

    /// `absolutePath` made relative to the base path; `nil` when it lies outside.
    func relativePath(_ absolutePath: String) -> Substring? {
        if absolutePath.hasPrefix(path) { return absolutePath.dropFirst(path.count) }
        if absolutePath + "/" == path { return "" }
        return nil
    }
}
