import Foundation

/// Paging that follows the server's opaque `next` cursor instead of counting pages, as Django
/// REST framework's `CursorPagination` answers (`{next, previous, results}`), or an API that
/// gives a bare token, sent back in ``cursorParameter`` (the article *Paging Through Listings*).
public struct CursorPagination: PaginationStyle {
    /// The query parameter that carries a bare cursor.
    public var cursorParameter: String
    /// The query parameter for the page size.
    public var sizeParameter: String
    /// The key path of the items array (`["results"]`).
    public var itemsPath: [String]
    /// The key path of the next cursor or URL (`["next"]`).
    public var nextPath: [String]
    /// The key path of the previous cursor or URL, if the body has one.
    public var previousPath: [String]?
    /// The key path of the total number of items, if the body has one.
    public var totalPath: [String]?

    /// Creates the style; the defaults are Django REST framework's `CursorPagination`.
    public init(
        cursorParameter: String = "cursor", sizeParameter: String = "page_size",
        itemsPath: [String] = ["results"],
        nextPath: [String] = ["next"], previousPath: [String]? = ["previous"], totalPath: [String]? = nil
    ) {
        self.cursorParameter = cursorParameter
        self.sizeParameter = sizeParameter
        self.itemsPath = itemsPath
        self.nextPath = nextPath
        self.previousPath = previousPath
        self.totalPath = totalPath
    }

    /// `page_size=size` for the first page; nothing for any other number, which a
    /// cursor style cannot ask for (``query(for:size:)`` refuses it).
    public func query(page number: Int, size: Int) -> [URLQueryItem] {
        number == 1 ? [URLQueryItem(name: sizeParameter, value: String(size))] : []
    }

    /// The first page asks for `page_size=size` alone, a cursor for
    /// `cursor=…&page_size=size`, and a server URL for nothing more.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for a page number other than 1:
    ///   a cursor style can only follow the server's `next`.
    public func query(for address: PageAddress, size: Int) throws(ServiceError) -> [URLQueryItem] {
        let sizeItem = URLQueryItem(name: sizeParameter, value: String(size))
        switch address {
        case .number(1): return [sizeItem]
        case .number(let number):
            throw .invalidRequest(
                "cursor pagination cannot ask for page \(number): it can only follow the server's next cursor"
            )
        case .cursor(let cursor): return [URLQueryItem(name: cursorParameter, value: cursor), sizeItem]
        case .href: return []
        }
    }

    /// Reads the next (and previous) cursor or URL and the total, if any.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the key when the body is not an
    ///   object or the cursor is not a string or number.
    public func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
        -> PageLayout
    {
        let paths = [nextPath, previousPath, totalPath].compactMap { $0 }
        let envelope = try EnvelopeReader(response.body, paths: paths)
        var total: Int?
        if let totalPath { total = try envelope.integer(at: totalPath) }
        let value = envelope.value(at: nextPath)
        let next: PageAddress?
        switch value {
        case nil: next = nil
        case .string(let text): next = text.isEmpty ? nil : .href(orCursor: text)
        case .int(let cursor): next = .cursor(String(cursor))
        case .some(let other):
            throw EnvelopeReader.mismatch(at: nextPath, expected: "a cursor, a URL or null", got: other)
        }
        var links: [Link] = []
        if let link = EnvelopeReader.link("next", value) { links.append(link) }
        if let previousPath, let link = EnvelopeReader.link("prev", envelope.value(at: previousPath)) {
            links.append(link)
        }
        return PageLayout(itemsPath: itemsPath, total: total, hasNext: next != nil, links: links, next: next)
    }
}

extension Pagination {
    /// Django REST framework's `CursorPagination`: the first page with `page_size`,
    /// then the `next` URL it answers, `{"next", "previous", "results"}`.
    ///
    /// `let pagination = Pagination.cursor` sends `GET /posts?page_size=20`, then
    /// `GET /posts?cursor=cD0yMA%3D%3D&page_size=20` as `next` says.
    public static let cursor = Pagination(CursorPagination())

    /// Cursor paging with your own names: a bare token under `next` is sent back in
    /// `cursor`.
    ///
    /// `Pagination.cursor(cursor: "starting_after", size: "limit", items: ["data"], next: ["next_cursor"])`.
    public static func cursor(
        cursor: String = "cursor", size: String = "page_size", items: [String] = ["results"],
        next: [String] = ["next"], previous: [String]? = ["previous"], total: [String]? = nil
    ) -> Pagination {
        Pagination(
            CursorPagination(
                cursorParameter: cursor, sizeParameter: size, itemsPath: items, nextPath: next,
                previousPath: previous, totalPath: total))
    }
}
