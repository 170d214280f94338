import Depot
import DepotBackendConformance
import Foundation
import Testing

/// The repository suite over real HTTP, against the Django REST framework app and its
/// json-server-style header pagination (`_page`, `_limit`, `X-Total-Count`, `Link`).
///
/// Reads use the shared data at the app's root; writes use a private copy
/// (`LiveServer.drfSpace()`), so the tests hold in any order and in parallel.
@Suite(.liveServers) struct DRFRepositoryTests {
    private func posts(_ base: URL? = LiveServer.drf) throws -> PostRepository {
        PostRepository(backend: URLSessionBackend(baseURL: try #require(base)))
    }

    @Test func findsAllHundredPosts() async throws {
        let all = try await posts().findAll().value
        #expect(all.count == 100)
        #expect(all.map(\.id) == Array(1...100))
    }

    @Test func findsPostOne() async throws {
        let post = try await posts().findByID(1).value
        #expect(post.id == 1)
        #expect(post.userId == 1)
        #expect(!post.title.isEmpty)
    }

    @Test func aMissingPostIsNotFound() async throws {
        let result = try await posts().findByID(9999).result
        #expect(result.failure?.caseName == "notFound")
        #expect(result.failure?.statusCode == 404)
        #expect(result.failure?.message == "No post with id 9999.")
    }

    @Test func filtersByUser() async throws {
        let mine = try await posts().findAll(byUser: 2).value
        #expect(mine.count == 10)
        #expect(mine.allSatisfy { $0.userId == 2 })
        #expect(mine.map(\.id) == Array(11...20))
    }

    @Test func readsOnePage() async throws {
        let page = try await posts().findPage(3, size: 10).value
        #expect(page.items.map(\.id) == Array(21...30))
        #expect(page.number == 3)
        #expect(page.total == 100)
        #expect(page.pageCount == 10)
        #expect(page.hasNext)
        #expect(page.hasPrevious)
        #expect(Set(page.links.map(\.rel)) == ["first", "prev", "next", "last"])
        #expect(page.links[rel: "next"]?.href.hasSuffix("/posts?_page=4&_limit=10") == true)
    }

    @Test func walksEveryPage() async throws {
        var numbers: [Int] = []
        var ids: [Int] = []
        for try await page in try posts().pages(size: 25) {
            numbers.append(page.number)
            ids += page.items.map(\.id)
        }
        #expect(numbers == [1, 2, 3, 4])
        #expect(ids == Array(1...100))
    }

    @Test func walksTheFilteredPages() async throws {
        var sizes: [Int] = []
        for try await page in try posts().pages(size: 3, query: ["userId": 2]) {
            sizes.append(page.items.count)
            #expect(page.total == 10)
        }
        #expect(sizes == [3, 3, 3, 1])
    }

    @Test func aPagePastTheEndIsEmpty() async throws {
        let page = try await posts().findPage(11, size: 10).value
        #expect(page.items.isEmpty)
        #expect(page.total == 100)
        #expect(!page.hasNext)
    }

    @Test func createsUpdatesPatchesAndDeletes() async throws {
        let posts = try posts(LiveServer.drfSpace())
        let created = try await posts.create(
            NewPost(userId: 3, title: "Hello, Depot", body: "Over HTTP.")
        ).value
        #expect(created.id == 101)
        #expect(created.userId == 3)
        #expect(try await posts.findByID(101).value == created)

        var edited = created
        edited.title = "Replaced"
        #expect(try await posts.update(edited).value == edited)

        let patched = try await posts.patch(101, with: ["body": "Patched."]).value
        #expect(patched.title == "Replaced")
        #expect(patched.body == "Patched.")

        try await posts.delete(patched).value
        #expect(await posts.findByID(101).result.failure?.caseName == "notFound")
        #expect(await posts.delete(id: 101).result.failure?.caseName == "notFound")
        #expect(try await posts.findAll().value.count == 100)
    }

    @Test func keepsAClientIDAndRefusesADuplicate() async throws {
        let posts = try posts(LiveServer.drfSpace())
        let post = Post(id: 500, userId: 1, title: "Chosen id", body: "…")
        #expect(try await posts.create(post).value == post)
        let duplicate = await posts.create(post).result
        #expect(duplicate.failure?.caseName == "conflict")
        #expect(duplicate.failure?.message == "A post with id 500 already exists.")
    }

    @Test func anInvalidPostIsAClientErrorWithTheFieldErrors() async throws {
        let posts = try posts(LiveServer.drfSpace())
        let result = await posts.create(["title": "No user, no body"]).result
        let error = try #require(result.failure)
        #expect(error.caseName == "clientError")
        #expect(error.statusCode == 400)
        let fields = try JSONDecoder().decode(
            [String: [String]].self, from: try #require(error.response?.body))
        #expect(fields["userId"] == ["This field is required."])
        #expect(fields["body"] == ["This field is required."])
    }

    @Test func readsANestedRouteThroughACustomEndpoint() async throws {
        let users = UserRepository(backend: URLSessionBackend(baseURL: try #require(LiveServer.drf)))
        let theirs = try await users.posts(of: 3).value
        #expect(theirs.map(\.id) == Array(21...30))
        let user = try await users.findByID(3).value
        #expect(user.name == "Carmen Reyes")
    }
}
