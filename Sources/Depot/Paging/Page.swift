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

    /// Creates a page.
    public init(
        items: [Entity], number: Int, size: Int, total: Int? = nil, hasNext: Bool, hasPrevious: Bool,
        links: [Link] = []
    ) {
        self.items = items
        self.number = number
        self.size = size
        self.total = total
        self.hasNext = hasNext
        self.hasPrevious = hasPrevious
        self.links = links
    }

    /// The link to the next page, when the server sent one.
    public var next: Link? {
        links[rel: "next"]
    }

    /// The number of pages, when the total is known.
    public var pageCount: Int? {
        guard let total, size > 0 else { return nil }
        return (total + size - 1) / size
    }

    /// Whether this is the last page.
    public var isLast: Bool {
        !hasNext
    }
}

extension Page: Equatable where Entity: Equatable {}
