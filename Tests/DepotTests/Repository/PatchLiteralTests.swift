import Depot
import DepotInMemory
import Foundation
import Testing

/// `/profile` with optional fields, so that `nil` in a patch can clear one.
struct FullProfile: Codable, Sendable, Equatable {
    var name: String
    var theme: String
    var age: Int?
    var nickname: String?
}

struct FullProfileRepository: SingleEntityRepository {
    typealias Entity = FullProfile
    let backend: any Backend
    let name = "profile"
}

@Suite("patch with a dictionary literal of mixed JSON values and nil")
struct PatchLiteralTests {
    /// The body of the last request `backend` received, as JSON.
    private func lastBody(_ backend: InMemoryBackend) throws -> JSONValue {
        let body = try #require(backend.requests.last?.body)
        return try JSONDecoder().decode(JSONValue.self, from: body)
    }

    @Test("patch(id, with:) sends the literal as written and returns the merged entity")
    func byID() async throws {
        let backend = try MemoryFixture.backend()
        let posts = PostRepository(backend: backend)
        let patched = try await posts.patch(
            1, with: ["title": "a", "views": 3, "draft": true, "rating": 4.5, "tags": ["x"], "summary": nil]
        ).value
        #expect(backend.requests.last?.method == .patch)
        #expect(backend.requests.last?.path == "posts/1")
        #expect(
            try lastBody(backend)
                == ["title": "a", "views": 3, "draft": true, "rating": 4.5, "tags": ["x"], "summary": .null])
        #expect(patched.title == "a")
        #expect(patched.body == "body of post 1")
        let stored = try #require(backend.records(in: "posts").first)
        #expect(stored["views"] == 3)
        #expect(stored["draft"] == true)
        #expect(stored["summary"] == .null)
        #expect(stored["userId"] == 1)
    }

    @Test("patch(entity, with:) patches the entity's id")
    func byEntity() async throws {
        let backend = try MemoryFixture.backend()
        let posts = PostRepository(backend: backend)
        let post = try await posts.findByID(2).value
        let patched = try await posts.patch(post, with: ["title": "b", "views": 7, "summary": nil]).value
        #expect(backend.requests.last?.path == "posts/2")
        #expect(try lastBody(backend) == ["title": "b", "views": 7, "summary": .null])
        #expect(patched == Post(id: 2, userId: 1, title: "b", body: "body of post 2"))
        #expect(backend.records(in: "posts")[1]["views"] == 7)
    }

    @Test("a homogeneous literal and an Encodable value still patch as before")
    func unchangedSpellings() async throws {
        let backend = try MemoryFixture.backend()
        let posts = PostRepository(backend: backend)
        _ = try await posts.patch(3, with: ["title": "c"]).value
        #expect(try lastBody(backend) == ["title": "c"])
        struct Rename: Encodable, Sendable { var title: String }
        let renamed = try await posts.patch(3, with: Rename(title: "d")).value
        #expect(try lastBody(backend) == ["title": "d"])
        #expect(renamed.title == "d")
    }

    @Test("SingleEntityRepository.patch(with:) takes mixed literals and nil")
    func singleObject() async throws {
        let backend = try InMemoryBackend(
            database: Data(#"{"profile": {"name": "Ada", "theme": "dark", "nickname": "A"}}"#.utf8))
        let profile = FullProfileRepository(backend: backend)
        let patched = try await profile.patch(with: ["theme": "light", "age": 36, "nickname": nil]).value
        #expect(backend.requests.last?.method == .patch)
        #expect(backend.requests.last?.path == "profile")
        #expect(try lastBody(backend) == ["theme": "light", "age": 36, "nickname": .null])
        #expect(patched == FullProfile(name: "Ada", theme: "light", age: 36, nickname: nil))
        #expect(backend.object("profile")?["nickname"] == .null)
    }
}
