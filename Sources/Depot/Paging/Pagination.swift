/// How a server pages a listing: what to ask for, and how to read the answer.
///
/// A ``PagedRepository`` picks one in its `pagination` property; the default is
/// ``jsonServer``. The built-in conventions:
///
/// | preset | asks with | reads |
/// |---|---|---|
/// | ``jsonServer`` | `_page`, `_limit` | `X-Total-Count`, `Link` |
/// | ``linkHeader`` | `page`, `per_page` | `Link` (`rel="next"`) |
/// | ``grape`` | `page`, `per_page` | `X-Total`, `X-Next-Page` |
/// | ``envelope`` | `page`, `page_size` | `{count, next, previous, results}` |
/// | ``jsonServerV1`` | `_page`, `_per_page` | `{first, prev, next, last, pages, items, data}` |
/// | ``cursor`` | `cursor`, `page_size` | `{next, previous, results}` |
///
/// ``jsonServer``, ``linkHeader``, ``grape``, ``envelope`` and ``cursor`` also come as
/// functions of the same name that take other parameter, header or key names.
///
/// ```swift
/// struct PostRepository: PagedRepository {
///     typealias Entity = Post
///     let backend: any Backend
///     let name = "posts"
///     let pagination = Pagination.linkHeader
/// }
/// ```
public struct Pagination: Sendable {
    /// The rules behind this pagination.
    public let style: any PaginationStyle

    /// A pagination with your own rules.
    public init(_ style: any PaginationStyle) {
        self.style = style
    }
}
