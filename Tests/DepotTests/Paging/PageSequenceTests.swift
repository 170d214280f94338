import Depot
import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

/// How `pages(size:)` and `findPage(at:…)` move from page to page.
@Suite("Page sequence")
struct PageSequenceTests {
    @Test("the DRF envelope's next URL is fetched as sent: its query split out, no parameters re-added")
    func followsHref() async throws {
        let backend = try PagingServer.backend(.envelope)
        var ids: [Int] = []
        for try await page in PagingServer.repository(.envelope, backend: backend).pages(size: 40) {
            ids += page.items.map(\.id)
        }
        #expect(ids == Array(1...100))
        let requests = backend.requests
        #expect(requests.count == 3)
        #expect(requests[0].path == "posts")
        #expect(
            requests[0].query == [
                URLQueryItem(name: "page", value: "1"), URLQueryItem(name: "page_size", value: "40"),
            ])
        // Logged relative to the backend, as page 1 is.
        #expect(requests[1].path == "posts")
        #expect(
            requests[1].query == [
                URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "page_size", value: "40"),
            ])
        #expect(requests[2].query.first == URLQueryItem(name: "page", value: "3"))
    }

    @Test("the cursor style sends page_size first, then follows the next URL with its cursor")
    func followsCursorURL() async throws {
        let backend = try PagingServer.backend(.cursor)
        var pages: [Page<Post>] = []
        for try await page in PagingServer.repository(.cursor, backend: backend).pages(size: 30) {
            pages.append(page)
        }
        #expect(pages.map(\.number) == [1, 2, 3, 4])
        #expect(pages.flatMap(\.items).map(\.id) == Array(1...100))
        #expect(pages.map(\.hasPrevious) == [false, true, true, true])
        #expect(pages.last?.nextAddress == nil)
        let requests = backend.requests
        #expect(requests[0].query == [URLQueryItem(name: "page_size", value: "30")])
        // The cursor for "after id 30" is base64("30") = "MzA=": percent-encoded in the URL, decoded here.
        #expect(requests[1].query.first == URLQueryItem(name: "cursor", value: "MzA="))
    }

    @Test("a bare cursor token is sent back in the cursor parameter, with the caller's query")
    func followsBareCursor() async throws {
        let backend = try Seed.placeholder()
        backend.route(.get, "posts") { context in
            let after = Int(context.query["after"] ?? "") ?? 0
            let size = Int(context.query["limit"] ?? "") ?? 10
            let rest = PagingServer.filtered(context).filter { ($0["id"]?.intValue ?? 0) > after }
            let items = Array(rest.prefix(size))
            let next: JSONValue = rest.count > size ? .string("\(items.last?["id"]?.intValue ?? 0)") : ""
            return .json(["data": .array(items), "meta": ["next_cursor": next]])
        }
        let posts = StyledPostRepository(
            backend: backend,
            pagination: .cursor(
                cursor: "after", size: "limit", items: ["data"], next: ["meta", "next_cursor"]))
        var ids: [Int] = []
        for try await page in posts.pages(size: 3, query: ["userId": 2]) {
            ids += page.items.map(\.id)
        }
        #expect(ids == Array(11...20))
        let queries = backend.requests.map { $0.query.map { "\($0.name)=\($0.value ?? "")" } }
        #expect(
            queries == [
                ["userId=2", "limit=3"], ["userId=2", "after=13", "limit=3"],
                ["userId=2", "after=16", "limit=3"],
                ["userId=2", "after=19", "limit=3"],
            ])
    }

    @Test("a server that sends the same next page twice ends the walk with .decoding naming it")
    func repeatedNext() async throws {
        let backend = try Seed.placeholder()
        backend.route(.get, "posts") { PagingServer.loopingPage($0) }
        let posts = StyledPostRepository(backend: backend, pagination: .envelope)
        var ids: [Int] = []
        var thrown: (any Error)?
        do {
            for try await page in posts.pages(size: 10) {
                ids += page.items.map(\.id)
                if ids.count > 100 { break }  // a bound, should the loop go undetected
            }
        } catch {
            thrown = error
        }
        #expect(ids == Array(1...20))
        #expect(backend.requests.count == 2)
        guard case .decoding(let failure) = thrown as? ServiceError else {
            Issue.record("expected .decoding, got \(String(describing: thrown))")
            return
        }
        #expect(failure.codingPath == "next")
        #expect(failure.description.contains("same next page twice"))
        #expect(failure.description.contains("http://localhost/posts?page=2&page_size=10"))
    }

    @Test("an empty page ends the walk even when it names a next page")
    func emptyPageEnds() async throws {
        let backend = InMemoryBackend()
        backend.route(.get, "posts") { context in
            let page = Int(context.query["page"] ?? "") ?? 1
            let items: [JSONValue] = page == 1 ? [["id": 1, "userId": 1, "title": "t", "body": "b"]] : []
            return .json([
                "count": 5,
                "next": .string(
                    context.url("posts", query: [URLQueryItem(name: "page", value: "\(page + 1)")])),
                "results": .array(items),
            ])
        }
        var pages = 0
        for try await _ in StyledPostRepository(backend: backend, pagination: .envelope).pages(size: 1) {
            pages += 1
            if pages > 10 { break }  // a bound, should the empty page not end the walk
        }
        #expect(pages == 1)
        #expect(backend.requests.count == 2)
    }

    @Test("a cursor style refuses page 3 with .invalidRequest and sends nothing")
    func cursorRefusesNumbers() async throws {
        let backend = try PagingServer.backend(.cursor)
        let posts = PagingServer.repository(.cursor, backend: backend)
        let error = await posts.findPage(3, size: 10).result.failure
        #expect(error?.caseName == "invalidRequest")
        #expect(error?.errorDescription?.contains("can only follow") == true)
        #expect(backend.requests.isEmpty)
        let first = try await posts.findPage(1, size: 10).value
        #expect(first.items.map(\.id) == Array(1...10))
    }

    @Test(
        "findPage(after:) fetches the next address, and after the last page answers empty without a request",
        arguments: ServedStyle.allCases)
    func findPageAfter(style: ServedStyle) async throws {
        let backend = try PagingServer.backend(style)
        let posts = PagingServer.repository(style, backend: backend)
        var page = try await posts.findPage(1, size: 40).value
        var ids = page.items.map(\.id)
        while page.hasNext {
            page = try await posts.findPage(after: page).value
            ids += page.items.map(\.id)
        }
        #expect(ids == Array(1...100))
        #expect(page.number == 3)
        let requests = backend.requests.count
        let after = try await posts.findPage(after: page).value
        #expect(after.items.isEmpty && !after.hasNext && after.number == 4)
        #expect(backend.requests.count == requests)
    }

    @Test("findPage(at:) reads the page at a server's address and reports the number it is given")
    func findPageAt() async throws {
        let backend = try PagingServer.backend(.linkHeader)
        let posts = PagingServer.repository(.linkHeader, backend: backend)
        let page = try await posts.findPage(
            at: .href("/posts?page=3&per_page=10"), number: 3, size: 10, query: [:]
        )
        .value
        #expect(page.items.map(\.id) == Array(21...30))
        #expect(page.number == 3)
        #expect(page.nextAddress == .href("http://localhost/posts?page=4&per_page=10"))
        #expect(backend.requests.last?.path == "/posts")
        let numbered = try await posts.findPage(at: .number(2), number: 99, size: 10, query: [:]).value
        #expect(numbered.number == 2)
        let foreign = await posts.findPage(
            at: .href("https://elsewhere.example/posts"), number: 2, size: 10, query: [:]
        )
        .result.failure
        #expect(foreign?.caseName == "invalidRequest")
        let empty = await posts.findPage(at: .href(""), number: 2, size: 10, query: [:]).result.failure
        #expect(empty?.caseName == "invalidRequest")
    }

    @Test("a sequence made from page numbers counts pages and ignores the server's links")
    func numberedSequence() async throws {
        let backend = try PagingServer.backend(.envelope)
        let posts = PagingServer.repository(.envelope, backend: backend)
        let sequence = PageSequence<Post> { number in posts.findPage(number, size: 30) }
        var numbers: [Int] = []
        for try await page in sequence { numbers.append(page.number) }
        #expect(numbers == [1, 2, 3, 4])
        #expect(backend.requests.allSatisfy { $0.path == "posts" })
    }

    @Test("an href's query that does not percent-decode leaves the path, its bad escape kept as text")
    func undecodableHref() async throws {
        let backend = try PagingServer.backend(.linkHeader)
        _ = await PagingServer.repository(.linkHeader, backend: backend)
            .findPage(at: .href("/posts?page=%zz&per_page=10"), number: 2, size: 10, query: [:]).result
        #expect(backend.requests.last?.path == "/posts")
        #expect(
            backend.requests.last?.query == [
                URLQueryItem(name: "page", value: "%zz"), URLQueryItem(name: "per_page", value: "10"),
            ])
    }
}
