/// How a server pages a listing: what to ask for, and how to read the answer. A
/// ``PagedRepository`` picks one in its `pagination` property; the default is ``jsonServer``.
///
/// ```swift
/// let pagination = Pagination.linkHeader   // in a PagedRepository
/// ```
///
/// The built-in conventions, what each asks with and reads: the article *Paging Through Listings*.
public struct Pagination: Sendable {
    /// The rules behind this pagination.
    public let style: any PaginationStyle

    /// A pagination with your own rules.
    public init(_ style: any PaginationStyle) {
        self.style = style
    }
}
