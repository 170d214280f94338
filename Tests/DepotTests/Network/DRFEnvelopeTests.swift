import Depot
import DepotBackendConformance
import Foundation
import Testing

/// Django REST framework's own paging envelope, `{count, next, previous, results}`,
/// read with a pagination style written on top of ``PaginationStyle``.
@Suite(.liveServers) struct DRFEnvelopeTests {
    private func posts() throws -> EnvelopePostRepository {
        let drf = try #require(LiveServer.drf)
        let base = try #require(URL(string: drf.absoluteString + "/drf/"))
        return EnvelopePostRepository(backend: URLSessionBackend(baseURL: base))
    }

    @Test func readsOnePage() async throws {
        let page = try await posts().findPage(2, size: 10).value
        #expect(page.items.map(\.id) == Array(11...20))
        #expect(page.total == 100)
        #expect(page.hasNext)
        #expect(page.hasPrevious)
        #expect(page.links[rel: "next"]?.href.hasSuffix("/drf/posts?page=3&page_size=10") == true)
    }

    @Test func walksEveryPage() async throws {
        var sizes: [Int] = []
        var ids: [Int] = []
        for try await page in try posts().pages(size: 30) {
            sizes.append(page.items.count)
            ids += page.items.map(\.id)
        }
        #expect(sizes == [30, 30, 30, 10])
        #expect(ids == Array(1...100))
    }

    @Test func filtersInsideTheEnvelope() async throws {
        let page = try await posts().findPage(1, size: 4, query: ["userId": 5]).value
        #expect(page.items.map(\.id) == [41, 42, 43, 44])
        #expect(page.total == 10)
    }
}

/// Posts at `/drf/posts`, paged with DRF's `PageNumberPagination`.
struct EnvelopePostRepository: PagedRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
    let pagination = Pagination(DRFPageNumberPagination())
}

/// DRF's `PageNumberPagination`: `page` and `page_size`, answered with
/// `{"count": 100, "next": "…", "previous": "…", "results": […]}`.
struct DRFPageNumberPagination: PaginationStyle {
    func query(page number: Int, size: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: "page", value: String(number)),
            URLQueryItem(name: "page_size", value: String(size)),
        ]
    }

    func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError) -> PageLayout
    {
        guard let envelope = try? JSONDecoder().decode([String: JSONValue].self, from: response.body) else {
            throw .decoding(
                DecodingFailure(type: "Envelope", codingPath: "", description: "not a JSON object"))
        }
        var links: [Link] = []
        if let next = envelope["next"]?.stringValue { links.append(Link(rel: "next", href: next)) }
        if let previous = envelope["previous"]?.stringValue {
            links.append(Link(rel: "prev", href: previous))
        }
        return PageLayout(
            itemsPath: ["results"], total: envelope["count"]?.intValue, hasNext: links[rel: "next"] != nil,
            links: links)
    }
}
