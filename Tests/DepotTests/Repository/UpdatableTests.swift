import Depot
import Foundation
import Testing

@Suite("Updatable")
struct UpdatableTests {
    @Test("update sends PUT /posts/2 with the whole entity and persists it")
    func update() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        var post = try await posts.findByID(2).value
        post.title = "Replaced"
        #expect(try await posts.update(post).value == post)

        let request = try #require(backend.requests.last)
        #expect(request.method == .put)
        #expect(request.path == "posts/2")
        #expect(Seed.json(request)?["title"] == .string("Replaced"))
        #expect(Seed.json(request)?.count == 4)
        #expect(try await posts.findByID(2).value.title == "Replaced")
    }

    @Test("update of a missing entity is .notFound and creates nothing")
    func updateMissing() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let error = await posts.update(Post(id: 9999, userId: 1, title: "", body: "")).result
            .failure
        #expect(error?.caseName == "notFound")
        #expect(try await posts.findAll().value.count == 100)
    }

    @Test("patch sends PATCH /posts/:id with only the changes and merges them")
    func patch() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let before = try await posts.findByID(3).value
        let after = try await posts.patch(3, with: ["title": "Patched"]).value
        #expect(after == Post(id: 3, userId: before.userId, title: "Patched", body: before.body))

        let request = try #require(backend.requests.last)
        #expect(request.method == .patch)
        #expect(request.path == "posts/3")
        #expect(Seed.json(request) == ["title": .string("Patched")])
        #expect(try await posts.findByID(3).value == after)
    }

    @Test("patch of a missing id is .notFound")
    func patchMissing() async throws {
        let backend = try Seed.placeholder()
        let error = await PostRepository(backend: backend).patch(9999, with: ["title": "x"]).result
            .failure
        #expect(error?.caseName == "notFound")
    }

    @Test("a patch answer that is not the entity is .decoding")
    func patchDecoding() async throws {
        let backend = try Seed.placeholder()
        backend.route(.patch, "posts/:id") { _ in
            BackendResponse(status: 200, body: Data(#"{"id": 1, "userId": 1, "title": 7, "body": ""}"#.utf8))
        }
        let error = await PostRepository(backend: backend).patch(1, with: ["title": "x"]).result
            .failure
        guard case .decoding(let failure) = error else {
            Issue.record("expected .decoding, got \(String(describing: error))")
            return
        }
        #expect(failure.codingPath == "title")
        #expect(failure.type == String(describing: Post.self))
    }

    @Test("patch(entity, with:) sends PATCH /posts/:id of the entity with only the changes")
    func patchEntity() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let before = try await posts.findByID(4).value
        let after = try await posts.patch(before, with: ["title": "Patched"]).value
        #expect(after == Post(id: 4, userId: before.userId, title: "Patched", body: before.body))

        let request = try #require(backend.requests.last)
        #expect(request.method == .patch)
        #expect(request.path == "posts/4")
        #expect(Seed.json(request) == ["title": "Patched"])
    }
}
