import Foundation

/// Paging with an envelope body: the items under one key path, the total and the next page
/// under others, as Django REST framework (`{count, next, previous, results}`) and json-server
/// 1.x answer. How it reads `next` and the total: the article *Paging Through Listings*.
public struct EnvelopePagination: PaginationStyle {
    /// The query parameter for the page number.
    public var pageParameter: String
    /// The query parameter for the page size.
    public var sizeParameter: String
    /// The key path of the items array (`["results"]`).
    public var itemsPath: [String]
    /// The key path of the total number of items, if the envelope has one (`["count"]`).
    public var totalPath: [String]?
    /// The key path of the next page's URL or number, if the envelope has one (`["next"]`).
    public var nextPath: [String]?
    /// The key path of the previous page's URL or number, if the envelope has one.
    public var previousPath: [String]?
    /// The key path of the last page's number, for servers that answer a page past
    /// the end with the last page (json-server 1.x's `["last"]`).
    public var lastPagePath: [String]?
    /// Whether a `404` for a page after the first means the page is past the end
    /// (Django REST framework's `Invalid page.`), read as an empty last page.
    public var notFoundIsPastTheEnd: Bool

    /// Creates the style; the defaults are Django REST framework's `PageNumberPagination`.
    public init(
        pageParameter: String = "page", sizeParameter: String = "page_size",
        itemsPath: [String] = ["results"],
        totalPath: [String]? = ["count"], nextPath: [String]? = ["next"],
        previousPath: [String]? = ["previous"],
        lastPagePath: [String]? = nil, notFoundIsPastTheEnd: Bool = true
    ) {
        self.pageParameter = pageParameter
        self.sizeParameter = sizeParameter
        self.itemsPath = itemsPath
        self.totalPath = totalPath
        self.nextPath = nextPath
        self.previousPath = previousPath
        self.lastPagePath = lastPagePath
        self.notFoundIsPastTheEnd = notFoundIsPastTheEnd
    }

    /// Django REST framework's `PageNumberPagination`: `page` and `page_size`,
    /// `{count, next, previous, results}`, `404` past the end.
    public static let djangoREST = EnvelopePagination()

    /// json-server 1.x: `_page` and `_per_page`, `{first, prev, next, last, pages,
    /// items, data}` with page numbers, the last page repeated past the end.
    public static let jsonServerV1 = EnvelopePagination(
        pageParameter: "_page", sizeParameter: "_per_page", itemsPath: ["data"], totalPath: ["items"],
        nextPath: ["next"], previousPath: ["prev"], lastPagePath: ["last"], notFoundIsPastTheEnd: false)

    /// `page=number&page_size=size`, with this style's parameter names.
    public func query(page number: Int, size: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: pageParameter, value: String(number)),
            URLQueryItem(name: sizeParameter, value: String(size)),
        ]
    }

    /// Reads the total, the next and previous pages and the last page number from
    /// the envelope; the items stay for the repository to decode at ``itemsPath``.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the key when the body is not an
    ///   object, or the total, next or last value has the wrong type.
    public func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
        -> PageLayout
    {
        let paths = [totalPath, nextPath, previousPath, lastPagePath].compactMap { $0 }
        let envelope = try EnvelopeReader(response.body, paths: paths)
        let total = try totalPath.flatMap { path throws(ServiceError) in try envelope.integer(at: path) }
        let lastPage = try lastPagePath.flatMap { path throws(ServiceError) in try envelope.integer(at: path)
        }
        let isPastTheEnd = lastPage.map { number > $0 } ?? false

        var links: [Link] = []
        var next: PageAddress?
        var hasNext: Bool?
        if let nextPath, envelope.contains(nextPath) {
            let value = envelope.value(at: nextPath)
            next = try address(value, at: nextPath, after: number)
            hasNext = next != nil
            if let link = EnvelopeReader.link("next", value) { links.append(link) }
        } else if let total {
            hasNext = PageLayout.hasMore(total: total, page: number, size: size)
            next = hasNext == true ? PageAddress.page(after: number) : nil
        }
        if let previousPath, let link = EnvelopeReader.link("prev", envelope.value(at: previousPath)) {
            links.append(link)
        }
        if isPastTheEnd { (hasNext, next) = (false, nil) }
        return PageLayout(
            itemsPath: itemsPath, total: total, hasNext: hasNext, links: links, next: next,
            isPastTheEnd: isPastTheEnd)
    }

    /// A `404` for a page after the first, when ``notFoundIsPastTheEnd``.
    public func isPastTheEnd(_ error: ServiceError, page number: Int) -> Bool {
        guard notFoundIsPastTheEnd, number > 1, case .notFound = error else { return false }
        return true
    }

    /// The address a `next` value stands for: a URL or path, a page number, or a flag.
    private func address(_ value: JSONValue?, at path: [String], after number: Int) throws(ServiceError)
        -> PageAddress?
    {
        switch value {
        case nil, .bool(false): return nil
        case .bool(true): return PageAddress.page(after: number)
        case .string(let text) where text.isEmpty: return nil
        case .string(let text) where PageAddress.isLink(text): return .href(text)
        default:
            let page = value?.intValue ?? value?.stringValue.flatMap { Int($0) }
            guard let page, page >= 1 else {
                throw EnvelopeReader.mismatch(
                    at: path, expected: "a URL, a path or a page number", got: value ?? .null)
            }
            return .number(page)
        }
    }
}

extension Pagination {
    /// Django REST framework's envelope: `page` and `page_size`, answered with
    /// `{"count", "next", "previous", "results"}`; follows the `next` URL.
    ///
    /// `let pagination = Pagination.envelope` sends `GET /posts?page=1&page_size=20`.
    public static let envelope = Pagination(EnvelopePagination.djangoREST)

    /// json-server 1.x's envelope: `_page` and `_per_page`, answered with
    /// `{"first", "prev", "next", "last", "pages", "items", "data"}`.
    ///
    /// `let pagination = Pagination.jsonServerV1` sends `GET /posts?_page=1&_per_page=20`.
    public static let jsonServerV1 = Pagination(EnvelopePagination.jsonServerV1)

    /// An envelope with your own parameter names and key paths (`nil` for a key the
    /// envelope does not have).
    ///
    /// `Pagination.envelope(items: ["data"], total: ["meta", "total"], next: ["links", "next"])`
    /// reads `{"data": […], "meta": {"total": 40}, "links": {"next": "/posts?page=3"}}`.
    public static func envelope(
        page: String = "page", size: String = "page_size", items: [String] = ["results"],
        total: [String]? = ["count"], next: [String]? = ["next"], previous: [String]? = ["previous"],
        lastPage: [String]? = nil, notFoundIsPastTheEnd: Bool = true
    ) -> Pagination {
        Pagination(
            EnvelopePagination(
                pageParameter: page, sizeParameter: size, itemsPath: items, totalPath: total, nextPath: next,
                previousPath: previous, lastPagePath: lastPage, notFoundIsPastTheEnd: notFoundIsPastTheEnd))
    }
}
