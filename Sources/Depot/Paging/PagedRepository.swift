import Foundation

/// A repository whose listing can be read a page at a time.
///
/// ```swift
/// let page = try await posts.findPage(2, size: 10).value   // ids 11–20
/// for try await page in posts.pages(size: 25) {
///     print("page \(page.number) of \(page.pageCount ?? 0)")
/// }
/// ```
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

    /// Page `number` of `size`: `GET /name?_page=number&_limit=size`.
    public func findPage(_ number: Int, size: Int) -> Future<Page<Entity>, ServiceError> {
        findPage(number, size: size, query: Query())
    }

    /// Page `number` of `size` among the entities matching `query`.
    ///
    /// A page past the end is an empty last page. A number or size below 1 is
    /// ``ServiceError/invalidRequest(_:)``.
    public func findPage(_ number: Int, size: Int, query: Query) -> Future<Page<Entity>, ServiceError> {
        guard number >= 1, size >= 1 else {
            return .failure(
                .invalidRequest("page number and size must be at least 1 (got \(number), \(size))"))
        }
        let style = pagination.style
        let coding = coding
        let items = query.items + style.query(page: number, size: size)
        let request = BackendRequest(method: .get, segments: collectionPath, query: items)
        return backend.send(request).flatMap { response in
            Future(
                result: Result { () throws(ServiceError) in
                    let layout = try style.layout(of: response, page: number, size: size)
                    let entities = try coding.decode([Entity].self, from: response.body, at: layout.itemsPath)
                    return Page(
                        items: entities, number: number, size: size, total: layout.total,
                        hasNext: layout.hasNext ?? (entities.count == size),
                        hasPrevious: number > 1, links: layout.links)
                })
        }
    }

    /// Every page of `size`, in order.
    public func pages(size: Int) -> PageSequence<Entity> {
        pages(size: size, query: Query())
    }

    /// Every page of `size` among the entities matching `query`, in order.
    public func pages(size: Int, query: Query) -> PageSequence<Entity> {
        PageSequence { number in findPage(number, size: size, query: query) }
    }
}
