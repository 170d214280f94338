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

extension InMemoryFidelityTests {
    @Test(
        "json-server: a 404 (unknown name, id or path) has the body {}, so error.message is nil as in production",
        arguments: [
            (HTTPMethod.get, "posts/999"), (.get, "nope"), (.get, "nope/1"), (.put, "posts/999"),
            (.patch, "posts/999"), (.delete, "posts/999"), (.delete, "nope/1"), (.get, "profile/1"),
            (.get, "a/b/c/d/e"), (.get, ""), (.get, "users/1/nothing"),
            (.get, "http://localhost/elsewhere/posts"),
        ])
    func notFoundBodyIsEmptyObject(method: HTTPMethod, path: String) async throws {
        let backend = try MemoryFixture.backend()
        backend.baseURL = try #require(URL(string: "http://localhost/api/"))
        let body: String? = method == .get || method == .delete ? nil : "{}"
        let error = await memorySend(backend, method, path, body: body).memoryError
        #expect(memoryKind(error) == "notFound")
        #expect(error?.statusCode == 404)
        #expect(error?.response?.body == Data("{}".utf8))
        #expect(error?.response?.headers["Content-Type"] == BackendResponse.jsonContentType)
        #expect(error?.message == nil)
    }

    @Test(
        "json-server: a method a route does not serve (PUT /posts, DELETE /posts, …) is its 404 {}, not a 405",
        arguments: [
            (HTTPMethod.delete, "posts"), (.put, "posts"), (.patch, "posts"), (.post, "posts/1"),
            (.delete, "profile"), (.put, "users/1/posts"), (.delete, "users/1/posts"),
            (.post, "users/1/posts/3"),
        ])
    func unservedMethodIsNotFound(method: HTTPMethod, path: String) async throws {
        let backend = try MemoryFixture.backend()
        let before = backend.records(in: "posts")
        let error = await memorySend(backend, method, path, body: method == .delete ? nil : "{}").memoryError
        #expect(memoryKind(error) == "notFound")
        #expect(error?.statusCode == 404)
        #expect(error?.response?.body == Data("{}".utf8))
        #expect(error?.response?.headers["Allow"] == nil)
        #expect(backend.records(in: "posts") == before)
        #expect(backend.object("profile") != nil)
    }
}

extension InMemoryFidelityTests {
    @Test(
        "json-server: POST /nothing and POST /users/1/nothing are 404 {}: it routes only the names its db.json has",
        arguments: ["albums", "users/1/albums", "posts/1/nothing"])
    func postToUnknownCollectionIsNotFound(path: String) async throws {
        let backend = try MemoryFixture.backend()
        let error = await memorySend(backend, .post, path, body: #"{"title": "First"}"#).memoryError
        #expect(memoryKind(error) == "notFound")
        #expect(error?.response?.body == Data("{}".utf8))
        // Nothing was created: a later read is 404 too, as on json-server.
        #expect(memoryKind(await memorySend(backend, .get, "albums").memoryError) == "notFound")
        #expect(backend.records(in: "albums").isEmpty)
        #expect(await memorySend(backend, .get, "db").memoryJSON?["albums"] == nil)
    }

}

extension InMemoryFidelityTests {
    @Test(
        "json-server: a nested POST's Location is the request URL plus the id (/users/1/posts/101)",
        arguments: [
            ("users/1/posts", "http://localhost/users/1/posts/101"),
            ("/posts/1/comments", "http://localhost/posts/1/comments/301"),
            ("http://localhost/users/2/profile", "http://localhost/users/2/profile"),
            ("posts", "http://localhost/posts/101"),
        ])
    func nestedLocation(path: String, location: String) async throws {
        let backend = try MemoryFixture.backend()
        let created = await memorySend(backend, .post, path, body: #"{"title": "nested"}"#)
        #expect(created.memoryResponse?.status == 201)
        #expect(created.memoryResponse?.headers["Location"] == location)
        // It names the record: InMemoryBackend answers the nested entity path (json-server 404s it).
        #expect(await memorySend(backend, .get, location).memoryJSON?["title"] == "nested")
    }
}
