import Foundation

/// The rules of one paging convention: the query that asks for a page, and how to read
/// where its items are and where the next page is. Implement ``query(page:size:)`` and
/// ``layout(of:page:size:)`` (and ``query(for:size:)`` to follow the server's cursors), and
/// plug it in with ``Pagination/init(_:)``: the article *Paging Through Listings* has an example.
public protocol PaginationStyle: Sendable {
    /// The query items that ask for the page at `address`, `size` items long.
    ///
    /// Depot adds them to the caller's query for ``PageAddress/number(_:)`` and
    /// ``PageAddress/cursor(_:)``; a request for an ``PageAddress/href(_:)`` goes to
    /// the server's URL as it is, with neither these items nor the caller's query.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for an address the style cannot
    ///   ask for (a page number past 1 in a cursor style, a cursor in a numbered one).
    func query(for address: PageAddress, size: Int) throws(ServiceError) -> [URLQueryItem]

    /// The query items that ask for page `number` (from 1) of `size` items.
    ///
    /// A cursor style answers the items of the first page here.
    func query(page number: Int, size: Int) -> [URLQueryItem]

    /// Reads where the items are, what the server said about the other pages, and
    /// where the next page is (``PageLayout/next``).
    ///
    /// `number` is the page's position in the listing (from 1) and `size` the size
    /// that was asked for.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the header or key that is malformed.
    func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError) -> PageLayout

    /// Whether `error`, met when asking for page `number`, means the page lies past
    /// the end, so that it reads as an empty last page.
    ///
    /// Django REST framework answers a page past the end with `404 Invalid page.`;
    /// most other servers with an empty page. The default is `false`.
    func isPastTheEnd(_ error: ServiceError, page number: Int) -> Bool
}

extension PaginationStyle {
    /// Asks for numbered pages with ``query(page:size:)`` and for an href with nothing.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` for a cursor, which a numbered
    ///   style has no parameter for.
    public func query(for address: PageAddress, size: Int) throws(ServiceError) -> [URLQueryItem] {
        switch address {
        case .number(let number): return query(page: number, size: size)
        case .href: return []
        case .cursor:
            throw .invalidRequest("\(type(of: self)) pages by number and has no cursor parameter")
        }
    }

    /// `false`: an error is an error.
    public func isPastTheEnd(_ error: ServiceError, page number: Int) -> Bool {
        false
    }
}
