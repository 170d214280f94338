import Depot
import DepotInMemory
import Foundation
import Testing

/// json-server 0.17's write rules that a random sequence of writes exercises: the
/// database-wide sweep of orphans on every `DELETE` (its `destroy` + `getRemovable`), ids
/// taken from the ids present at the time of the `POST` (its `createId`), and the 404 of a
/// name the backend does not hold.
@Suite("InMemoryBackend write rules of json-server")
struct InMemoryWriteRuleTests {
    @Test("json-server's DELETE sweeps orphans database-wide: a comment whose postId refers to nothing goes")
    func sweepsUnrelatedOrphans() async throws {
        let backend = try MemoryFixture.backend()
        let created = await memorySend(backend, .post, "comments", body: #"{"postId": false, "body": "x"}"#)
        let id = try #require(created.memoryJSON?["id"]?.intValue)
        #expect(await memorySend(backend, .get, "comments/\(id)").memoryResponse?.status == 200)
        // Deleting post 8 has nothing to do with that comment, but the sweep finds it.
        #expect(await memorySend(backend, .delete, "posts/8").memoryResponse?.status == 200)
        #expect(memoryKind(await memorySend(backend, .get, "comments/\(id)").memoryError) == "notFound")
        #expect(backend.records(in: "comments").count == 297)
    }

    @Test("json-server's DELETE sweeps also when the DELETE itself is a 404")
    func sweepsOnNotFound() async throws {
        let backend = try MemoryFixture.backend()
        _ = await memorySend(backend, .post, "comments", body: #"{"id": 900, "postId": 4242}"#)
        let answer = await memorySend(backend, .delete, "users/77")
        #expect(memoryKind(answer.memoryError) == "notFound")
        #expect(answer.memoryError?.statusCode == 404)
        #expect(memoryKind(await memorySend(backend, .get, "comments/900").memoryError) == "notFound")
        #expect(backend.records(in: "comments").count == 300)
    }

    @Test("json-server sweeps once per DELETE: a user's posts go, their comments only at the next DELETE")
    func oneSweepPerRequest() async throws {
        let backend = try MemoryFixture.backend()
        #expect(await memorySend(backend, .delete, "users/5").memoryResponse?.status == 200)
        #expect(backend.records(in: "users").count == 9)
        #expect(backend.records(in: "posts").count == 90)
        // The comments of posts 41...50 still point at posts that are gone now.
        #expect(backend.records(in: "comments").count == 300)
        #expect(
            await memorySend(backend, .get, "comments", query: [("postId", "41")]).memoryIDs == [
                121, 122, 123,
            ])
        // Any DELETE, even of a missing record, removes them.
        #expect(memoryKind(await memorySend(backend, .delete, "posts/999").memoryError) == "notFound")
        #expect(backend.records(in: "comments").count == 270)
        #expect(await memorySend(backend, .get, "comments", query: [("postId", "41")]).memoryIDs == [])
    }

    @Test("json-server checks a foreign key only against an existing collection <plural>, by id text")
    func foreignKeyRules() async throws {
        let database = #"""
            {"posts": [{"id": 1}, {"id": "2"}],
             "notes": [{"id": 1, "postId": "1"}, {"id": 2, "postId": 2}, {"id": 3, "postId": 3},
                       {"id": 4, "authorId": 9}, {"id": 5, "categoryId": 1}, {"id": 6, "postId": null},
                       {"id": 7, "title": "no key"}],
             "categories": [{"id": 1}]}
            """#
        let backend = try InMemoryBackend(database: Data(database.utf8))
        #expect(memoryKind(await memorySend(backend, .delete, "posts/5").memoryError) == "notFound")
        // "1" finds 1 and 2 finds "2" (texts compared); 3 refers to nothing; there are no
        // "authors", so authorId is no foreign key; categoryId finds categories (the plural).
        let ids = backend.records(in: "notes").compactMap { $0["id"]?.intValue }
        #expect(ids == [1, 2, 4, 5, 6, 7])
    }

    @Test(
        "a null foreign key refers to nothing and is kept; DELETE answers 200 (json-server: 500 after removing)"
    )
    func nullForeignKey() async throws {
        let backend = try MemoryFixture.backend()
        let created = await memorySend(
            backend, .post, "posts", body: #"{"userId": null, "title": "orphan?"}"#)
        let id = try #require(created.memoryJSON?["id"]?.intValue)
        _ = await memorySend(backend, .post, "comments", body: #"{"id": 900, "postId": 4242}"#)
        let answer = await memorySend(backend, .delete, "posts/3")
        #expect(answer.memoryResponse?.status == 200)
        #expect(answer.memoryJSON == [:])
        #expect(await memorySend(backend, .get, "posts/\(id)").memoryJSON?["userId"] == .null)
        #expect(memoryKind(await memorySend(backend, .get, "posts/3").memoryError) == "notFound")
        // The sweep still runs for the other records: post 3's comments and comment 900 go.
        #expect(backend.records(in: "comments").count == 297)
        #expect(memoryKind(await memorySend(backend, .get, "comments/900").memoryError) == "notFound")
    }

    @Test("json-server's createId: max + 1 at the time of the POST, so a deleted largest id is given again")
    func idReusedAfterDelete() async throws {
        let backend = try MemoryFixture.backend()
        #expect(await memorySend(backend, .post, "posts", body: "{}").memoryJSON?["id"] == 101)
        #expect(await memorySend(backend, .delete, "posts/101").memoryResponse?.status == 200)
        #expect(await memorySend(backend, .post, "posts", body: "{}").memoryJSON?["id"] == 101)
        #expect(await memorySend(backend, .delete, "posts/101").memoryResponse?.status == 200)
        #expect(await memorySend(backend, .delete, "posts/100").memoryResponse?.status == 200)
        #expect(await memorySend(backend, .post, "posts", body: "{}").memoryJSON?["id"] == 100)
    }

    @Test(
        "json-server's createId takes lodash's maxBy: a string wins only by JavaScript's >, in record order",
        arguments: [
            (#"[{"id": 1}, {"id": "abc"}, {"id": 4}]"#, "5"),  // "abc" > 1 is false
            (#"[{"id": 1}, {"id": "50"}]"#, "random"),  // "50" > 1: the largest is a string
            (#"[{"id": "abc"}, {"id": 7}]"#, "random"),  // 7 > "abc" is false: "abc" stays
            (#"[{"id": "5"}, {"id": 10}]"#, "11"),  // 10 > "5"
            (#"[{"id": 2.5}, {"id": 1}]"#, "3.5"),
            (#"[{"id": null}, {"id": 3}]"#, "4"),
        ])
    func idFromMaxBy(records: String, expected: String) async throws {
        let backend = try InMemoryBackend(database: Data(#"{"things": \#(records)}"#.utf8))
        let id = try #require(await memorySend(backend, .post, "things", body: "{}").memoryJSON?["id"])
        if expected == "random" {
            #expect(id.stringValue?.count == 7)
        } else {
            #expect(id == (try JSONDecoder().decode(JSONValue.self, from: Data(expected.utf8))))
        }
    }

    @Test("InMemoryBackend() + create: 404 with {} as json-server, and a description saying how to seed")
    func createWithoutCollection() async throws {
        let backend = InMemoryBackend()
        let answer = await memorySend(backend, .post, "posts", body: #"{"title": "x"}"#)
        let error = try #require(answer.memoryError)
        #expect(memoryKind(error) == "notFound")
        #expect(error.statusCode == 404)
        guard case .notFound(let response) = error else { return }
        #expect(response.body == Data("{}".utf8))
        let description = error.errorDescription ?? ""
        #expect(description.hasPrefix("Not found (404): InMemoryBackend holds no collection \"posts\""))
        #expect(description.contains(#"InMemoryBackend(collections: ["posts"])"#))
        // The same classifier reads the same response from any backend.
        let network = ServiceError(
            response: BackendResponse(status: 404, headers: response.headers, body: response.body),
            for: BackendRequest(method: .post, path: "posts"))
        #expect(network == error)
        // A 404 for an id of a collection it holds says nothing more.
        let seeded = InMemoryBackend(collections: ["posts"])
        let missing = await memorySend(seeded, .get, "posts/1").memoryError
        #expect(missing?.errorDescription == "Not found (404)")
    }
}
