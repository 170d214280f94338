import Foundation

/// What a ``CacheMiddleware`` entry is stored under: a `GET`'s full target (path as
/// given, then the query items in order) and the request's `Authorization`, so that a
/// response fetched with one credential is never answered to a request with another.
struct CacheKey: Hashable, Sendable {
    /// The request's path, as given (it may carry its own `?query`).
    let path: String
    /// The query items, in order.
    let query: [URLQueryItem]
    /// Every `Authorization` value the request carries; empty without one.
    let authorization: [String]

    /// The key of a `GET` for the same target as `request` (whatever its method).
    init(_ request: BackendRequest) {
        path = request.path
        query = request.query
        authorization = request.headers.values(for: "Authorization")
    }

    /// The path without its query or fragment and without leading or trailing `/`, for
    /// matching writes to the entries they make stale.
    var resource: Substring {
        Self.resource(of: path)
    }

    /// `path` without its query or fragment and without leading or trailing `/`.
    static func resource(of path: String) -> Substring {
        let end = path.firstIndex { $0 == "?" || $0 == "#" } ?? path.endIndex
        var resource = path[..<end]
        while resource.hasPrefix("/") { resource = resource.dropFirst() }
        while resource.hasSuffix("/") { resource = resource.dropLast() }
        return resource
    }
}

/// A stored `200` answer to a `GET` and what is needed to revalidate it.
struct CacheEntry: Sendable {
    /// The stored response: status 200, its headers, its body.
    var response: BackendResponse
    /// The request's values of each field the response's `Vary` names (lowercased):
    /// a later request is answered from this entry only when it sends the same values.
    let varying: [String: [String]]
    /// Tells entries apart, so that a late `304` does not overwrite a newer `200`.
    let serial: UInt64

    /// The stored `ETag`, sent back as `If-None-Match`.
    var entityTag: String? {
        response.headers["ETag"]
    }

    /// The stored `Last-Modified`, sent back as `If-Modified-Since`.
    var lastModified: String? {
        response.headers["Last-Modified"]
    }

    /// What the entry costs against the byte bound: its body, its header fields and its
    /// path.
    static func cost(of response: BackendResponse, key: CacheKey) -> Int {
        response.body.count + key.path.utf8.count
            + response.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// Whether `request` may be answered from this entry: it sends the same values of
    /// the fields the response varies on.
    func matches(_ request: BackendRequest) -> Bool {
        varying.allSatisfy { name, values in request.headers.values(for: name) == values }
    }

    /// Whether a `304` may refresh this entry (RFC 9111 §4.3.4): it names no entity tag,
    /// or the stored one (compared weakly, RFC 9110 §8.8.3.2). A `304` with another tag
    /// validates some other representation, not the stored body.
    func isValidated(by notModified: BackendResponse) -> Bool {
        guard let tag = notModified.headers["ETag"] else { return true }
        guard let entityTag else { return false }
        return Self.opaqueTag(tag) == Self.opaqueTag(entityTag)
    }

    /// `"v1"` for `W/"v1"` and for `"v1"`.
    private static func opaqueTag(_ tag: String) -> Substring {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : Substring(trimmed)
    }

    /// `request` with this entry's validators added: `If-None-Match` with the `ETag`
    /// and `If-Modified-Since` with the `Last-Modified`, whichever the entry has.
    func revalidating(_ request: BackendRequest) -> BackendRequest {
        var request = request
        if let entityTag { request.headers["If-None-Match"] = entityTag }
        if let lastModified { request.headers["If-Modified-Since"] = lastModified }
        return request
    }

    /// The stored response with its header fields updated from a `304` (RFC 9111
    /// §4.3.4 and §3.2): each field of the `304` replaces the stored ones of that name,
    /// except the body's framing and encoding, which still describe the stored body.
    func refreshed(by notModified: BackendResponse) -> BackendResponse {
        var headers = response.headers
        var update = HTTPHeaders()
        for field in notModified.headers
        where !Self.keptOnUpdate.contains(where: { field.name.caseInsensitiveEquals($0) }) {
            update.add(field.name, field.value)
        }
        headers.merge(update)
        return BackendResponse(status: response.status, headers: headers, body: response.body)
    }

    /// Fields a `304` never replaces: `Content-Length` (RFC 9111 §3.2), the hop-by-hop
    /// fields (§3.1), and `Content-Encoding` (the stored body is already decoded).
    private static let keptOnUpdate = [
        "Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Keep-Alive",
        "Proxy-Connection", "TE", "Upgrade",
    ]
}

/// The storage rules of a validator cache.
enum CachePolicy {
    /// The `Cache-Control` directives in `headers`, lowercased, without arguments.
    static func directives(in headers: HTTPHeaders) -> Set<String> {
        var directives = Set<String>()
        for value in headers.values(for: "Cache-Control") {
            for part in value.split(separator: ",") {
                let name = part.split(separator: "=", maxSplits: 1).first ?? part
                directives.insert(name.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return directives
    }

    /// Whether `request` forbids storing its answer (`Cache-Control: no-store`).
    static func forbidsStoring(_ request: BackendRequest) -> Bool {
        directives(in: request.headers).contains("no-store")
    }

    /// The entry to store for `response` to `request`, or `nil` when it must not or need
    /// not be stored: it is not a `200`, it says `Cache-Control: no-store` or
    /// `Vary: *`, or it has no validator to revalidate it with.
    static func entry(for response: BackendResponse, to request: BackendRequest, serial: UInt64)
        -> CacheEntry?
    {
        guard response.status == 200,
            response.headers.contains("ETag") || response.headers.contains("Last-Modified"),
            !directives(in: response.headers).contains("no-store")
        else { return nil }
        var varying: [String: [String]] = [:]
        for value in response.headers.values(for: "Vary") {
            for part in value.split(separator: ",") {
                let name = part.trimmingCharacters(in: .whitespaces).lowercased()
                if name == "*" { return nil }
                if !name.isEmpty { varying[name] = request.headers.values(for: name) }
            }
        }
        return CacheEntry(response: response, varying: varying, serial: serial)
    }
}
