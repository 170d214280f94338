/// What a ``PaginationStyle`` reads from a page's response, before its items are decoded.
public struct PageLayout: Sendable, Hashable {
    /// The key path of the items array in the body; empty when the body is the array.
    public var itemsPath: [String]
    /// The total number of items, when the server says.
    public var total: Int?
    /// Whether a next page exists, when the server says so directly.
    ///
    /// When `nil`, a page has a next one if ``next`` is set or, failing that, if it
    /// is full.
    public var hasNext: Bool?
    /// The links the server sent.
    public var links: [Link]
    /// What to ask for after this page: the server's `next` URL or cursor, or the
    /// next page number; `nil` on the last page, or to let Depot ask for page
    /// `number + 1` while there is a next page.
    public var next: PageAddress?
    /// Whether the server answered a page past the end with another page's items
    /// (json-server 1.x repeats the last page): the page is then read as an empty
    /// last page.
    public var isPastTheEnd: Bool

    /// Creates a layout.
    public init(
        itemsPath: [String] = [], total: Int? = nil, hasNext: Bool? = nil, links: [Link] = [],
        next: PageAddress? = nil, isPastTheEnd: Bool = false
    ) {
        self.itemsPath = itemsPath
        self.total = total
        self.hasNext = hasNext
        self.links = links
        self.next = next
        self.isPastTheEnd = isPastTheEnd
    }
}

extension PageLayout {
    /// Whether items follow page `number` of `size` in a listing of `total`
    /// (`false` when the arithmetic overflows: such a page is past any end).
    static func hasMore(total: Int, page number: Int, size: Int) -> Bool {
        let (end, overflow) = number.multipliedReportingOverflow(by: size)
        return !overflow && end < total
    }
}
