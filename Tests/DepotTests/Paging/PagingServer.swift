import Depot
import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

enum PagingServer {
    /// A backend that serves the seeded posts in `style`.
    static func backend(_ style: ServedStyle) throws -> InMemoryBackend {
        let backend = try Seed.placeholder()
        switch style {
        case .jsonServer: break
        case .linkHeader: backend.route(.get, "posts") { linkPage($0) }
        case .grape: backend.route(.get, "posts") { grapePage($0) }
        case .envelope: backend.route(.get, "posts") { drfPage($0) }
        case .jsonServerV1: backend.route(.get, "posts") { v1Page($0) }
        case .cursor: backend.route(.get, "posts") { cursorPage($0) }
        }
        return backend
    }

    /// The repository for `style` over ``backend(_:)``.
    static func repository(_ style: ServedStyle, backend: InMemoryBackend) -> StyledPostRepository {
        StyledPostRepository(backend: backend, pagination: style.pagination)
    }

    // MARK: - The styles

    /// GitHub: `page`/`per_page`, a `Link` header and nothing else.
    static func linkPage(_ context: RouteContext) -> BackendResponse {
        let (page, size, items) = slice(context, page: "page", size: "per_page")
        let last = max(1, (items.count + size - 1) / size)
        var links: [String] = []
        if page < last { links.append("<\(url(context, "page", page + 1))>; rel=\"next\"") }
        if page > 1 { links.append("<\(url(context, "page", min(page - 1, last)))>; rel=\"prev\"") }
        return .json(
            .array(chunk(items, page, size)),
            headers: links.isEmpty ? [:] : ["Link": links.joined(separator: ", ")])
    }

    /// Grape: `page`/`per_page`, `X-Total`, `X-Per-Page`, `X-Page`, `X-Next-Page` (empty on the last).
    static func grapePage(_ context: RouteContext) -> BackendResponse {
        let (page, size, items) = slice(context, page: "page", size: "per_page")
        let last = max(1, (items.count + size - 1) / size)
        return .json(
            .array(chunk(items, page, size)),
            headers: [
                "X-Total": String(items.count), "X-Per-Page": String(size), "X-Page": String(page),
                "X-Next-Page": page < last ? String(page + 1) : "",
            ])
    }

    /// Django REST framework's `PageNumberPagination`: `{count, next, previous, results}`, 404 past the end.
    static func drfPage(_ context: RouteContext) -> BackendResponse {
        let (page, size, items) = slice(context, page: "page", size: "page_size")
        let last = max(1, (items.count + size - 1) / size)
        guard page <= last else { return .error(404, "Invalid page.") }
        return .json([
            "count": .int(items.count),
            "next": page < last ? .string(url(context, "page", page + 1)) : .null,
            "previous": page > 1 ? .string(url(context, "page", page - 1)) : .null,
            "results": .array(chunk(items, page, size)),
        ])
    }

    /// json-server 1.x: `_page`/`_per_page`, `{first, prev, next, last, pages, items, data}`,
    /// the last page again past the end.
    static func v1Page(_ context: RouteContext) -> BackendResponse {
        let (asked, size, items) = slice(context, page: "_page", size: "_per_page")
        let pages = max(1, (items.count + size - 1) / size)
        let page = min(asked, pages)
        return .json([
            "first": 1, "prev": page > 1 ? .int(page - 1) : .null,
            "next": page < pages ? .int(page + 1) : .null,
            "last": .int(pages), "pages": .int(pages), "items": .int(items.count),
            "data": .array(chunk(items, page, size)),
        ])
    }

    /// Django REST framework's `CursorPagination`: `page_size`, then the `next` URL whose
    /// `cursor` is the last id seen, base64-encoded.
    static func cursorPage(_ context: RouteContext) -> BackendResponse {
        let size = Int(context.query["page_size"] ?? "") ?? 10
        var after = 0
        if let cursor = context.query["cursor"] {
            guard let data = Data(base64Encoded: cursor), let id = Int(String(decoding: data, as: UTF8.self))
            else { return .error(404, "Invalid cursor") }
            after = id
        }
        let rest = filtered(context).filter { ($0["id"]?.intValue ?? 0) > after }
        let items = Array(rest.prefix(size))
        var next: JSONValue = .null
        if rest.count > size, let lastID = items.last?["id"]?.intValue {
            next = .string(url(context, "cursor", Data(String(lastID).utf8).base64EncodedString()))
        }
        return .json(["next": next, "previous": .null, "results": .array(items)])
    }

    /// A DRF-style envelope whose `next` is always page 2: a server bug a client must survive.
    static func loopingPage(_ context: RouteContext) -> BackendResponse {
        let (page, size, items) = slice(context, page: "page", size: "page_size")
        return .json([
            "count": .int(items.count), "next": .string(url(context, "page", 2)), "previous": .null,
            "results": .array(chunk(items, page, size)),
        ])
    }

    // MARK: - Helpers

    /// The posts matching the request's `userId` filters, in id order.
    static func filtered(_ context: RouteContext) -> [JSONValue] {
        let users = Set(context.query.values(for: "userId").compactMap { Int($0) })
        return context.records(in: "posts").filter {
            users.isEmpty || users.contains($0["userId"]?.intValue ?? 0)
        }
    }

    /// The page number, the size and the filtered posts.
    static func slice(_ context: RouteContext, page: String, size: String) -> (Int, Int, [JSONValue]) {
        let number = max(1, Int(context.query[page] ?? "") ?? 1)
        let count = max(1, Int(context.query[size] ?? "") ?? 10)
        return (number, count, filtered(context))
    }

    /// Page `page` of `size` of `items`; empty past the end.
    static func chunk(_ items: [JSONValue], _ page: Int, _ size: Int) -> [JSONValue] {
        let start = (page - 1) * size
        guard start < items.count else { return [] }
        return Array(items[start..<min(start + size, items.count)])
    }

    /// This request's absolute URL with `name` set to `value`, its other parameters kept.
    static func url(_ context: RouteContext, _ name: String, _ value: some CustomStringConvertible) -> String
    {
        let others = context.query.filter { $0.name != name }
        return context.url("posts", query: [URLQueryItem(name: name, value: value.description)] + others)
    }
}
