import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// What keeps a page walk finite and crash-free whatever the server sends.
@Suite("Page walks: loops, overflow, cancellation, relative links")
struct PageWalkSafetyTests {
    /// Twenty posts, whatever is asked: a server that ignores `_page` and `_limit`.
    private static func ignoringServer() throws -> InMemoryBackend {
        let backend = try Seed.placeholder()
        backend.route(.get, "posts") { context in
            .json(.array(Array(PagingServer.filtered(context).prefix(20))))
        }
        return backend
    }

    @Test("a server that ignores the paging parameters ends the walk with .decoding, not a loop")
    func ignoredParameters() async throws {
        let backend = try Self.ignoringServer()
        var pages = 0
        var thrown: (any Error)?
        do {
            for try await _ in PostRepository(backend: backend).pages(size: 20) {
                pages += 1
                if pages > 10 { break }  // a bound, should the loop go undetected
            }
        } catch {
            thrown = error
        }
        #expect(pages == 1)
        #expect(backend.requests.count == 2)
        guard case .decoding(let failure) = thrown as? ServiceError else {
            Issue.record("expected .decoding, got \(String(describing: thrown))")
            return
        }
        #expect(failure.description.contains("ignore the paging parameters"))
    }

    @Test("cancelling the task that walks an in-memory listing ends the walk with .cancelled")
    func cancellation() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let walk = Task { () -> (pages: Int, error: ServiceError?) in
            var pages = 0
            do {
                for try await _ in posts.pages(size: 1) {
                    pages += 1
                    withUnsafeCurrentTask { $0?.cancel() }
                }
            } catch {
                return (pages, error as? ServiceError)
            }
            return (pages, nil)
        }
        let outcome = await walk.value
        #expect(outcome.pages == 1)
        #expect(outcome.error == .cancelled)
        #expect(backend.requests.count == 1)
    }

    @Test("page numbers and totals near Int.max neither crash nor ask for a page that cannot exist")
    func overflow() async throws {
        #expect(PageAddress.page(after: .max) == nil)
        #expect(PageAddress.page(after: 41) == .number(42))
        let huge = Page<Int>(
            items: [1], number: .max, size: 10, total: .max, hasNext: true, hasPrevious: true)
        #expect(huge.pageCount == Int.max / 10 + 1)

        let backend = try Seed.placeholder()
        let posts = StyledPostRepository(backend: backend, pagination: .grape)
        let after = try await posts.findPage(after: huge.map(Post.self), query: [:]).value
        #expect(after.items.isEmpty)
        #expect(!after.hasNext)
        #expect(backend.requests.isEmpty)

        // Page 1 names page Int.max as the next; that page is full and says nothing more.
        backend.route(.get, "posts") { context in
            let headers: HTTPHeaders = context.query["page"] == "1" ? ["X-Next-Page": "\(Int.max)"] : [:]
            return .json(.array(Array(PagingServer.filtered(context).prefix(5))), headers: headers)
        }
        let first = try await posts.findPage(1, size: 5).value
        #expect(first.nextAddress == .number(.max))
        let last = try await posts.findPage(at: .number(.max), number: .max, size: 5, query: [:]).value
        #expect(last.nextAddress == nil)
        #expect(!last.hasNext)
    }

    @Test("X-Next-Page below 1 is .decoding naming the header", arguments: ["0", "-3"])
    func nextPageBelowOne(value: String) async throws {
        let response = BackendResponse(status: 200, headers: ["X-Next-Page": value], body: Data("[]".utf8))
        #expect {
            _ = try GrapePagination().layout(of: response, page: 1, size: 10)
        } throws: { error in
            guard case .decoding(let failure) = error as? ServiceError else { return false }
            return failure.codingPath == "header X-Next-Page"
        }
    }

    @Test(
        "a relative next link resolves against the page's own request (RFC 8288 §3.2)",
        arguments: [
            ("?page=2", "users/1/posts", "users/1/posts?page=2"),
            ("posts?page=2", "users/1/posts", "users/1/posts?page=2"),
            ("page/2", "v1/items", "v1/page/2"),
            ("../all?page=2", "users/1/posts", "users/all?page=2"),
            ("?page=3", "http://127.0.0.1:8000/drf/posts", "http://127.0.0.1:8000/drf/posts?page=3"),
            ("/drf/posts?page=2", "drf/posts", "/drf/posts?page=2"),
            ("https://api.example.com/p?page=2", "posts", "https://api.example.com/p?page=2"),
        ])
    func relativeLinks(href: String, requestPath: String, expected: String) {
        let request = BackendRequest(
            method: .get, path: requestPath, query: [URLQueryItem(name: "page", value: "1")])
        #expect(PageRequest.resolve(href, from: request) == expected)
    }

    @Test("a relative Link header is followed under the nested collection that sent it")
    func relativeLinkHeaderWalk() async throws {
        let backend = try Seed.placeholder()
        backend.route(.get, "users/:id/posts") { context in
            let page = Int(context.query["page"] ?? "") ?? 1
            let mine = PagingServer.filtered(context).filter { $0["userId"]?.intValue == 1 }
            let items = PagingServer.chunk(mine, page, 4)
            let next = page * 4 < mine.count ? "<?page=\(page + 1)&per_page=4>; rel=\"next\"" : ""
            return .json(.array(items), headers: next.isEmpty ? [:] : ["Link": next])
        }
        let users = UserRepository(backend: backend)
        let mine = StyledPostRepository(backend: backend, pagination: .linkHeader).scoped(to: 1, in: users)
        var ids: [Int] = []
        for try await page in mine.pages(size: 4) {
            ids += page.items.map(\.id)
            if ids.count > 20 { break }  // a bound
        }
        #expect(ids == Array(1...10))
        #expect(backend.requests.map(\.path) == ["users/1/posts", "users/1/posts", "users/1/posts"])
    }
}

extension Page where Entity == Int {
    /// The same page with its items' type changed, for pages built by hand.
    fileprivate func map<Other>(_ type: Other.Type) -> Page<Other> {
        Page<Other>(
            items: [], number: number, size: size, total: total, hasNext: hasNext, hasPrevious: hasPrevious,
            links: links, nextAddress: nextAddress)
    }
}
