import Depot
import DepotInMemory
import Foundation
import Testing

/// The signed-in user's profile, a single object at `/profile`.
struct Profile: Codable, Sendable, Equatable {
    var name: String
    var theme: String
}

struct ProfileRepository: SingleEntityRepository {
    typealias Entity = Profile
    let backend: any Backend
    let name = "profile"
}

/// Answers wrapped as `{"data": …}`.
struct EnvelopedPostRepository: Readable {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
    let coding = JSONCoding.default.envelope("data")
}

@Suite("Custom endpoints and single objects")
struct CustomEndpointTests {
    @Test("a custom endpoint is one line: GET /users/1/posts")
    func nested() async throws {
        let backend = try Seed.placeholder()
        let posts = try await UserRepository(backend: backend).posts(of: 1).value
        #expect(posts.count == 10)
        #expect(posts.allSatisfy { $0.userId == 1 })
        #expect(backend.requests.last?.path == "users/1/posts")
    }

    @Test("a single-entity repository reads, replaces and patches /profile")
    func singleEntity() async throws {
        let backend = try InMemoryBackend(
            database: Data(#"{"profile": {"name": "Ada", "theme": "dark"}}"#.utf8))
        let profile = ProfileRepository(backend: backend)
        #expect(try await profile.find().value == Profile(name: "Ada", theme: "dark"))
        #expect(backend.requests.last?.path == "profile")

        #expect(try await profile.update(Profile(name: "Grace", theme: "light")).value.name == "Grace")
        #expect(backend.requests.last?.method == .put)

        #expect(
            try await profile.patch(with: ["theme": "sepia"]).value == Profile(name: "Grace", theme: "sepia"))
        #expect(backend.requests.last?.method == .patch)
        #expect(try await profile.find().value == Profile(name: "Grace", theme: "sepia"))
    }

    @Test("an envelope is unwrapped, and a missing one is .decoding naming the key")
    func envelope() async throws {
        let backend = InMemoryBackend()
        backend.route(.get, "posts") { _ in
            BackendResponse(
                status: 200,
                body: Data(#"{"data": [{"id": 1, "userId": 1, "title": "t", "body": "b"}]}"#.utf8))
        }
        backend.route(.get, "posts/:id") { _ in
            BackendResponse(status: 200, body: Data(#"{"result": {}}"#.utf8))
        }
        let posts = EnvelopedPostRepository(backend: backend)
        #expect(try await posts.findAll().value.map(\.id) == [1])
        let error = await posts.findByID(1).result.failure
        guard case .decoding(let failure) = error else {
            Issue.record("expected .decoding, got \(String(describing: error))")
            return
        }
        #expect(failure.codingPath == "data")
    }

    @Test("a form body is URL-encoded with repeated keys")
    func formBody() async throws {
        let backend = InMemoryBackend()
        backend.route(.post, "oauth/token") { _ in
            BackendResponse(status: 200, body: Data(#"{"ok": true}"#.utf8))
        }
        let client = UserRepository(backend: backend)
        let answer = try await client.request(
            .post, ["oauth", "token"],
            body: .form([("grant_type", "password"), ("scope", "read"), ("scope", "write me")]),
            as: [String: Bool].self
        ).value
        #expect(answer == ["ok": true])
        let request = try #require(backend.requests.last)
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(
            request.body.flatMap { String(data: $0, encoding: .utf8) }
                == "grant_type=password&scope=read&scope=write+me")
    }
}
