import Depot
import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

/// A comment as the DRF app serves it.
private struct LiveComment: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var postId: Int
    var name: String
}

private struct LiveCommentRepository: CRUDRepository {
    typealias Entity = LiveComment
    let backend: any Backend
    let name = "comments"
}

/// A post with the comments `_embed=comments` adds and the user `_expand=user` adds.
private struct LivePostWithRelations: Decodable, Identifiable, Sendable {
    var id: Int
    var comments: [LiveComment]
    var user: User
}

private struct LivePostWithRelationsRepository: Readable {
    typealias Entity = LivePostWithRelations
    let backend: any Backend
    let name = "posts"
}

private struct LiveNewComment: Encodable, Sendable {
    var name: String
    var email: String
    var body: String
}

/// Scoped repositories and json-server's query operators over real HTTP, against the
/// Django REST framework app's nested routes (`/users/1/posts`, `/posts/1/comments`).
///
/// The queries run twice: on the DRF app, and on an ``InMemoryBackend`` seeded with
/// the app's own records, and both must answer the same ids.
@Suite(.liveServers) struct DRFScopedTests {
    /// The DRF app's root, read-only.
    private static func live() throws -> URLSessionBackend {
        URLSessionBackend(baseURL: try #require(LiveServer.drf))
    }

    /// An in-memory backend holding the DRF app's users, posts and comments.
    private static func mirror(of backend: some Backend) async throws -> InMemoryBackend {
        var database: [String: JSONValue] = [:]
        for name in ["users", "posts", "comments"] {
            let response = try await backend.send(BackendRequest(method: .get, path: name)).value
            database[name] = try JSONDecoder().decode(JSONValue.self, from: response.body)
        }
        return try InMemoryBackend(database: JSONEncoder().encode(database))
    }

    @Test(
        "a scoped findAll(query:) answers the same ids from the DRF app and from InMemoryBackend",
        arguments: [
            (1, Query()),
            (1, Query().filter("userId", 2)),  // the route's userId wins
            (1, Query().filter("userId", .notEqual, 1)),
            (2, Query().filter("id", .atLeast, 13).filter("id", .atMost, 16)),
            (3, Query().filter("id", .notEqual, [21, 22])),
            (3, Query().filter("id", 30, 21)),
            (4, Query().filter("title", .like, "^[a-f]")),
            (5, Query().filter("title", .like, "LOREM|DOLOR")),
            (5, Query().filter("title", .atLeast, "m")),
            (6, Query().search("dolor")),
            (7, Query().search("7")),
            (8, Query().sorted(by: "title", .descending)),
            (9, Query().sorted(by: "title", .descending).range(2..<5)),
            (10, Query().adding("_start", 8).limit(5)),
            (2, Query().sorted(by: "id", .descending).limit(3)),
            (3, Query().adding("nope", 1)),
            (3, Query().filter("nope", .atLeast, 1)),
            (99, Query()),
        ] as [(Int, Query)])
    func sameIDs(userID: Int, query: Query) async throws {
        let live = try Self.live()
        let memory = try await Self.mirror(of: live)
        func ids(_ backend: any Backend) async throws -> [Int] {
            let posts = PostRepository(backend: backend).scoped(
                to: userID, in: UserRepository(backend: backend))
            return try await posts.findAll(query: query).value.map(\.id)
        }
        let expected = try await ids(memory)
        #expect(try await ids(live) == expected)
        #expect(memory.requests.last?.path == "users/\(userID)/posts")
    }

    @Test(
        "top-level queries with several sort keys and OR filters agree too",
        arguments: [
            Query().sorted(by: "userId", .descending).sorted(by: "title").limit(12),
            Query().search("lorem").filter("userId", 3, 4),
            Query().filter("id", 3, 1).filter("title", .like, "a"),
        ])
    func sameIDsAtTheRoot(query: Query) async throws {
        let live = try Self.live()
        let memory = try await Self.mirror(of: live)
        let expected = try await PostRepository(backend: memory).findAll(query: query).value.map(\.id)
        #expect(try await PostRepository(backend: live).findAll(query: query).value.map(\.id) == expected)
        #expect(!expected.isEmpty)
    }

    @Test("a scoped findPage and pages(size:) page the parent's posts alike on both backends")
    func paging() async throws {
        let live = try Self.live()
        let memory = try await Self.mirror(of: live)
        let query = Query().sorted(by: "title")
        func page(_ backend: any Backend) async throws -> Page<Post> {
            try await PostRepository(backend: backend).scoped(
                to: 4, in: UserRepository(backend: backend)
            )
            .findPage(2, size: 3, query: query).value
        }
        let (expected, actual) = (try await page(memory), try await page(live))
        #expect(actual.items.map(\.id) == expected.items.map(\.id))
        #expect(actual.total == 10)
        #expect(expected.total == 10)
        #expect(actual.hasNext && actual.hasPrevious)

        var ids: [Int] = []
        for try await page in PostRepository(backend: live).scoped(
            to: 4, in: UserRepository(backend: live)
        )
        .pages(size: 4, query: query) {
            ids += page.items.map(\.id)
        }
        let all = try await PostRepository(backend: memory).scoped(
            to: 4, in: UserRepository(backend: memory)
        )
        .findAll(query: query).value
        #expect(ids == all.map(\.id))
        #expect(ids.count == 10)
    }

    @Test("_embed=comments and _expand=user decode on a scoped listing from both backends")
    func embedAndExpand() async throws {
        let live = try Self.live()
        let memory = try await Self.mirror(of: live)
        let query = Query().embed("comments").expand("user").limit(2)
        func posts(_ backend: any Backend) async throws -> [LivePostWithRelations] {
            try await LivePostWithRelationsRepository(backend: backend).scoped(
                to: 2, in: UserRepository(backend: backend)
            )
            .findAll(query: query).value
        }
        let (expected, actual) = (try await posts(memory), try await posts(live))
        #expect(actual.map(\.id) == [11, 12])
        #expect(actual.map { $0.comments.map(\.id) } == expected.map { $0.comments.map(\.id) })
        #expect(actual.map { $0.comments.map(\.id) } == [Array(51...55), Array(56...60)])
        #expect(actual.map(\.user) == expected.map(\.user))
        #expect(actual.allSatisfy { $0.user.id == 2 })
    }

    @Test("create, read, patch and delete through a scoped repository of a private space")
    func writes() async throws {
        let backend = URLSessionBackend(baseURL: try LiveServer.drfSpace())
        let users = UserRepository(backend: backend)
        let hers = PostRepository(backend: backend).scoped(to: 3, in: users)

        let created = try await hers.create(NewPost(userId: 9, title: "scoped", body: "text")).value
        #expect(created.id == 101)
        #expect(created.userId == 3)
        #expect(try await hers.findAll(query: ["title": "scoped"]).value == [created])
        #expect(try await hers.findAll().value.map(\.id) == Array(21...30) + [101])

        #expect(try await hers.findByID(101).value == created)  // GET /posts/101
        let patched = try await hers.patch(101, with: ["title": "renamed"]).value
        #expect(patched.title == "renamed")
        #expect(patched.userId == 3)
        try await hers.delete(id: 101).value
        #expect(await hers.findByID(101).result.failure?.caseName == "notFound")

        let post = try await PostRepository(backend: backend).findByID(7).value
        let comments = LiveCommentRepository(backend: backend).scoped(
            to: post, in: PostRepository(backend: backend))
        let comment = try await comments.create(LiveNewComment(name: "n", email: "e@x.example", body: "b"))
            .value
        #expect(comment.postId == 7)
        #expect(try await comments.findAll().value.map(\.id) == Array(31...35) + [comment.id])
    }
}
