import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// A secret in a query is redacted wherever the request carries it, and a query that
/// does not percent-decode never stays in the path.
@Suite("Query redaction")
struct QueryRedactionTests {
    /// A feed whose first page links to the next with a token and an undecodable value.
    private func feed() -> InMemoryBackend {
        let backend = InMemoryBackend()
        backend.route(.get, "feed") { context throws(ServiceError) in
            let page = context.request.query.first { $0.name == "page" }?.value ?? "1"
            guard page == "1" else { return .json([["id": 2]]) }
            let next = "<http://localhost/feed?access_token=SECRET&sig=a%ZZb&page=2>; rel=\"next\""
            return .json([["id": 1]], headers: ["Link": next])
        }
        return backend
    }

    private struct Item: Codable, Identifiable, Sendable { var id: Int }

    private struct Feed: PagedRepository {
        typealias Entity = Item
        let backend: any Backend
        let name = "feed"
        let pagination = Pagination.linkHeader
    }

    private final class Lines: Sendable {
        let all = Locked<[String]>([])
        func middleware() -> LoggingMiddleware {
            LoggingMiddleware(redacting: Redaction(queryItems: ["access_token"])) { event in
                var text = [event.description, event.target, event.path]
                text += event.query.map { "\($0.name)=\($0.value ?? "")" }
                text += event.metadata.map { "\($0.key)=\($0.value)" }
                self.all.withLock { $0 += text }
            }
        }
    }

    @Test func aTokenInANextLinkIsRedactedAndTheQueryLeavesThePath() async throws {
        let backend = feed()
        let lines = Lines()
        let feed = Feed(backend: backend.with(lines.middleware()))

        var ids: [Int] = []
        for try await page in feed.pages(size: 1) { ids += page.items.map(\.id) }

        #expect(ids == [1, 2])
        let logged = lines.all.withLock { $0 }
        #expect(!logged.isEmpty)
        #expect(!logged.contains { $0.contains("SECRET") })
        let second = try #require(backend.requests.last)
        // Sent at the server's URL, logged relative to the backend, with the query split out.
        #expect(second.path == "feed")
        #expect(second.query.first { $0.name == "sig" }?.value == "a%ZZb")
        #expect(second.query.first { $0.name == "access_token" }?.value == "SECRET")
    }

    @Test func aQueryWrittenIntoThePathIsRedactedToo() async {
        let lines = Lines()
        let backend = InMemoryBackend().with(lines.middleware())

        _ = await backend.send(
            BackendRequest(path: "feed?access_token=SECRET&x=%ZZ#frag", query: [.init(name: "y", value: "1")])
        ).result

        let logged = lines.all.withLock { $0 }
        #expect(!logged.contains { $0.contains("SECRET") })
        #expect(logged.contains("feed?access_token=<redacted>&x=%25ZZ&y=1"))
    }

    @Test func aTokenInAPathOutsideTheBaseStaysOutOfTheErrorMessage() async throws {
        let lines = Lines()
        let memory = InMemoryBackend()
        memory.baseURL = try #require(URL(string: "http://localhost/api/"))
        let backend = memory.with(lines.middleware())

        let outcome = await backend.send(BackendRequest(path: "http://localhost/other?access_token=SECRET"))
            .result

        #expect(outcome.failure?.statusCode == 404)
        #expect(!(outcome.failure?.description.contains("SECRET") ?? true))
        #expect(!lines.all.withLock { $0 }.contains { $0.contains("SECRET") })
    }

    /// Components decode as json-server's query parser reads them: one that does not
    /// decode is kept as sent.
    @Test(arguments: [
        ("a%ZZb", "a%ZZb"), ("%", "%"), ("a%2", "a%2"), ("a+b%20c", "a b c"), ("%E2%98%83", "☃"),
        ("%FF", "%FF"), ("a%20%ZZ", "a%20%ZZ"), ("plain", "plain"),
    ])
    func decodesQueryComponentsLeniently(text: String, expected: String) {
        #expect(QueryString.decode(Substring(text)) == expected)
    }
}
