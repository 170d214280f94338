import Depot
import DepotInMemory
import Foundation
import Testing

/// Answers where InMemoryBackend once differed from json-server 0.17.4 (issue 15): each
/// test names the json-server behaviour it pins, read from json-server 0.17.4's source
/// (`src/server/router/*.js`, `src/server/body-parser.js`) and compared with its answers.
@Suite("InMemoryBackend answers what json-server 0.17.4 answers")
struct InMemoryFidelityTests {
    // MARK: - Item 1: an empty _like

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

// MARK: - Items 3 and 4: 404 bodies, methods a route does not serve

extension InMemoryFidelityTests {
    @Test(
        "json-server: a 404 (unknown name, id or path) has the body {}; error.message is nil but for an unknown name",
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
        if path.hasPrefix("nope") {
            // A name the backend does not hold: the body stays {}; a header Depot reads says why.
            #expect(error?.message?.hasPrefix(#"InMemoryBackend holds no collection "nope""#) == true)
        } else {
            #expect(error?.message == nil)
        }
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

// MARK: - Item 5: unknown collections on write

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

// MARK: - Item 6: nested POST Location

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

// MARK: - Item 2: bodies by Content-Type

/// A request with `body` sent as `contentType` (none when `nil`).
private func typed(
    _ method: HTTPMethod, _ path: String, _ body: String, _ contentType: String?
) -> BackendRequest {
    var request = BackendRequest(method: method, path: path, body: Data(body.utf8))
    if let contentType { request.headers["Content-Type"] = contentType }
    return request
}

extension InMemoryFidelityTests {
    @Test(
        "json-server: a urlencoded POST (bodyParser.urlencoded, extended: false) is 201 with the values stored as strings"
    )
    func formPost() async throws {
        let backend = try MemoryFixture.backend()
        let created = await backend.send(
            typed(.post, "posts", "title=form&userId=3", "application/x-www-form-urlencoded")
        ).result
        #expect(created.memoryResponse?.status == 201)
        #expect(created.memoryResponse?.headers["Location"] == "http://localhost/posts/101")
        #expect(created.memoryJSON == ["id": 101, "title": "form", "userId": "3"])
        #expect(backend.records(in: "posts").last == ["id": 101, "title": "form", "userId": "3"])
        // Node's querystring: `+` is a space, escapes decode, a repeated name is an array,
        // a name without `=` is "", the media type's case and parameters do not matter.
        let rich = await backend.send(
            typed(
                .post, "posts", "title=a+b%26c&tag=x&tag=y&tag=z&draft&caf%C3%A9=%E2%9C%93",
                "Application/X-WWW-Form-URLEncoded; charset=UTF-8")
        ).result
        #expect(
            rich.memoryJSON == [
                "id": 102, "title": "a b&c", "tag": ["x", "y", "z"], "draft": "", "café": "✓",
            ])
    }

    @Test("json-server: a urlencoded PATCH merges and a urlencoded PUT replaces, values as strings, id kept")
    func formPatchAndPut() async throws {
        let backend = try MemoryFixture.backend()
        let form = "application/x-www-form-urlencoded"
        let patched = await backend.send(typed(.patch, "posts/1", "title=patched&views=7", form)).result
        #expect(
            patched.memoryJSON == [
                "id": 1, "userId": 1, "title": "patched", "body": "body of post 1", "views": "7",
            ])
        let replaced = await backend.send(typed(.put, "posts/2", "title=replaced&id=9", form)).result
        #expect(replaced.memoryJSON == ["id": 2, "title": "replaced"])
        let profile = await backend.send(typed(.patch, "profile", "theme=light", form)).result
        #expect(profile.memoryJSON == ["name": "Ada", "theme": "light"])
        // A nested POST sets the foreign key as it does for JSON (stored as the parent's id).
        let nested = await backend.send(typed(.post, "users/4/posts", "title=nested", form)).result
        #expect(nested.memoryJSON == ["id": 101, "userId": 4, "title": "nested"])
    }

    @Test("Depot's own .form([...]) body reaches InMemoryBackend as json-server reads it")
    func repositoryFormBody() async throws {
        struct Stored: Decodable, Sendable, Equatable {
            var id: Int
            var title: String
            var tag: [String]
        }
        let backend = try MemoryFixture.backend()
        let stored = try await PostRepository(backend: backend).request(
            .post, ["posts"], body: .form([("title", "from a form"), ("tag", "a"), ("tag", "b")]),
            as: Stored.self
        ).value
        #expect(stored == Stored(id: 101, title: "from a form", tag: ["a", "b"]))
        #expect(backend.requests.last?.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test(
        "json-server: a body of a type neither body parser reads is req.body = {}: POST stores only an id, PATCH changes nothing",
        arguments: ["text/plain", "multipart/form-data; boundary=x", "application/merge-patch+json"])
    func unparsedBodyIsEmptyObject(contentType: String) async throws {
        let backend = try MemoryFixture.backend()
        let json = #"{"title": "ignored"}"#
        let created = await backend.send(typed(.post, "posts", json, contentType)).result
        #expect(created.memoryResponse?.status == 201)
        #expect(created.memoryJSON == ["id": 101])
        let patched = await backend.send(typed(.patch, "posts/1", json, contentType)).result
        #expect(patched.memoryJSON == MemoryFixture.posts()[0])
        // Not even a body that is not JSON at all is refused: json-server never reads it.
        #expect(
            await backend.send(typed(.put, "posts/2", "{not json", contentType)).result.memoryJSON == [
                "id": 2
            ])
    }

    @Test("a body without Content-Type is JSON, the type URLSessionBackend sends it with")
    func untypedBodyIsJSON() async throws {
        let backend = try MemoryFixture.backend()
        let created = await backend.send(typed(.post, "posts", #"{"title": "json"}"#, nil)).result
        #expect(created.memoryJSON == ["id": 101, "title": "json"])
        let malformed = await backend.send(typed(.post, "posts", "title=form", nil)).result
        #expect(malformed.memoryError?.statusCode == 400)
        // (URLRequestBuilderTests pins the URLSessionBackend side: a body without a type
        // goes out as application/json.)
    }

    @Test("a route handler reads a urlencoded body as json-server's handlers do (req.body)")
    func routeContextForm() async throws {
        struct Vote: Decodable, Sendable {
            var kind: String
            var weight: String
        }
        let backend = InMemoryBackend()
        backend.route(.post, "votes") { context throws(ServiceError) in
            let vote = try context.decodeBody(as: Vote.self)
            return .json(["body": context.body ?? .null, "kind": .string(vote.kind)], status: 201)
        }
        let answer = await backend.send(
            typed(.post, "votes", "kind=up&weight=2", "application/x-www-form-urlencoded")
        ).result
        #expect(answer.memoryJSON == ["body": ["kind": "up", "weight": "2"], "kind": "up"])
        let plain = await backend.send(typed(.post, "votes", "kind=up", "text/plain")).result
        #expect(plain.memoryError?.statusCode == 400)
    }
}

// MARK: - Kept: nested entity paths, with a parent check

extension InMemoryFidelityTests {
    @Test(
        "a nested entity path (json-server: 404) answers only a record its parent's listing holds",
        arguments: [HTTPMethod.get, .head, .put, .patch, .delete])
    func nestedEntityChecksItsParent(method: HTTPMethod) async throws {
        let backend = try MemoryFixture.backend()
        let body: String? = method == .put || method == .patch ? #"{"title": "moved"}"# : nil
        // Post 15 belongs to user 2: not under user 1, and untouched.
        let elsewhere = await memorySend(backend, method, "users/1/posts/15", body: body)
        #expect(memoryKind(elsewhere.memoryError) == "notFound")
        #expect(elsewhere.memoryError?.response?.body == (method == .head ? Data() : Data("{}".utf8)))
        #expect(backend.records(in: "posts")[14] == MemoryFixture.posts()[14])
        // Under its own parent it is answered as /posts/15 is.
        let own = await memorySend(backend, method, "users/2/posts/15", body: body)
        #expect(own.memoryResponse?.status == 200)
        // Comment 7 belongs to post 3; comments have no userId, so /users/1/comments lists
        // every comment (json-server drops the filter) and /users/1/comments/7 answers it.
        #expect(memoryKind(await memorySend(backend, .get, "posts/2/comments/7").memoryError) == "notFound")
        #expect(await memorySend(backend, .get, "posts/3/comments/7").memoryJSON?["id"] == 7)
        #expect(await memorySend(backend, .get, "users/1/comments/7").memoryJSON?["id"] == 7)
    }

    @Test(
        "a PUT or PATCH through a nested entity path keeps the record under its parent, as a nested POST sets it"
    )
    func nestedEntityWritesKeepTheParent() async throws {
        let backend = try MemoryFixture.backend()
        let put = await memorySend(backend, .put, "users/2/posts/15", body: #"{"title": "t", "userId": 9}"#)
        #expect(put.memoryJSON == ["id": 15, "title": "t", "userId": 2])
        let patch = await memorySend(backend, .patch, "users/2/posts/15", body: #"{"userId": 3}"#)
        #expect(patch.memoryJSON == ["id": 15, "title": "t", "userId": 2])
        #expect(await memorySend(backend, .get, "users/2/posts").memoryIDs?.contains(15) == true)
    }
}

// MARK: - Kept: the README table

/// The answers the README's "Deliberate differences from json-server" table lists, one
/// test each, so that the table stays true.
@Suite("InMemoryBackend's deliberate differences from json-server 0.17.4")
struct InMemoryDeliberateDifferenceTests {
    @Test("a taken id is 409 .conflict (json-server: 500 \"Insert failed, duplicate id\")")
    func duplicateID() async throws {
        let error = await memorySend(try MemoryFixture.backend(), .post, "posts", body: #"{"id": 3}"#)
            .memoryError
        #expect(memoryKind(error) == "conflict")
    }

    @Test(
        "an invalid _like is 400 naming it (json-server: 500 with a stack trace)",
        arguments: ["[", "(", "*a"])
    func invalidLike(pattern: String) async throws {
        let error = await memorySend(
            try MemoryFixture.backend(), .get, "posts", query: [("title_like", pattern)]
        )
        .memoryError
        #expect(error?.statusCode == 400)
        #expect(error?.message?.contains("title_like") == true)
    }

    @Test(
        "a JSON body that does not parse or is no object is 400 (json-server: 500)",
        arguments: ["{x", "[1]", #""x""#])
    func badJSONBody(body: String) async throws {
        let error = await memorySend(try MemoryFixture.backend(), .post, "posts", body: body).memoryError
        #expect(error?.statusCode == 400)
        #expect(error?.message?.isEmpty == false)
    }

    @Test("_expand on a record without the foreign key leaves it as it is (json-server: 500)")
    func expandWithoutForeignKey() async throws {
        let backend = try InMemoryBackend(
            database: Data(#"{"users": [{"id": 1}], "posts": [{"id": 1}, {"id": 2, "userId": null}]}"#.utf8))
        let answer = await memorySend(backend, .get, "posts", query: [("_expand", "user")])
        #expect(answer.memoryJSON == [["id": 1], ["id": 2, "userId": .null]])
    }

    @Test(
        "an odd page number gets well-formed page links, with json-server's status, body and total",
        arguments: [("abc", 1), ("0", 1), ("-1", 1), ("01", 1), ("1.5", 1), ("2.9", 2)])
    func oddPageNumbers(page: String, number: Int) async throws {
        let answer = await memorySend(
            try MemoryFixture.backend(), .get, "posts", query: [("_page", page), ("_limit", "25")])
        let response = try #require(answer.memoryResponse)
        #expect(answer.memoryIDs == Array((number - 1) * 25 + 1...number * 25))
        #expect(response.headers["X-Total-Count"] == "100")
        let links = try LinkHeader.parse(response.headers["Link"] ?? "")
        #expect(links[rel: "next"]?.href == "http://localhost/posts?_page=\(number + 1)&_limit=25")
        #expect(links[rel: "last"]?.href == "http://localhost/posts?_page=4&_limit=25")
    }

    @Test("a nested POST stores the parent's id as stored, the number 1 (json-server: the text \"1\")")
    func nestedPostStoresANumber() async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .post, "users/1/posts", body: "{}")
        #expect(answer.memoryJSON?["userId"] == 1)
    }

    @Test("a POST's Location is the path plus the id, without the query (json-server: /posts?x=1/101)")
    func locationWithoutQuery() async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .post, "posts?x=1", body: "{}")
        #expect(answer.memoryResponse?.headers["Location"] == "http://localhost/posts/101")
    }

    @Test("a lone surrogate escape in a seed is U+FFFD (json-server sends the escape back)")
    func loneSurrogate() async throws {
        let backend = try InMemoryBackend(database: Data(#"{"notes": [{"id": 1, "text": "a\ud800b"}]}"#.utf8))
        #expect(await memorySend(backend, .get, "notes/1").memoryJSON?["text"] == "a\u{FFFD}b")
    }
}
