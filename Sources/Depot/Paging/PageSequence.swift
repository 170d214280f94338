/// The pages of a listing as an `AsyncSequence`, fetched one at a time as you iterate, until a
/// page without a next one. It never yields an empty page, and throws rather than loop when a
/// server repeats its pages (the article *Paging Through Listings*).
///
/// ```swift
/// for try await page in posts.pages(size: 20) { render(page.items) }
/// ```
public struct PageSequence<Entity: Sendable>: AsyncSequence, Sendable {
    /// Each element is one page.
    public typealias Element = Page<Entity>

    /// Fetches the page at an address, given its position in the listing (from 1).
    public typealias Fetch = @Sendable (PageAddress, Int) -> Future<Page<Entity>, ServiceError>

    private let start: PageAddress
    private let fetch: Fetch
    private let followsAddresses: Bool

    /// Creates a sequence that fetches the page at `address`, number `n`, with
    /// `fetch(address, n)`: first `start`, then each page's ``Page/nextAddress``.
    public init(startingAt start: PageAddress = .number(1), fetch: @escaping Fetch) {
        self.start = start
        self.fetch = fetch
        self.followsAddresses = true
    }

    /// Creates a sequence that fetches page `n` with `fetch(n)`, from 1, counting
    /// pages rather than following the server's `next`.
    public init(fetch: @escaping @Sendable (Int) -> Future<Page<Entity>, ServiceError>) {
        self.start = .number(1)
        self.fetch = { _, number in fetch(number) }
        self.followsAddresses = false
    }

    /// Starts iterating at the first page.
    public func makeAsyncIterator() -> Iterator {
        Iterator(start: start, fetch: fetch, followsAddresses: followsAddresses)
    }

    /// Fetches the next page on each call to ``next()``.
    public struct Iterator: AsyncIteratorProtocol {
        private let fetch: Fetch
        private let followsAddresses: Bool
        private var pending: PageAddress?
        private var number = 1
        private var visited: Set<PageAddress> = []
        private var lastFingerprint: Int?

        init(start: PageAddress, fetch: @escaping Fetch, followsAddresses: Bool) {
            self.fetch = fetch
            self.followsAddresses = followsAddresses
            self.pending = start
        }

        /// The next page, or `nil` after the last.
        ///
        /// - Throws: the ``ServiceError`` that fetching the page met;
        ///   ``ServiceError/cancelled`` when the iterating task is cancelled; or
        ///   ``ServiceError/decoding(_:)`` when the server sent a next page that was
        ///   already fetched, or answered two page requests in a row with the same body
        ///   (a server that ignores the paging parameters).
        public mutating func next() async throws -> Page<Entity>? {
            guard let address = pending else { return nil }
            pending = nil
            // A walk over an in-memory backend never suspends, so it checks by itself.
            if Task.isCancelled { throw ServiceError.cancelled }
            guard visited.insert(address).inserted else {
                throw ServiceError.decoding(
                    DecodingFailure(
                        type: "Page", codingPath: "next",
                        description:
                            "the server sent the same next page twice (\(address)); stopped to avoid a loop"
                    ))
            }
            let page = try await fetch(address, number).value
            number += 1
            guard !page.items.isEmpty else { return nil }
            if let fingerprint = page.fingerprint {
                guard fingerprint != lastFingerprint else {
                    throw ServiceError.decoding(
                        DecodingFailure(
                            type: "Page", codingPath: "(body)",
                            description:
                                "the server answered \(address) with the same page as the one before; "
                                + "it seems to ignore the paging parameters, so the walk stopped"))
                }
                lastFingerprint = fingerprint
            }
            if page.hasNext {
                pending =
                    followsAddresses
                    ? page.nextAddress ?? PageAddress.page(after: page.number) : .number(number)
            }
            return page
        }
    }
}
