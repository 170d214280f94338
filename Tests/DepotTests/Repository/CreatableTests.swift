import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("Creatable")
struct CreatableTests {
    @Test("create(draft) sends POST /posts with the draft's JSON and gets id 101 that reads back")
    func createDraft() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let created = try await posts.create(NewPost(userId: 1, title: "Hi", body: "Body")).value
        #expect(created == Post(id: 101, userId: 1, title: "Hi", body: "Body"))

        let request = try #require(backend.requests.last)
        #expect(request.method == .post)
        #expect(request.path == "posts")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(
            Seed.json(request) == ["userId": .int(1), "title": .string("Hi"), "body": .string("Body")])

        #expect(try await posts.findByID(101).value == created)
    }

    @Test("create(entity) keeps the client's id")
    func createEntity() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let post = Post(id: 500, userId: 2, title: "Mine", body: "Chosen id")
        #expect(try await posts.create(post).value == post)
        #expect(Seed.json(backend.requests.last)?["id"] == .int(500))
        #expect(try await posts.findByID(500).value == post)
    }

    @Test("create with an id that exists is .conflict and changes nothing")
    func createDuplicate() async throws {
        let backend = try Seed.placeholder()
        let posts = PostRepository(backend: backend)
        let original = try await posts.findByID(1).value
        let error = await posts.create(Post(id: 1, userId: 9, title: "Dup", body: "")).result
            .failure
        #expect(error?.caseName == "conflict")
        #expect(error?.statusCode == 409)
        #expect(try await posts.findByID(1).value == original)
    }

    @Test("a draft that cannot be encoded is .invalidRequest and sends nothing")
    func unencodableDraft() async throws {
        let backend = try Seed.placeholder()
        let error = await PostRepository(backend: backend).create(BrokenDraft()).result.failure
        #expect(error?.caseName == "invalidRequest")
        #expect(backend.requests.isEmpty)
    }

    @Test("a failing server leaves the collection unchanged")
    func serverFailure() async throws {
        let backend = try Seed.placeholder()
        backend.failNext(1, status: 500)
        let posts = PostRepository(backend: backend)
        let error = await posts.create(NewPost(userId: 1, title: "Lost", body: "")).result.failure
        #expect(error?.caseName == "serverError")
        #expect(try await posts.findAll().value.count == 100)
    }

    @Test("8 concurrent tasks creating 200 posts each end with 1600 distinct ids")
    func concurrentCreates() async throws {
        let backend = InMemoryBackend(collections: ["posts"])
        let posts = PostRepository(backend: backend)
        let ids = try await withThrowingTaskGroup(of: [Int].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var ids: [Int] = []
                    for index in 0..<200 {
                        let draft = NewPost(userId: task, title: "t\(task)-\(index)", body: "")
                        ids.append(try await posts.create(draft).value.id)
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 1600)
        #expect(Set(ids).count == 1600)
        #expect(try await posts.findAll().value.count == 1600)
    }
}
