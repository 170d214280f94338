import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend nested collections and singular objects")
struct InMemoryNestedTests {
    @Test("GET /users/1/posts lists the posts whose userId is 1, with the query applied")
    func nestedList() async throws {
        let backend = try MemoryFixture.backend()
        #expect(await memorySend(backend, .get, "users/1/posts").memoryIDs == Array(1...10))
        #expect(await memorySend(backend, .get, "posts/4/comments").memoryIDs == [10, 11, 12])
        let page = await memorySend(
            backend, .get, "users/2/posts",
            query: [("_page", "2"), ("_limit", "4"), ("_sort", "id"), ("_order", "desc")])
        #expect(page.memoryIDs == [16, 15, 14, 13])
        #expect(page.memoryResponse?.headers["X-Total-Count"] == "10")
        #expect(
            page.memoryResponse?.headers["Link"]?.hasPrefix(
                "<http://localhost/users/2/posts?_page=1&_limit=4&_sort=id&_order=desc>; rel=\"first\"")
                == true)
        #expect(await memorySend(backend, .get, "users/99/posts").memoryIDs == [])
        #expect(memoryKind(await memorySend(backend, .get, "users/1/albums").memoryError) == "notFound")
    }

    @Test("POST /users/1/posts stores the post in posts with userId 1")
    func nestedCreate() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(
            backend, .post, "users/1/posts", body: #"{"title": "mine", "userId": 7}"#)
        #expect(answer.memoryResponse?.status == 201)
        #expect(answer.memoryResponse?.headers["Location"] == "http://localhost/users/1/posts/101")
        #expect(answer.memoryJSON == ["id": 101, "userId": 1, "title": "mine"])
        #expect(await memorySend(backend, .get, "users/1/posts").memoryIDs == Array(1...10) + [101])

        // The parent need not exist; an id that is not a number is stored as its text.
        let orphan = await memorySend(backend, .post, "authors/a%2Fb/posts", body: "{}")
        #expect(orphan.memoryJSON == ["id": 102, "authorId": "a/b"])
        #expect(await memorySend(backend, .get, "authors/a%2Fb/posts").memoryIDs == [102])
    }

    @Test("/users/1/posts/5 reads, changes and deletes post 5")
    func nestedRecord() async throws {
        let backend = try MemoryFixture.backend()
        #expect(await memorySend(backend, .get, "users/1/posts/5").memoryJSON?["title"] == "post 5")
        #expect(
            await memorySend(backend, .patch, "users/1/posts/5", body: #"{"title": "five"}"#).memoryJSON?[
                "title"] == "five")
        #expect(
            await memorySend(backend, .put, "users/1/posts/5", body: #"{"title": "5"}"#).memoryJSON == [
                "id": 5, "title": "5", "userId": 1,
            ])
        #expect(await memorySend(backend, .delete, "users/1/posts/5").memoryResponse?.status == 200)
        #expect(memoryKind(await memorySend(backend, .get, "posts/5").memoryError) == "notFound")
    }

    @Test("a singular object answers GET, PUT (replace), PATCH (merge) and POST (201)")
    func singular() async throws {
        let backend = try MemoryFixture.backend()
        #expect(await memorySend(backend, .get, "profile").memoryJSON == ["name": "Ada", "theme": "dark"])

        let replaced = await memorySend(backend, .put, "profile", body: #"{"name": "Grace"}"#)
        #expect(replaced.memoryResponse?.status == 200)
        #expect(replaced.memoryJSON == ["name": "Grace"])

        let patched = await memorySend(backend, .patch, "profile", body: #"{"theme": "sepia"}"#)
        #expect(patched.memoryJSON == ["name": "Grace", "theme": "sepia"])
        #expect(
            await memorySend(backend, .get, "/profile").memoryJSON == ["name": "Grace", "theme": "sepia"])
        #expect(backend.object("profile") == ["name": "Grace", "theme": "sepia"])

        let posted = await memorySend(backend, .post, "profile", body: #"{"name": "Hopper"}"#)
        #expect(posted.memoryResponse?.status == 201)
        #expect(posted.memoryResponse?.headers["Location"] == "http://localhost/profile")
        #expect(backend.object("profile") == ["name": "Hopper"])
    }

    @Test("GET /db answers every collection and object")
    func database() async throws {
        let backend = try InMemoryBackend(
            database: Data(#"{"posts": [{"id": 1}], "tags": [], "profile": {"name": "Ada"}}"#.utf8))
        _ = await memorySend(backend, .post, "tags", body: #"{"name": "x"}"#)
        #expect(
            await memorySend(backend, .get, "db").memoryJSON
                == ["posts": [["id": 1]], "profile": ["name": "Ada"], "tags": [["id": 1, "name": "x"]]])
    }
}
