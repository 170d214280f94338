import Depot
import DepotInMemory
import Foundation
import Testing

/// A comment as JSONPlaceholder serves it.
private struct Comment: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var postId: Int
    var name: String
}

private struct CommentRepository: CRUDRepository, PagedRepository {
    typealias Entity = Comment
    let backend: any Backend
    let name = "comments"
}

/// A post decoded with the comments that `_embed=comments` adds.
private struct PostWithComments: Decodable, Identifiable, Sendable {
    var id: Int
    var title: String
    var comments: [Comment]
}

private struct PostWithCommentsRepository: Readable {
    typealias Entity = PostWithComments
    let backend: any Backend
    let name = "posts"
}

/// A post decoded with the user that `_expand=user` adds.
private struct PostWithUser: Decodable, Identifiable, Sendable {
    var id: Int
    var user: User
}

private struct PostWithUserRepository: PagedRepository {
    typealias Entity = PostWithUser
    let backend: any Backend
    let name = "posts"
}

/// A repository paged with other parameter names, to see that scoping keeps them.
private struct RenamedPagingPostRepository: PagedRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
    let pagination = Pagination.jsonServer(page: "p", limit: "l")
}

private struct NewComment: Encodable, Sendable {
    var name: String
}

@Suite("ScopedRepository")
struct ScopedRepositoryTests {
    private let backend: InMemoryBackend
    private let posts: PostRepository
    private let users: UserRepository

    init() throws {
        backend = try Seed.placeholder()
        posts = PostRepository(backend: backend)
        users = UserRepository(backend: backend)
    }

    private func paths() -> [String] {
        backend.requests.map { "\($0.method.rawValue) \($0.path)" }
    }

    @Test("the three ways in give the same collection path, /users/2/posts")
    func entryPoints() async throws {
        let user = try await users.findByID(2).value
        let byEntity = posts.scoped(to: user, in: users)
        let byID = posts.scoped(to: 2, in: users)
        let bySegments = posts.scoped(under: ["users", "2"])
        for scoped in [byEntity, byID, bySegments] {
            #expect(scoped.collectionPath == ["users", "2", "posts"])
            #expect(scoped.name == "posts")
            #expect(scoped.parentPath == ["users", "2"])
            #expect(scoped.isShallow)
        }
        #expect(posts.scoped(to: 2, in: users, shallow: false).isShallow == false)
    }

    @Test("findAll and findAll(query:) list the parent's children at the nested path")
    func findAll() async throws {
        let hers = posts.scoped(to: 3, in: users)
        #expect(try await hers.findAll().value.map(\.id) == Array(21...30))
        let query = Query().filter("id", .atLeast, 25).sorted(by: "id", .descending).limit(3)
        #expect(try await hers.findAll(query: query).value.map(\.id) == [30, 29, 28])
        #expect(paths() == ["GET users/3/posts", "GET users/3/posts"])
        #expect(backend.requests.last?.query == query.items)
    }

    @Test("findPage and pages page through the parent's children only")
    func paging() async throws {
        let hers = posts.scoped(to: 4, in: users)
        let page = try await hers.findPage(2, size: 3, query: Query().sorted(by: "id", .descending)).value
        #expect(page.items.map(\.id) == [37, 36, 35])
        #expect(page.total == 10)
        #expect(page.hasNext)
        #expect(backend.requests.last?.path == "users/4/posts")

        var ids: [Int] = []
        var numbers: [Int] = []
        for try await page in hers.pages(size: 4) {
            numbers.append(page.number)
            ids += page.items.map(\.id)
        }
        #expect(numbers == [1, 2, 3])
        #expect(ids == Array(31...40))
        // Page 1 is asked for by number, the others by the server's next links: all logged
        // relative to the backend, under the parent.
        let pages = backend.requests.dropFirst()
        #expect(pages.map(\.path) == ["users/4/posts", "users/4/posts", "users/4/posts"])
        #expect(pages.map { $0.query["_page"] } == ["1", "2", "3"])
    }

    @Test("a scoped repository keeps its base's pagination")
    func keepsPagination() async throws {
        let scoped = RenamedPagingPostRepository(backend: backend).scoped(to: 1, in: users)
        _ = await scoped.findPage(2, size: 5).result
        let request = try #require(backend.requests.last)
        #expect(request.path == "users/1/posts")
        #expect(request.query.map(\.name).sorted() == ["l", "p"])
    }

    @Test("create posts to the nested path, and the stored post belongs to the parent")
    func create() async throws {
        let hers = posts.scoped(to: 5, in: users)
        let created = try await hers.create(NewPost(userId: 9, title: "mine", body: "text")).value
        #expect(created.id == 101)
        #expect(created.userId == 5)
        #expect(paths() == ["POST users/5/posts"])
        #expect(try await hers.findAll().value.map(\.id) == Array(41...50) + [101])
        #expect(try await posts.findByID(101).value == created)

        let entity = try await hers.create(Post(id: 500, userId: 1, title: "t", body: "b")).value
        #expect(entity.id == 500)
        #expect(entity.userId == 5)
    }

    @Test("by default, per-id operations address the entity where its base does: /posts/:id")
    func shallowPerID() async throws {
        let hers = posts.scoped(to: 1, in: users)
        #expect(hers.segments(for: 5) == ["posts", "5"])
        let post = try await hers.findByID(5).value
        #expect(post.userId == 1)
        let renamed = try await hers.patch(5, with: ["title": "renamed"]).value
        #expect(renamed.title == "renamed")
        let replaced = try await hers.update(Post(id: 5, userId: 1, title: "again", body: "b")).value
        #expect(replaced.title == "again")
        try await hers.delete(id: 5).value
        #expect(paths() == ["GET posts/5", "PATCH posts/5", "PUT posts/5", "DELETE posts/5"])
        #expect(await hers.findByID(5).result.failure?.caseName == "notFound")
    }

    @Test("shallow: false nests per-id operations too: /users/1/posts/:id")
    func nestedPerID() async throws {
        let hers = posts.scoped(to: 1, in: users, shallow: false)
        #expect(try await hers.findByID(7).value.id == 7)
        _ = try await hers.patch(7, with: ["title": "t"]).value
        try await hers.delete(id: 7).value
        #expect(paths() == ["GET users/1/posts/7", "PATCH users/1/posts/7", "DELETE users/1/posts/7"])
    }

    @Test("scoping to a scoped parent uses the parent's own path: /posts/12/comments")
    func twoLevels() async throws {
        let hers = posts.scoped(to: 2, in: users)
        let post = try await hers.findByID(12).value
        let comments = CommentRepository(backend: backend).scoped(to: post, in: hers)
        #expect(comments.collectionPath == ["posts", "12", "comments"])
        #expect(try await comments.findAll().value.map(\.id) == Array(56...60))
        let added = try await comments.create(NewComment(name: "hello")).value
        #expect(added.postId == 12)
    }

    @Test("parent ids are one percent-encoded segment; an empty one is .invalidRequest")
    func parentSegments() async throws {
        let backend = InMemoryBackend(collections: ["notes"])
        let notes = NoteRepository(backend: backend)
        let scoped = notes.scoped(under: ["folders", "a/b?c"])
        _ = try await scoped.create(Note(id: "n1", text: "x")).value
        #expect(backend.requests.last?.path == "folders/a%2Fb%3Fc/notes")
        #expect(try await scoped.findAll().value.map(\.id) == ["n1"])
        #expect(backend.records(in: "notes").first?["folderId"] == "a/b?c")

        let count = backend.requests.count
        let empty = await notes.scoped(under: ["users", ""]).findAll().result
        #expect(empty.failure?.caseName == "invalidRequest")
        #expect(backend.requests.count == count)
    }

    @Test("an entity with an embedded relation decodes from findByID and findAll(query: embed)")
    func embedded() async throws {
        let repository = PostWithCommentsRepository(backend: backend)
        let post = try await repository.findByID(3, query: Query().embed("comments")).value
        #expect(post.comments.map(\.id) == Array(11...15))
        #expect(post.comments.allSatisfy { $0.postId == 3 })
        #expect(backend.requests.last?.path == "posts/3")
        #expect(backend.requests.last?.query == [URLQueryItem(name: "_embed", value: "comments")])

        let plain = await repository.findByID(3).result
        #expect(plain.failure?.caseName == "decoding")

        let hers = repository.scoped(to: 1, in: users)
        let listed = try await hers.findAll(query: Query().embed("comments").limit(2)).value
        #expect(listed.map(\.id) == [1, 2])
        #expect(listed.map { $0.comments.map(\.id) } == [Array(1...5), Array(6...10)])
        #expect(backend.requests.last?.path == "users/1/posts")
    }

    @Test("an entity with an expanded parent decodes from a scoped page with _expand=user")
    func expanded() async throws {
        let hers = PostWithUserRepository(backend: backend).scoped(to: 7, in: users)
        let page = try await hers.findPage(1, size: 2, query: Query().expand("user")).value
        #expect(page.items.map(\.id) == [61, 62])
        #expect(page.items.map(\.user.id) == [7, 7])
        #expect(page.total == 10)
    }

    @Test("a scoped repository has its base's capabilities and no others")
    func conformances() {
        let scopedPosts: Any = posts.scoped(to: 1, in: users)
        let scopedUsers: Any = users.scoped(under: ["teams", "1"])
        #expect(scopedPosts is any PagedRepository)
        #expect(scopedPosts is any Creatable)
        #expect(scopedPosts is any Updatable)
        #expect(scopedPosts is any Deletable)
        #expect(scopedUsers is any Readable)
        #expect(!(scopedUsers is any Creatable))
        #expect(!(scopedUsers is any Deletable))
        #expect(!(scopedUsers is any PagedRepository))
    }
}
