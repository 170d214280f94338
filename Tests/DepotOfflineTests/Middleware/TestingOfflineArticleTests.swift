import Depot
import DepotInMemory
import DepotOffline
import Foundation
import Testing

/// A post, as the articles define it.
private struct Post: Codable, Identifiable, Sendable {
    let id: Int
    var userId: Int
    var title: String
    var body: String
}

/// A post without an id.
private struct NewPost: Encodable, Sendable {
    var userId: Int
    var title: String
    var body: String
}

private struct PostRepository: CRUDRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
}

/// What "Testing offline" in WorkingOffline.md shows, run as written there.
@Suite("Testing offline, as the article shows")
struct TestingOfflineArticleTests {
    @Test("InMemoryBackend taken offline: a stored read, a queued write, replayed when it is back")
    func readsAndWritesWhileOffline() async throws {
        let folder = try TemporaryFolder()
        let server = try InMemoryBackend(
            database: Data(#"{"posts": [{"id": 1, "userId": 1, "title": "Hi", "body": "…"}]}"#.utf8))
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let posts = PostRepository(backend: server.with(.offline(store)))
        let online = try await posts.findAll().value
        store.flush()

        server.failAll(with: .noConnection)
        #expect(try await posts.findAll().value.map(\.id) == online.map(\.id))
        let write = await posts.create(NewPost(userId: 1, title: "On the train", body: "…")).result
        guard case .failure(.queued) = write else {
            Issue.record("not queued: \(write)")
            return
        }
        #expect(server.records(in: "posts").count == 1)

        server.stopFailing()
        let report = await store.outbox.replay()
        #expect(report.sent == 1)
        #expect(server.records(in: "posts").count == 2)
        #expect(server.records(in: "posts").last?["title"] == "On the train")
    }
}
