import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("PagedRepository")
struct PagedRepositoryTests {
    @Test("findPage sends _page and _limit and reads total, next and previous")
    func findPage() async throws {
        let backend = try Seed.placeholder()
        let page = try await PostRepository(backend: backend).findPage(2, size: 10).value
        #expect(page.items.map(\.id) == Array(11...20))
        #expect(page.number == 2)
        #expect(page.size == 10)
        #expect(page.total == 100)
        #expect(page.pageCount == 10)
        #expect(page.hasNext)
        #expect(page.hasPrevious)
        #expect(page.links[rel: "next"] != nil)
        #expect(page.links[rel: "last"] != nil)

        let request = try #require(backend.requests.last)
        #expect(request.path == "posts")
        #expect(
            request.query == [
                URLQueryItem(name: "_page", value: "2"), URLQueryItem(name: "_limit", value: "10"),
            ])
    }

    @Test("the first page has no previous, the last no next")
    func edges() async throws {
        let posts = PostRepository(backend: try Seed.placeholder())
        let first = try await posts.findPage(1, size: 10).value
        #expect(!first.hasPrevious && first.hasNext)
        let last = try await posts.findPage(10, size: 10).value
        #expect(last.hasPrevious && !last.hasNext)
        #expect(last.items.map(\.id) == Array(91...100))
    }

    @Test("a page past the end is an empty last page")
    func pastTheEnd() async throws {
        let page = try await PostRepository(backend: try Seed.placeholder()).findPage(11, size: 10).value
        #expect(page.items.isEmpty)
        #expect(!page.hasNext)
        #expect(page.total == 100)
    }

    @Test("findPage with a query pages the matches")
    func findPageQuery() async throws {
        let backend = try Seed.placeholder()
        let page = try await PostRepository(backend: backend).findPage(2, size: 4, query: ["userId": 3]).value
        #expect(page.items.map(\.id) == [25, 26, 27, 28])
        #expect(page.total == 10)
        #expect(backend.requests.last?.query.first == URLQueryItem(name: "userId", value: "3"))
    }

    @Test(
        "a page number or size below 1 is .invalidRequest and sends nothing",
        arguments: [(0, 10), (1, 0), (-1, -1)])
    func invalidPage(number: Int, size: Int) async throws {
        let backend = try Seed.placeholder()
        let error = await PostRepository(backend: backend).findPage(number, size: size).result
            .failure
        #expect(error?.caseName == "invalidRequest")
        #expect(backend.requests.isEmpty)
    }

    @Test("a malformed X-Total-Count is .decoding naming the header")
    func malformedTotal() async throws {
        let backend = try Seed.placeholder()
        backend.route(.get, "posts") { _ in
            BackendResponse(status: 200, headers: ["X-Total-Count": "lots"], body: Data("[]".utf8))
        }
        let error = await PostRepository(backend: backend).findPage(1, size: 10).result.failure
        guard case .decoding(let failure) = error else {
            Issue.record("expected .decoding, got \(String(describing: error))")
            return
        }
        #expect(failure.codingPath == "header X-Total-Count")
    }

    @Test("pages(size: 7) yields 15 pages covering ids 1–100 once")
    func pages() async throws {
        let backend = try Seed.placeholder()
        var numbers: [Int] = []
        var ids: [Int] = []
        for try await page in PostRepository(backend: backend).pages(size: 7) {
            numbers.append(page.number)
            ids += page.items.map(\.id)
        }
        #expect(numbers == Array(1...15))
        #expect(ids == Array(1...100))
        #expect(backend.requests.count == 15)
    }

    @Test("pages of an empty listing yield nothing")
    func emptyPages() async throws {
        var count = 0
        for try await _ in PostRepository(
            backend: try InMemoryBackend(database: Data(#"{"posts": []}"#.utf8))
        )
        .pages(size: 5) {
            count += 1
        }
        #expect(count == 0)
    }

    @Test("a failure mid-way ends the sequence with that error")
    func pagesFailure() async throws {
        let backend = try Seed.placeholder()
        var seen = 0
        await #expect(throws: ServiceError.self) {
            for try await _ in PostRepository(backend: backend).pages(size: 30) {
                seen += 1
                backend.failNext(1, status: 500)
            }
        }
        #expect(seen == 1)
    }
}
