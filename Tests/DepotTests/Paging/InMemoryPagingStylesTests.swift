import Depot
import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

/// Every style, served in process by InMemoryBackend routes, walked end to end by the
/// same repository with only its `pagination` changed.
@Suite("Paging styles in memory")
struct InMemoryPagingStylesTests {
    static let walks: [(ServedStyle, Int)] = ServedStyle.allCases.flatMap { style in
        [(style, 7), (style, 25)]
    }

    @Test("pages(size:) walks all 100 posts exactly once, in order", arguments: walks)
    func walk(style: ServedStyle, size: Int) async throws {
        let backend = try PagingServer.backend(style)
        var ids: [Int] = []
        var numbers: [Int] = []
        var followed: String?
        for try await page in PagingServer.repository(style, backend: backend).pages(size: size) {
            if numbers.isEmpty, case .href(let next)? = page.nextAddress { followed = next }
            numbers.append(page.number)
            ids += page.items.map(\.id)
            #expect(page.items.count == size || !page.hasNext)
        }
        let pageCount = (100 + size - 1) / size
        #expect(ids == Array(1...100))
        #expect(numbers == Array(1...pageCount))
        #expect(backend.requests.count == pageCount)
        // Styles whose server names the next page are followed there, not counted; the log
        // names every page relative to the backend, the followed ones too.
        let followsLinks: Set<ServedStyle> = [.jsonServer, .linkHeader, .envelope, .cursor]
        let second = try #require(backend.requests.dropFirst().first)
        #expect(second.path == "posts")
        #expect(second.resource == .collection(["posts"]))
        #expect(followsLinks.contains(style) == (followed != nil))
        if let followed { #expect(followed.hasPrefix("http://localhost/posts?")) }
    }

    @Test(
        "pages(size:query:) keeps the filter on every page, through the server's links too",
        arguments: ServedStyle.allCases)
    func walkFiltered(style: ServedStyle) async throws {
        let backend = try PagingServer.backend(style)
        var ids: [Int] = []
        for try await page in PagingServer.repository(style, backend: backend).pages(
            size: 4, query: ["userId": 3])
        {
            ids += page.items.map(\.id)
        }
        #expect(ids == Array(21...30))
        #expect(backend.requests.count == 3)
    }

    @Test(
        "findPage reads pages 1 and 2, and a page past the end is an empty last page",
        arguments: ServedStyle.allCases.filter(\.isNumbered))
    func numbered(style: ServedStyle) async throws {
        let posts = PagingServer.repository(style, backend: try PagingServer.backend(style))
        let first = try await posts.findPage(1, size: 10).value
        #expect(first.items.map(\.id) == Array(1...10))
        #expect(first.hasNext && !first.hasPrevious)
        #expect(first.nextAddress != nil)
        let second = try await posts.findPage(2, size: 10).value
        #expect(second.items.map(\.id) == Array(11...20))
        #expect(second.number == 2 && second.hasPrevious)
        let past = try await posts.findPage(11, size: 10).value
        #expect(past.items.isEmpty)
        #expect(!past.hasNext)
        #expect(past.nextAddress == nil)
    }

    @Test("a style's own parameter names reach the server", arguments: ServedStyle.allCases)
    func requestParameters(style: ServedStyle) async throws {
        let backend = try PagingServer.backend(style)
        _ = try await PagingServer.repository(style, backend: backend).findPage(1, size: 5).value
        let sent = try #require(backend.requests.first).query.map(\.name)
        let expected: [ServedStyle: [String]] = [
            .jsonServer: ["_page", "_limit"], .linkHeader: ["page", "per_page"],
            .grape: ["page", "per_page"],
            .envelope: ["page", "page_size"], .jsonServerV1: ["_page", "_per_page"], .cursor: ["page_size"],
        ]
        #expect(sent == expected[style])
    }

    @Test("total is read where the style carries it", arguments: ServedStyle.allCases)
    func total(style: ServedStyle) async throws {
        let page = try await PagingServer.repository(style, backend: try PagingServer.backend(style))
            .findPage(1, size: 10).value
        let carriesTotal: Set<ServedStyle> = [.jsonServer, .grape, .envelope, .jsonServerV1]
        #expect(page.total == (carriesTotal.contains(style) ? 100 : nil))
    }
}
