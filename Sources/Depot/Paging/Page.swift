/// One page of a paged listing.
public struct Page<Entity: Sendable>: Sendable {
    /// The page's entities; empty for a page past the end.
    public var items: [Entity]
    /// The page's number, from 1.
    public var number: Int
    /// The page size that was asked for.
    public var size: Int
    /// The number of entities in the whole listing, when the server says.
    public var total: Int?
    /// Whether a page follows this one.
    public var hasNext: Bool
    /// Whether a page comes before this one.
    public var hasPrevious: Bool
    /// The links the server sent (`first`, `prev`, `next`, `last`, …).
    public var links: [Link]
    /// Where the next page is: the server's `next` URL or cursor, or the next page
    /// number; `nil` on the last page. Pass it to
    /// ``PagedRepository/findPage(at:number:size:query:)`` to fetch that page.
    public var nextAddress: PageAddress?
    /// A hash of the body the page was decoded from, so that a walk can tell a server
    /// that ignores the paging parameters (and answers the same page again) from one
    /// that pages; `nil` for pages built by hand.
    var fingerprint: Int?

    /// Creates a page.
    public init(
        items: [Entity], number: Int, size: Int, total: Int? = nil, hasNext: Bool, hasPrevious: Bool,
        links: [Link] = [], nextAddress: PageAddress? = nil
    ) {
        self.items = items
        self.number = number
        self.size = size
        self.total = total
        self.hasNext = hasNext
        self.hasPrevious = hasPrevious
        self.links = links
        self.nextAddress = nextAddress
    }

    /// The number of pages, when the total is known.
    public var pageCount: Int? {
        guard let total, size > 0 else { return nil }
        return total / size + (total % size == 0 ? 0 : 1)
    }
}

extension Page: Equatable where Entity: Equatable {
    /// Pages are equal when everything they tell the caller is.
    public static func == (lhs: Page, rhs: Page) -> Bool {
        lhs.items == rhs.items && lhs.number == rhs.number && lhs.size == rhs.size && lhs.total == rhs.total
            && lhs.hasNext == rhs.hasNext && lhs.hasPrevious == rhs.hasPrevious && lhs.links == rhs.links
            && lhs.nextAddress == rhs.nextAddress
    }
}
