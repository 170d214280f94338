import Foundation

/// json-server 0.17's paging: `_page` and `_limit`, answered with the bare array,
/// `X-Total-Count` and a `Link` header with `first`, `prev`, `next` and `last`.
///
/// The next page is the `Link` header's `next` URL when there is one, else the next
/// page number while `X-Total-Count` says there are more.
public struct JSONServerPagination: PaginationStyle {
    /// The query parameter for the page number.
    public var pageParameter: String
    /// The query parameter for the page size.
    public var sizeParameter: String

    /// Creates the style, with other parameter names if your server renamed them.
    public init(pageParameter: String = "_page", sizeParameter: String = "_limit") {
        self.pageParameter = pageParameter
        self.sizeParameter = sizeParameter
    }

    /// `_page=number&_limit=size`.
    public func query(page number: Int, size: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: pageParameter, value: String(number)),
            URLQueryItem(name: sizeParameter, value: String(size)),
        ]
    }

    /// Reads `X-Total-Count` and `Link`; the body is the items array.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming `X-Total-Count` or `Link` when
    ///   it is malformed.
    public func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
        -> PageLayout
    {
        let total = try PageHeaders.integer("X-Total-Count", in: response.headers)
        let links = try LinkHeader.links(in: response.headers)
        let nextLink = links[rel: "next"]
        let hasNext: Bool? =
            total.map { PageLayout.hasMore(total: $0, page: number, size: size) }
            ?? (links.isEmpty ? nil : nextLink != nil)
        let next: PageAddress? =
            hasNext == true ? nextLink.map { .href($0.href) } ?? PageAddress.page(after: number) : nil
        return PageLayout(total: total, hasNext: hasNext, links: links, next: next)
    }
}

extension Pagination {
    /// json-server 0.17's convention (the default): `_page` and `_limit`, answered
    /// with `X-Total-Count` and an RFC 8288 `Link` header.
    ///
    /// `let pagination = Pagination.jsonServer` sends `GET /posts?_page=2&_limit=10`.
    public static let jsonServer = Pagination(JSONServerPagination())

    /// json-server's convention with other parameter names.
    ///
    /// `Pagination.jsonServer(page: "p", limit: "n")` sends `?p=2&n=10`.
    public static func jsonServer(page: String = "_page", limit: String = "_limit") -> Pagination {
        Pagination(JSONServerPagination(pageParameter: page, sizeParameter: limit))
    }
}
