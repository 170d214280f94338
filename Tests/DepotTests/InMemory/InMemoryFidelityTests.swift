import Depot
import Foundation
import Testing

/// Answers where InMemoryBackend once differed from json-server 0.17.4 (issue 15): each
/// test names the json-server behaviour it pins, read from json-server 0.17.4's source
/// (`src/server/router/*.js`, `src/server/body-parser.js`) and compared with its answers.
@Suite("InMemoryBackend answers what json-server 0.17.4 answers")
struct InMemoryFidelityTests {
    @Test(
        "json-server: an empty _like (new RegExp('')) matches every value; null and missing fields still never pass"
    )
    func emptyLikeMatchesEverything() async throws {
        let backend = try MemoryFixture.backend()
        let all = await memorySend(backend, .get, "posts", query: [("title_like", "")])
        #expect(all.memoryResponse?.status == 200)
        #expect(all.memoryIDs == Array(1...100))
        // With another pattern it is an OR that adds nothing: everything still matches.
        #expect(
            await memorySend(backend, .get, "posts", query: [("title_like", "^x"), ("title_like", "")])
                .memoryIDs
                == Array(1...100))
        // A field no record has: json-server's filter gets `undefined` and drops every record.
        #expect(await memorySend(backend, .get, "posts", query: [("nothing_like", "")]).memoryIDs == [])
    }
}
