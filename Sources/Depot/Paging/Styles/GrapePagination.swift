import Foundation

/// The paging of Ruby's Grape APIs (grape-kaminari, api-pagination) that Jayme read:
/// `page` and `per_page`, answered with the bare array and the headers `X-Total`,
/// `X-Total-Pages`, `X-Per-Page`, `X-Page`, `X-Next-Page` and `X-Prev-Page`.
///
/// The next page is the number in `X-Next-Page`; an empty `X-Next-Page` marks the
/// last page. Without that header, `X-Total` decides.
public struct GrapePagination: PaginationStyle {
    /// The query parameter for the page number.
    public var pageParameter: String
    /// The query parameter for the page size.
    public var sizeParameter: String
    /// The header with the total number of items.
    public var totalHeader: String
    /// The header with the next page's number, empty on the last page.
    public var nextPageHeader: String

    /// Creates the style, with other parameter or header names if your server uses them.
    public init(
        pageParameter: String = "page", sizeParameter: String = "per_page", totalHeader: String = "X-Total",
        nextPageHeader: String = "X-Next-Page"
    ) {
        self.pageParameter = pageParameter
        self.sizeParameter = sizeParameter
        self.totalHeader = totalHeader
        self.nextPageHeader = nextPageHeader
    }

    /// `page=number&per_page=size`.
    public func query(page number: Int, size: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: pageParameter, value: String(number)),
            URLQueryItem(name: sizeParameter, value: String(size)),
        ]
    }

    /// Reads ``totalHeader`` and ``nextPageHeader`` (and a `Link` header if there is
    /// one); the body is the items array.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the header that is not a
    ///   non-negative integer (or a malformed `Link`).
    public func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
        -> PageLayout
    {
        let total = try PageHeaders.integer(totalHeader, in: response.headers)
        let links = try LinkHeader.links(in: response.headers)
        let next: PageAddress?
        if let text = response.headers[nextPageHeader] {
            let isLast = text.trimmingCharacters(in: .whitespaces).isEmpty
            if isLast {
                next = nil
            } else {
                let page = try PageHeaders.integer(nextPageHeader, in: response.headers)
                guard let page, page >= 1 else {
                    throw .decoding(
                        DecodingFailure(
                            type: "Int", codingPath: "header \(nextPageHeader)",
                            description: "expected a page number from 1, got \"\(text.prefix(100))\""))
                }
                next = .number(page)
            }
        } else if let total {
            next =
                PageLayout.hasMore(total: total, page: number, size: size)
                ? PageAddress.page(after: number) : nil
        } else {
            return PageLayout(links: links)
        }
        return PageLayout(total: total, hasNext: next != nil, links: links, next: next)
    }
}

extension Pagination {
    /// Grape's convention (Jayme's): `page` and `per_page`, answered with `X-Total`,
    /// `X-Per-Page`, `X-Page` and `X-Next-Page` (empty on the last page).
    ///
    /// `let pagination = Pagination.grape` sends `GET /posts?page=2&per_page=25`.
    public static let grape = Pagination(GrapePagination())

    /// Grape's convention with other parameter or header names.
    ///
    /// `Pagination.grape(page: "p", perPage: "size", total: "X-Total-Count")`.
    public static func grape(
        page: String = "page", perPage: String = "per_page", total: String = "X-Total",
        nextPage: String = "X-Next-Page"
    ) -> Pagination {
        Pagination(
            GrapePagination(
                pageParameter: page, sizeParameter: perPage, totalHeader: total, nextPageHeader: nextPage))
    }
}
