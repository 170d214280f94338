import Depot
import Foundation
import Testing

/// Every paging style over real HTTP: the DRF test app serves the same 100 posts in
/// each convention, and one repository type, changed only in its `pagination`, walks
/// them all.
@Suite(.liveServers) struct DRFPagingStylesTests {
    /// The posts of the DRF app's endpoint for `style`, read with that style.
    private func posts(_ style: ServedStyle) throws -> StyledPostRepository {
        let drf = try #require(LiveServer.drf)
        let base = try #require(URL(string: drf.absoluteString + "/" + style.drfPrefix))
        return StyledPostRepository(
            backend: URLSessionBackend(baseURL: base), pagination: style.pagination)
    }

    static let walks: [(ServedStyle, Int)] = ServedStyle.allCases.flatMap { style in
        [(style, 7), (style, 25)]
    }

    @Test("pages(size:) walks all 100 posts exactly once, in order", arguments: walks)
    func walk(style: ServedStyle, size: Int) async throws {
        var ids: [Int] = []
        var numbers: [Int] = []
        for try await page in try posts(style).pages(size: size) {
            numbers.append(page.number)
            ids += page.items.map(\.id)
            #expect(page.items.count == size || page.isLast)
            if numbers.count > 100 { break }  // a bound, should the walk never end
        }
        #expect(ids == Array(1...100))
        #expect(numbers == Array(1...((100 + size - 1) / size)))
    }

    @Test(
        "the filter stays on every page, also through the server's next links",
        arguments: ServedStyle.allCases)
    func walkFiltered(style: ServedStyle) async throws {
        var ids: [Int] = []
        for try await page in try posts(style).pages(size: 3, query: ["userId": 7]) {
            ids += page.items.map(\.id)
            if ids.count > 100 { break }
        }
        #expect(ids == Array(61...70))
    }

    @Test(
        "findPage reads pages 1 and 2; a page past the end is an empty last page",
        arguments: ServedStyle.allCases.filter(\.isNumbered))
    func numbered(style: ServedStyle) async throws {
        let posts = try posts(style)
        let first = try await posts.findPage(1, size: 10).value
        #expect(first.items.map(\.id) == Array(1...10))
        #expect(first.hasNext && !first.hasPrevious)
        let second = try await posts.findPage(2, size: 10).value
        #expect(second.items.map(\.id) == Array(11...20))
        #expect(second.hasNext && second.hasPrevious)
        let last = try await posts.findPage(10, size: 10).value
        #expect(last.items.map(\.id) == Array(91...100))
        #expect(last.isLast && last.nextAddress == nil)
        let past = try await posts.findPage(11, size: 10).value
        #expect(past.items.isEmpty)
        #expect(past.isLast)
    }

    @Test("the cursor style reads page 1 and refuses page 2 without a request")
    func cursorNumbers() async throws {
        let posts = try posts(.cursor)
        let first = try await posts.findPage(1, size: 10).value
        #expect(first.items.map(\.id) == Array(1...10))
        guard case .href(let next) = first.nextAddress else {
            Issue.record("expected the server's next URL, got \(String(describing: first.nextAddress))")
            return
        }
        #expect(next.contains("cursor="))
        let second = try await posts.findPage(after: first).value
        #expect(second.items.map(\.id) == Array(11...20))
        #expect(await posts.findPage(2, size: 10).result.failure?.caseName == "invalidRequest")
    }

    @Test("the total is read where the style carries it", arguments: ServedStyle.allCases)
    func total(style: ServedStyle) async throws {
        let page = try await posts(style).findPage(1, size: 10).value
        let carriesTotal: Set<ServedStyle> = [.jsonServer, .grape, .envelope, .jsonServerV1]
        #expect(page.total == (carriesTotal.contains(style) ? 100 : nil))
    }

    @Test("a server that sends the same next page twice stops the walk with .decoding")
    func repeatedNext() async throws {
        let drf = try #require(LiveServer.drf)
        let base = try #require(URL(string: drf.absoluteString + "/loop/"))
        let posts = StyledPostRepository(backend: URLSessionBackend(baseURL: base), pagination: .envelope)
        var ids: [Int] = []
        var thrown: (any Error)?
        do {
            for try await page in posts.pages(size: 10) {
                ids += page.items.map(\.id)
                if ids.count > 100 { break }
            }
        } catch {
            thrown = error
        }
        #expect(ids == Array(1...20))
        guard case .decoding(let failure) = thrown as? ServiceError else {
            Issue.record("expected .decoding, got \(String(describing: thrown))")
            return
        }
        #expect(failure.description.contains("same next page twice"))
    }
}

extension ServedStyle {
    /// Where the DRF app serves the posts in this style, relative to its root.
    var drfPrefix: String {
        switch self {
        case .jsonServer: ""
        case .linkHeader: "link/"
        case .grape: "grape/"
        case .envelope: "drf/"
        case .jsonServerV1: "v1/"
        case .cursor: "cursor/"
        }
    }
}
