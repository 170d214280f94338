import Foundation

/// GitHub's paging: `page` and `per_page`, answered with the bare array and an
/// RFC 8288 `Link` header; the next page is the `Link` header's `rel="next"` URL,
/// and a page without one is the last.
///
/// Only the `Link` header is read; name a ``totalHeader`` if your server also sends
/// the total (GitLab's `X-Total`).
public struct LinkHeaderPagination: PaginationStyle {
    /// The query parameter for the page number.
    public var pageParameter: String
    /// The query parameter for the page size.
    public var sizeParameter: String
    /// The header that carries the total number of items, if the server sends one.
    public var totalHeader: String?

    /// Creates the style, with other parameter names if your server uses them.
    public init(
        pageParameter: String = "page", sizeParameter: String = "per_page", totalHeader: String? = nil
    ) {
        self.pageParameter = pageParameter
        self.sizeParameter = sizeParameter
        self.totalHeader = totalHeader
    }

    /// `page=number&per_page=size`.
    public func query(page number: Int, size: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: pageParameter, value: String(number)),
            URLQueryItem(name: sizeParameter, value: String(size)),
        ]
    }

    /// Reads the `Link` header (and ``totalHeader``); the body is the items array.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the `Link` or total header
    ///   when it is malformed.
    public func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
        -> PageLayout
    {
        let links = try LinkHeader.links(in: response.headers)
        var total: Int?
        if let totalHeader { total = try PageHeaders.integer(totalHeader, in: response.headers) }
        let next = links[rel: "next"].map { PageAddress.href($0.href) }
        return PageLayout(total: total, hasNext: next != nil, links: links, next: next)
    }
}

extension Pagination {
    /// GitHub's convention: `page` and `per_page`, following the RFC 8288 `Link`
    /// header's `rel="next"` until a page has none.
    ///
    /// `let pagination = Pagination.linkHeader` sends `GET /posts?page=1&per_page=30`,
    /// then whatever URL `Link: <…>; rel="next"` names.
    public static let linkHeader = Pagination(LinkHeaderPagination())

    /// The `Link` header convention with other parameter names, and optionally a
    /// header that carries the total.
    ///
    /// `Pagination.linkHeader(page: "page", perPage: "limit", total: "X-Total")`.
    public static func linkHeader(page: String = "page", perPage: String = "per_page", total: String? = nil)
        -> Pagination
    {
        Pagination(LinkHeaderPagination(pageParameter: page, sizeParameter: perPage, totalHeader: total))
    }
}
