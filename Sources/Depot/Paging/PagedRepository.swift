import Foundation

/// A repository whose listing can be read a page at a time.
///
/// ```swift
/// let page = try await posts.findPage(2, size: 10).value   // ids 11–20
/// for try await page in posts.pages(size: 25) {
///     print("page \(page.number) of \(page.pageCount ?? 0)")
/// }
/// ```
///
/// ``pagination`` says how the server pages (``Pagination/jsonServer`` unless
/// replaced); ``pages(size:)`` follows the server's `next` link or cursor where the
/// style has one, and counts pages where it has not.
public protocol PagedRepository: Readable {
    /// The server's paging convention; ``Pagination/jsonServer`` unless replaced.
    var pagination: Pagination { get }

    /// Page `number` (from 1) of `size` entities.
    func findPage(_ number: Int, size: Int) -> Future<Page<Entity>, ServiceError>
    /// Page `number` (from 1) of `size` entities among those matching `query`.
    func findPage(_ number: Int, size: Int, query: Query) -> Future<Page<Entity>, ServiceError>
    /// Every page of `size` entities, in order, ending after the last.
    func pages(size: Int) -> PageSequence<Entity>
    /// Every page of `size` entities matching `query`, in order, ending after the last.
    func pages(size: Int, query: Query) -> PageSequence<Entity>
}

extension PagedRepository {
    /// json-server's `_page` / `_limit`.
    public var pagination: Pagination { .jsonServer }

    /// Page `number` of `size`: `GET /name?_page=number&_limit=size` with the default style.
    public func findPage(_ number: Int, size: Int) -> Future<Page<Entity>, ServiceError> {
        findPage(number, size: size, query: Query())
    }

    /// Page `number` of `size` among the entities matching `query`.
    ///
    /// A page past the end is an empty last page. A number or size below 1 is
    /// ``ServiceError/invalidRequest(_:)``, and so is a number past 1 in a cursor style.
    public func findPage(_ number: Int, size: Int, query: Query) -> Future<Page<Entity>, ServiceError> {
        findPage(at: .number(number), number: number, size: size, query: query)
    }

    /// The page at `address` among the entities matching `query`; its
    /// ``Page/number`` is `number` (for ``PageAddress/number(_:)`` the address's own).
    ///
    /// An ``PageAddress/href(_:)`` is fetched as the server wrote it (it carries the
    /// size and the filters), so `query` is not sent again; a number or cursor is sent
    /// with `query` and the style's parameters. A page past the end is an empty last page.
    ///
    /// ```swift
    /// var page = try await posts.findPage(1, size: 20).value
    /// while let next = page.nextAddress {
    ///     page = try await posts.findPage(at: next, number: page.number + 1, size: 20, query: [:]).value
    /// }
    /// ```
    public func findPage(at address: PageAddress, number position: Int, size: Int, query: Query)
        -> Future<Page<Entity>, ServiceError>
    {
        let number: Int
        if case .number(let addressed) = address { number = addressed } else { number = position }
        guard number >= 1, size >= 1 else {
            return .failure(
                .invalidRequest("page number and size must be at least 1 (got \(number), \(size))"))
        }
        let style = pagination.style
        let coding = coding
        let request: BackendRequest
        do {
            request = try PageRequest.make(
                address, collection: collectionResource, size: size, query: query, style: style)
        } catch {
            return .failure(error)
        }
        let page = backend.send(request).tryMap { response throws(ServiceError) in
            let layout = try style.layout(of: response, page: number, size: size)
            let entities =
                layout.isPastTheEnd
                ? [] : try coding.decode([Entity].self, from: response.body, at: layout.itemsPath)
            let hasMore =
                !layout.isPastTheEnd
                && (layout.hasNext ?? (layout.next != nil || entities.count == size))
            var next = hasMore ? layout.next ?? PageAddress.page(after: number) : nil
            if case .href(let href) = next { next = .href(PageRequest.resolve(href, from: request)) }
            var page = Page(
                items: entities, number: number, size: size, total: layout.total,
                hasNext: next != nil, hasPrevious: number > 1, links: layout.links, nextAddress: next)
            page.fingerprint = Self.fingerprint(of: response.body)
            return page
        }
        return page.recover { error in
            guard style.isPastTheEnd(error, page: number) else { return .failure(error) }
            return .success(
                Page(items: [], number: number, size: size, hasNext: false, hasPrevious: number > 1))
        }
    }

    /// The page after `page` among the entities matching `query` (pass the query that
    /// `page` was found with); an empty last page, without a request, when `page` is the last.
    ///
    /// ```swift
    /// let more = try await posts.findPage(after: shown, query: ["userId": 1]).value
    /// ```
    public func findPage(after page: Page<Entity>, query: Query = Query())
        -> Future<Page<Entity>, ServiceError>
    {
        let number = page.number == .max ? page.number : page.number + 1
        guard page.hasNext, let next = page.nextAddress ?? PageAddress.page(after: page.number) else {
            return .success(
                Page(
                    items: [], number: number, size: page.size, total: page.total, hasNext: false,
                    hasPrevious: true))
        }
        return findPage(at: next, number: number, size: page.size, query: query)
    }

    /// Every page of `size`, in order.
    public func pages(size: Int) -> PageSequence<Entity> {
        pages(size: size, query: Query())
    }

    /// Every page of `size` among the entities matching `query`, in order, following
    /// the server's `next` URL or cursor when the style has one.
    public func pages(size: Int, query: Query) -> PageSequence<Entity> {
        PageSequence(startingAt: .number(1)) { address, number in
            findPage(at: address, number: number, size: size, query: query)
        }
    }

    /// A hash of a page's whole body, for ``PageSequence`` to notice a server that
    /// answers every page number with the same page.
    static func fingerprint(of body: Data) -> Int {
        var hasher = Hasher()
        body.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }
}
