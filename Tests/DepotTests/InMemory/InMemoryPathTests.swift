import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend paths")
struct InMemoryPathTests {
    @Test(
        "relative, rooted, trailing-slash and same-origin absolute paths reach the same record",
        arguments: [
            "posts/3", "/posts/3", "posts/3/", "http://localhost/posts/3", "HTTP://LOCALHOST:80/posts/3",
            "//localhost/posts/3", "posts/3#fragment", "posts/%33",
        ])
    func equivalentPaths(path: String) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, path)
        #expect(answer.memoryJSON?["id"] == 3)
    }

    @Test("a query string inside the path is read, before the request's own items")
    func queryInPath() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .get, "posts?userId=2&_page=1", query: [("_limit", "3")])
        #expect(answer.memoryIDs == [11, 12, 13])
        #expect(
            answer.memoryResponse?.headers["Link"]?.contains(
                "<http://localhost/posts?userId=2&_page=2&_limit=3>; rel=\"next\"") == true)
        let spaced = await memorySend(backend, .get, "posts?title=post+7&q=post%207")
        #expect(spaced.memoryIDs == [7])
    }

    @Test(
        "an id that looks like a path stays one id inside its collection",
        arguments: ["../users", "a/b?c#d", "..", ".", "1?x=1", "%2F", "users/1", " spaced ", "ünï"])
    func hostileIDs(id: String) async throws {
        let backend = try InMemoryBackend(seed: ["users": MemoryFixture.users(), "notes": []])
        let created = await backend.send(
            BackendRequest(
                method: .post, segments: ["notes"],
                body: Data(try JSONEncoder().encode(["id": id, "text": "kept"])))
        ).result
        #expect(created.memoryJSON?["id"] == .string(id))
        let location = try #require(created.memoryResponse?.headers["Location"])
        #expect(location == "http://localhost/notes/" + PathSegment.encode(id))

        let found = await backend.send(BackendRequest(method: .get, segments: ["notes", id])).result
        #expect(found.memoryJSON == ["id": .string(id), "text": "kept"])
        #expect(await memorySend(backend, .get, location).memoryJSON?["text"] == "kept")
        let patched = await backend.send(
            BackendRequest(method: .patch, segments: ["notes", id], body: Data(#"{"text": "changed"}"#.utf8))
        ).result
        #expect(patched.memoryJSON?["text"] == "changed")
        #expect(
            await backend.send(BackendRequest(method: .delete, segments: ["notes", id])).result
                .memoryResponse?.status == 200)

        #expect(backend.records(in: "users") == MemoryFixture.users())
        #expect(backend.records(in: "notes").isEmpty)
    }

    @Test("an absolute URL of another origin is .invalidRequest; one outside the base path is 404")
    func origins() async throws {
        let backend = try MemoryFixture.backend()
        backend.baseURL = try #require(URL(string: "https://api.example.com/v1"))
        for path in [
            "https://evil.example.com/v1/posts/1", "http://api.example.com/v1/posts/1",
            "https://api.example.com:8443/v1/posts/1",
        ] {
            #expect(
                memoryKind(await memorySend(backend, .get, path).memoryError) == "invalidRequest", "\(path)")
        }
        #expect(
            memoryKind(await memorySend(backend, .get, "https://api.example.com/v2/posts/1").memoryError)
                == "notFound")
        #expect(await memorySend(backend, .get, "https://API.example.com/v1/posts/1").memoryJSON?["id"] == 1)
        #expect(await memorySend(backend, .get, "/v1/posts/1").memoryJSON?["id"] == 1)
        #expect(await memorySend(backend, .get, "/posts/1").memoryJSON?["id"] == 1)
        let created = await memorySend(backend, .post, "posts", body: "{}")
        #expect(created.memoryResponse?.headers["Location"] == "https://api.example.com/v1/posts/101")
        #expect(backend.requests.count == 8)
    }

    @Test(
        "OPTIONS answers 204 with Allow for a resource it holds, 404 otherwise (json-server's CORS layer: 204 anywhere)"
    )
    func options() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .options, "posts/1")
        #expect(answer.memoryResponse?.status == 204)
        #expect(answer.memoryResponse?.headers["Allow"] == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
        #expect(
            await memorySend(backend, .options, "posts").memoryResponse?.headers["Allow"]
                == "GET, HEAD, POST, OPTIONS")
        #expect(memoryKind(await memorySend(backend, .options, "nothing").memoryError) == "notFound")
        #expect(memoryKind(await memorySend(backend, .options, "users/1/posts/15").memoryError) == "notFound")
    }

    @Test("HEAD on a record answers its headers without a body; on a missing one, 404")
    func head() async throws {
        let backend = try MemoryFixture.backend()
        let response = try #require(await memorySend(backend, .head, "posts/1").memoryResponse)
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        let error = await memorySend(backend, .head, "posts/1000").memoryError
        #expect(error?.statusCode == 404)
        #expect(error?.response?.body.isEmpty == true)
    }
}
