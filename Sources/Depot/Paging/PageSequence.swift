/// The pages of a listing as an `AsyncSequence`, fetched one at a time as you
/// iterate.
///
/// It ends after the last page (one without a next page) and never yields an
/// empty page; a failure ends it by throwing the ``ServiceError``.
///
/// ```swift
/// for try await page in posts.pages(size: 20) {
///     render(page.items)
/// }
/// ```
public struct PageSequence<Entity: Sendable>: AsyncSequence, Sendable {
    /// Each element is one page.
    public typealias Element = Page<Entity>

    private let fetch: @Sendable (Int) -> Future<Page<Entity>, ServiceError>

    /// Creates a sequence that fetches page `n` with `fetch(n)`, from 1.
    public init(fetch: @escaping @Sendable (Int) -> Future<Page<Entity>, ServiceError>) {
        self.fetch = fetch
    }

    /// Starts iterating at page 1.
    public func makeAsyncIterator() -> Iterator {
        Iterator(fetch: fetch)
    }

    /// Fetches the next page on each call to ``next()``.
    public struct Iterator: AsyncIteratorProtocol {
        private let fetch: @Sendable (Int) -> Future<Page<Entity>, ServiceError>
        private var number = 1
        private var finished = false

        init(fetch: @escaping @Sendable (Int) -> Future<Page<Entity>, ServiceError>) {
            self.fetch = fetch
        }

        /// The next page, or `nil` after the last.
        ///
        /// - Throws: the ``ServiceError`` that fetching the page met.
        public mutating func next() async throws -> Page<Entity>? {
            guard !finished else { return nil }
            let page: Page<Entity>
            do {
                page = try await fetch(number).value
            } catch {
                finished = true
                throw error
            }
            number += 1
            finished = !page.hasNext
            return page.items.isEmpty ? nil : page
        }
    }
}
