import Depot
import Foundation
import Testing

@Suite("Deletable")
struct DeletableTests {
    @Test("delete(id:) sends DELETE /posts/:id; reading and deleting again are .notFound")
    func deleteByID() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        try await posts.delete(id: 5).value

        let request = try #require(backend.requests.last)
        #expect(request.method == .delete)
        #expect(request.path == "posts/5")
        #expect(request.body == nil)

        #expect(await posts.findByID(5).result.failure?.caseName == "notFound")
        #expect(await posts.delete(id: 5).result.failure?.caseName == "notFound")
        #expect(try await posts.findAll().value.count == 99)
    }

    @Test("delete(entity) deletes by the entity's id")
    func deleteEntity() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let post = try await posts.findByID(7).value
        try await posts.delete(post).value
        #expect(backend.requests.last?.path == "posts/7")
        #expect(await posts.findByID(7).result.failure?.caseName == "notFound")
    }

    @Test("a failed delete keeps the entity")
    func failedDelete() async throws {
        let backend = try Seed.placeholder()
        backend.failNext(1, status: 503, headers: ["Retry-After": "3"])
        let posts = PostRepository(backend: backend)
        let error = await posts.delete(id: 8).result.failure
        guard case .serviceUnavailable(_, let retryAfter) = error else {
            Issue.record("expected .serviceUnavailable, got \(String(describing: error))")
            return
        }
        #expect(retryAfter == 3)
        #expect(try await posts.findByID(8).value.id == 8)
    }
}
