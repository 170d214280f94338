import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend records")
struct InMemoryRecordTests {
    @Test("GET /name/:id answers the record, finding an id by its text")
    func findByID() async throws {
        let backend = try InMemoryBackend(
            database: Data(
                #"{"posts": [{"id": 1, "title": "one"}], "notes": [{"id": "abc", "text": "x"}, {"id": 2.5}]}"#
                    .utf8))
        let post = try #require(await memorySend(backend, .get, "posts/1").memoryResponse)
        #expect(post.status == 200)
        #expect(post.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(try JSONDecoder().decode(JSONValue.self, from: post.body) == ["id": 1, "title": "one"])
        #expect(await memorySend(backend, .get, "notes/abc").memoryJSON == ["id": "abc", "text": "x"])
        #expect(await memorySend(backend, .get, "notes/2.5").memoryJSON == ["id": 2.5])
    }

    @Test("POST answers 201 with the stored record and its Location; the next id is max + 1")
    func create() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .post, "posts", body: #"{"userId": 1, "title": "new"}"#)
        let response = try #require(answer.memoryResponse)
        #expect(response.status == 201)
        #expect(response.headers["Location"] == "http://localhost/posts/101")
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(answer.memoryJSON == ["id": 101, "userId": 1, "title": "new"])
        #expect(await memorySend(backend, .get, "posts/101").memoryJSON == answer.memoryJSON)
        #expect(backend.records(in: "posts").count == 101)
    }

    @Test(
        "ids follow json-server 0.17: 1 when empty, max + 1, a kept client id, a reused id after deleting the last"
    )
    func idRules() async throws {
        let backend = InMemoryBackend(collections: ["things"])
        var ids: [JSONValue?] = []
        for body in [
            #"{}"#, #"{"id": 0}"#, #"{"id": 10}"#, #"{"id": null}"#, #"{"id": "x7"}"#, "", #"{"id": ""}"#,
        ] {
            ids.append(
                await memorySend(backend, .post, "things", body: body.isEmpty ? nil : body).memoryJSON?["id"])
        }
        #expect(ids == [1, 2, 10, 11, "x7", 12, 13])
        _ = await memorySend(backend, .delete, "things/13")
        #expect(await memorySend(backend, .post, "things", body: "{}").memoryJSON?["id"] == 13)
        _ = await memorySend(backend, .delete, "things/13")
        _ = await memorySend(backend, .delete, "things/12")
        #expect(await memorySend(backend, .post, "things", body: "{}").memoryJSON?["id"] == 12)
    }

    @Test("a collection of string ids gets random 7-character string ids")
    func stringIDs() async throws {
        let backend = try InMemoryBackend(database: Data(#"{"tags": [{"id": "swift"}]}"#.utf8))
        let id = try #require(
            await memorySend(backend, .post, "tags", body: #"{"name": "new"}"#).memoryJSON?["id"]?.stringValue
        )
        #expect(id.count == 7)
        #expect(
            await memorySend(backend, .get, "tags/\(PathSegment.encode(id))").memoryJSON?["name"] == "new")
    }

    @Test("POST with a taken id is .conflict and changes nothing")
    func duplicate() async throws {
        let backend = try MemoryFixture.backend()
        let before = backend.records(in: "posts")
        for id in ["1", #""1""#] {
            let error = await memorySend(backend, .post, "posts", body: #"{"id": \#(id), "title": "dup"}"#)
                .memoryError
            #expect(memoryKind(error) == "conflict")
            #expect(error?.statusCode == 409)
        }
        #expect(backend.records(in: "posts") == before)
    }

    @Test(
        "a body that is not a JSON object is a 400 and changes nothing",
        arguments: [
            (HTTPMethod.post, "posts"), (.put, "posts/1"), (.patch, "posts/1"), (.post, "users/1/posts"),
            (.put, "profile"), (.patch, "profile"),
        ])
    func badBodies(method: HTTPMethod, path: String) async throws {
        let backend = try MemoryFixture.backend()
        for body in ["{not json", "[1, 2]", #""text""#, "3", "{\"a\": 1} extra"] {
            let error = await memorySend(backend, method, path, body: body).memoryError
            #expect(memoryKind(error) == "clientError", "\(body)")
            #expect(error?.statusCode == 400)
            #expect(error?.message?.isEmpty == false)
        }
        #expect(backend.records(in: "posts") == MemoryFixture.posts())
        #expect(backend.object("profile") == ["name": "Ada", "theme": "dark"])
    }

    @Test("PUT replaces the whole record and keeps the id from the URL")
    func replace() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .put, "posts/1", body: #"{"id": 777, "title": "replaced"}"#)
        #expect(answer.memoryResponse?.status == 200)
        #expect(answer.memoryJSON == ["id": 1, "title": "replaced"])
        #expect(await memorySend(backend, .get, "posts/1").memoryJSON == ["id": 1, "title": "replaced"])
        #expect(memoryKind(await memorySend(backend, .get, "posts/777").memoryError) == "notFound")
    }

    @Test("PATCH merges shallowly and keeps the id")
    func patch() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(
            backend, .patch, "users/1", body: #"{"id": 5, "name": "Ada", "address": {"city": "X"}}"#)
        #expect(answer.memoryResponse?.status == 200)
        #expect(answer.memoryJSON == ["id": 1, "name": "Ada", "username": "user1", "address": ["city": "X"]])
        #expect(await memorySend(backend, .get, "users/1").memoryJSON == answer.memoryJSON)
        #expect(await memorySend(backend, .get, "users/5").memoryJSON?["name"] == "User 5")
    }

    @Test("DELETE answers 200 with {}, then 404; it also deletes the records that pointed at it")
    func delete() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .delete, "posts/1")
        #expect(answer.memoryResponse?.status == 200)
        #expect(answer.memoryJSON == [:])
        #expect(memoryKind(await memorySend(backend, .get, "posts/1").memoryError) == "notFound")
        #expect(memoryKind(await memorySend(backend, .delete, "posts/1").memoryError) == "notFound")
        #expect(backend.records(in: "posts").count == 99)
        // json-server removes dependents: post 1's comments (postId 1) go, others stay.
        #expect(backend.records(in: "comments").count == 297)
        #expect(await memorySend(backend, .get, "comments", query: [("postId", "1")]).memoryIDs == [])
        #expect(await memorySend(backend, .get, "posts/2").memoryJSON?["id"] == 2)
    }

    @Test("8 tasks creating 200 records each end with 1600 distinct ids")
    func concurrentCreates() async throws {
        let backend = InMemoryBackend(collections: ["posts"])
        let ids = await withTaskGroup(of: [Int].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var ids: [Int] = []
                    for index in 0..<200 {
                        let body = #"{"task": \#(task), "index": \#(index)}"#
                        ids.append(
                            await memorySend(backend, .post, "posts", body: body).memoryJSON?["id"]?.intValue
                                ?? -1)
                    }
                    return ids
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 1600)
        #expect(Set(ids).count == 1600)
        #expect(Set(ids) == Set(1...1600))
        #expect(backend.records(in: "posts").count == 1600)
        #expect(backend.requests.count == 1600)
    }

    @Test("the request log keeps every request in order past its chunks of 1024, until cleared")
    func longRequestLog() async throws {
        let backend = InMemoryBackend(collections: ["posts"])
        for index in 0..<2500 {
            _ = await memorySend(backend, .get, "posts/\(index)")
        }
        let paths = backend.requests.map(\.path)
        #expect(paths == (0..<2500).map { "posts/\($0)" })
        backend.clearRequests()
        #expect(backend.requests.isEmpty)
        _ = await memorySend(backend, .get, "posts")
        #expect(backend.requests.map(\.path) == ["posts"])
    }

    @Test("lookups by id stay fast in a large collection")
    func largeCollection() async throws {
        let records = (1...100_000).map { #"{"id":\#($0),"n":\#($0 % 7)}"# }.joined(separator: ",")
        let backend = try InMemoryBackend(database: Data(#"{"rows": [\#(records)]}"#.utf8))
        /// The answer to `method path`, which comes inside `start` (no latency): timed
        /// without waiting for a thread of the test pool.
        func answer(_ method: HTTPMethod, _ path: String) -> Result<BackendResponse, ServiceError>? {
            immediateOutcomes(of: backend.send(BackendRequest(method: method, path: path))).first
        }
        let clock = ContinuousClock()
        let start = clock.now
        for id in stride(from: 1, through: 100_000, by: 1_000) {
            #expect(answer(.get, "rows/\(id)")?.memoryJSON?["id"]?.intValue == id)
        }
        _ = answer(.delete, "rows/50001")
        #expect(answer(.get, "rows/99999")?.memoryJSON?["n"] == .int(99_999 % 7))
        // 101 lookups and a delete, on this thread alone: well under a second unless lookups scan.
        #expect(clock.now - start < .seconds(5))
    }
}
