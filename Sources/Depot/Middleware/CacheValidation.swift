import Foundation

/// A stored `200` answer seen by ``CacheMiddleware``: its validators and how it is
/// revalidated and refreshed.
extension StoredResponse {
    /// The stored `ETag`, sent back as `If-None-Match`.
    var entityTag: String? {
        response.headers["ETag"]
    }

    /// The stored `Last-Modified`, sent back as `If-Modified-Since`.
    var lastModified: String? {
        response.headers["Last-Modified"]
    }

    /// Whether `request` may be answered from this response: it sends the same values of
    /// the fields the response varies on, and the response does not vary on everything
    /// (`Vary: *`, which `.offline(store)` keeps but no cache may reuse).
    func matches(_ request: BackendRequest) -> Bool {
        varying.allSatisfy { name, values in request.headers.values(for: name) == values }
            && CachePolicy.varying(of: response, for: request) != nil
    }

    /// Whether a `304` may refresh this response (RFC 9111 §4.3.4): it names no entity tag,
    /// or the stored one (compared weakly, RFC 9110 §8.8.3.2). A `304` with another tag
    /// validates some other representation, not the stored body.
    func isValidated(by notModified: BackendResponse) -> Bool {
        guard let tag = notModified.headers["ETag"] else { return true }
        guard let entityTag else { return false }
        return Self.opaqueTag(tag) == Self.opaqueTag(entityTag)
    }

    /// `"v1"` for `W/"v1"` and for `"v1"`.
    private static func opaqueTag(_ tag: String) -> Substring {
        let trimmed = tag.trimmingHTTPWhitespace()
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
    }

    /// `request` with this response's validators added: `If-None-Match` with the `ETag`
    /// and `If-Modified-Since` with the `Last-Modified`, whichever it has.
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
package enum CachePolicy {
    /// Whether `request` forbids storing its answer (`Cache-Control: no-store`), or its
    /// answer goes to a file (a download).
    static func forbidsStoring(_ request: BackendRequest) -> Bool {
        // A download's body is a file on disk, not an answer to keep and serve again.
        request.destination != nil || CacheControl(request.headers).noStore
    }

    /// What to store for `response` to `request`, or `nil` when it must not or need not be
    /// stored: it is not a `200`, it says `Cache-Control: no-store` or `Vary: *`, or it has
    /// no validator to revalidate it with.
    static func storable(_ response: BackendResponse, to request: BackendRequest, at date: Date)
        -> StoredResponse?
    {
        guard response.status == 200,
            response.headers.contains("ETag") || response.headers.contains("Last-Modified"),
            !CacheControl(response.headers).noStore,
            let varying = varying(of: response, for: request)
        else { return nil }
        return StoredResponse(response, storedAt: date, varying: varying)
    }

    /// The values `request` sends of each field `response`'s `Vary` names (lowercased
    /// names), to be sent alike by a later request the response answers; `nil` for
    /// `Vary: *`, which no later request matches (RFC 9111 §4.1).
    package static func varying(of response: BackendResponse, for request: BackendRequest) -> [String:
        [String]]?
    {
        var varying: [String: [String]] = [:]
        for value in response.headers.values(for: "Vary") {
            for part in value.split(separator: ",") {
                let name = part.trimmingHTTPWhitespace().lowercased()
                if name == "*" { return nil }
                if !name.isEmpty { varying[name] = request.headers.values(for: name) }
            }
        }
        return varying
    }
}
