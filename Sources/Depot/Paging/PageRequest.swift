import Foundation

/// The request for one page: the collection with the caller's query and the
/// style's parameters, or the server's own URL for an href.
enum PageRequest {
    /// The `GET` for the page at `address` of `collection`.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for an empty path segment or an
    ///   address the style cannot ask for.
    static func make(
        _ address: PageAddress, collection: RequestResource, size: Int, query: Query,
        style: any PaginationStyle
    ) throws(ServiceError) -> BackendRequest {
        if case .href(let href) = address {
            guard !href.isEmpty else { throw .invalidRequest("the server sent an empty next page URL") }
            let (path, items) = QueryString.split(href)
            // The server's URL for a page of the same collection.
            return BackendRequest(method: .get, path: path, query: items, addressing: collection)
        }
        try PathSegment.checkNoneEmpty(collection.segments)
        let items = query.items + (try style.query(for: address, size: size))
        return BackendRequest(method: .get, resource: collection, query: items)
    }

    /// `href` resolved against the page request it came with (RFC 8288 §3.2, RFC 3986
    /// §5): a relative reference such as `?page=2` or `posts?page=2` becomes a path
    /// relative to the backend's base, as the backends expect; an absolute URL or an
    /// absolute path is kept as it is.
    static func resolve(_ href: String, from request: BackendRequest) -> String {
        guard !href.isEmpty, !href.hasPrefix("/"), !PageAddress.isLink(href), !href.contains("://") else {
            return href
        }
        let isAbsolute = request.path.contains("://") || request.path.hasPrefix("/")
        let placeholder = "http://depot.invalid/"
        guard
            let base = URL(string: isAbsolute ? request.path : placeholder + request.path),
            let resolved = URL(string: href, relativeTo: base)?.absoluteString
        else { return href }
        return resolved.hasPrefix(placeholder) ? String(resolved.dropFirst(placeholder.count)) : resolved
    }
}
