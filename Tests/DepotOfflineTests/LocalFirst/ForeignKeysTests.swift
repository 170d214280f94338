import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

// Local ids rewritten by what a request's resource says (Repository.foreignKeys, its record
// and parent ids), and the typed resource each queued write keeps across restarts.

private struct Reviewer: Codable, Identifiable, Sendable {
    var id: Int
    var name: String
}

private struct NewReviewer: Encodable, Sendable {
    var name: String
}

/// A review whose author is a member (`author`, no `Id` suffix) and which carries another
/// system's reference (`externalId`, which is no key).
private struct Review: Codable, Identifiable, Sendable {
    var id: Int
    var author: Int
    var externalId: Int
    var body: String
}

private struct NewReview: Encodable, Sendable {
    var author: Int
    var externalId: Int
    var body: String
}

private struct Article: Codable, Identifiable, Sendable {
    var id: Int
    var title: String
}

private struct NewArticle: Encodable, Sendable {
    var title: String
}

/// A comment as json-server's convention names its keys (`postId`), with a member that holds
/// a member's id but is not named like a key (`author`).
private struct Remark: Codable, Identifiable, Sendable {
    var id: Int
    var postId: Int
    var author: Int
    var body: String
}

private struct NewRemark: Encodable, Sendable {
    var postId: Int
    var author: Int
    var body: String
}

/// A comment created under its post (`POST posts/1/comments`): the post is in the path only.
private struct NewNestedRemark: Encodable, Sendable {
    var body: String
}

private struct ReviewerRepository: CRUDRepository {
    typealias Entity = Reviewer
    let backend: any Backend
    let name = "members"
}

/// States its one foreign key: `author`.
private struct ReviewRepository: CRUDRepository {
    typealias Entity = Review
    let backend: any Backend
    let name = "reviews"
    let foreignKeys: ForeignKeys = ["author"]
}

private struct ArticleRepository: CRUDRepository {
    typealias Entity = Article
    let backend: any Backend
    let name = "posts"
}

/// json-server's convention: no `foreignKeys` stated.
private struct RemarkRepository: CRUDRepository {
    typealias Entity = Remark
    let backend: any Backend
    let name = "comments"
}

/// Reviews at `v2/reviews` (a path json-server's convention reads otherwise: `v2/reviews/7` has
/// an odd count), whose one foreign key is `author`.
private struct VersionedReviewRepository: CRUDRepository {
    typealias Entity = Review
    let backend: any Backend
    let name = "reviews"
    var collectionPath: [String] { ["v2", "reviews"] }
    let foreignKeys: ForeignKeys = ["author"]
}

/// One member (1), one post (1), review 7 by member 1, no comments; `v2/reviews` answered as
/// `reviews`.
private func server() throws -> InMemoryBackend {
    let server = try InMemoryBackend(
        database: Data(
            #"""
            {"members": [{"id": 1, "name": "Ada"}], "posts": [{"id": 1, "title": "First"}],
             "reviews": [{"id": 7, "author": 1, "externalId": 5, "body": "Fine"}], "comments": []}
            """#.utf8))
    server.mount("v2", "reviews")
    return server
}

/// A server, a store on a real file and a chain through `.offline(store)`.
private struct Setup {
    let folder: TemporaryFolder
    let server: InMemoryBackend
    let store: OfflineStore
    let backend: any Backend

    init() throws {
        folder = try TemporaryFolder()
        server = try DepotOfflineTests.server()
        store = try OfflineStore(at: folder.file("depot.sqlite"))
        backend = server.with(.offline(store))
    }

    /// The local id of the record a queued create makes, as a number.
    func localID<T>(_ result: Result<T, ServiceError>) throws -> Int {
        try #require(queued(result)?.localID?.intValue)
    }

    /// The requests the server received whose path or body holds `-1`, a local id.
    var requestsWithALocalID: [String] {
        server.requests.compactMap { request in
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            return request.path.contains("-1") || body.contains("-1") ? "\(request.path) \(body)" : nil
        }
    }
}

@Suite("Local ids: the foreign keys a repository states")
struct ForeignKeyRewritingTests {
    @Test(
        "foreignKeys [\"author\"]: a review of a member created offline reaches the server with the member's id in `author`; `externalId` is sent as written"
    )
    func statedKeysAreRewritten() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let member = try setup.localID(
            await ReviewerRepository(backend: setup.backend).create(NewReviewer(name: "Grace")).result)
        #expect(member == -1)
        let reviews = ReviewRepository(backend: setup.backend)
        _ = queued(await reviews.create(NewReview(author: member, externalId: member, body: "Great")).result)

        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)

        let created = try #require(setup.server.records(in: "members").last?["id"]?.intValue)
        #expect(created == 2)
        let review = try #require(setup.server.records(in: "reviews").last)
        #expect(review["body"] == "Great")
        #expect(review["author"] == .int(created))
        // Not a key of this repository: another system's reference, left as the user wrote it.
        #expect(review["externalId"] == -1)
    }

    @Test(
        "by default (json-server's convention) a `postId` naming a post created offline is rewritten, a member not ending in `Id` is not"
    )
    func conventionKeysAreRewritten() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let post = try setup.localID(
            await ArticleRepository(backend: setup.backend).create(NewArticle(title: "Trip")).result)
        #expect(post == -1)
        let remarks = RemarkRepository(backend: setup.backend)
        _ = queued(await remarks.create(NewRemark(postId: post, author: post, body: "Nice")).result)

        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)

        let created = try #require(setup.server.records(in: "posts").last?["id"]?.intValue)
        #expect(created == 2)
        let remark = try #require(setup.server.records(in: "comments").last)
        #expect(remark["body"] == "Nice")
        #expect(remark["postId"] == .int(created))
        #expect(remark["author"] == -1)
    }
}

@Suite("Local ids: the ids of a request's resource")
struct ResourceIDRewritingTests {
    @Test(
        "a comment queued under a post created offline (POST posts/-1/comments) is sent to posts/<server id>/comments"
    )
    func nestedCreateUnderALocalRecord() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let articles = ArticleRepository(backend: setup.backend)
        let post = try setup.localID(await articles.create(NewArticle(title: "Trip")).result)
        let onPost = RemarkRepository(backend: setup.backend).scoped(under: ["posts", String(post)])
        #expect(onPost.collectionResource.path == "posts/-1/comments")
        _ = queued(await onPost.create(NewNestedRemark(body: "Nice")).result)

        setup.server.clearRequests()
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)

        let created = try #require(setup.server.records(in: "posts").last?["id"]?.intValue)
        #expect(created == 2)
        let writes = setup.server.requests.filter { $0.method == .post }.map(\.path)
        #expect(writes == ["posts", "posts/\(created)/comments"])
        #expect(setup.server.records(in: "comments").last?["postId"] == .int(created))
        #expect(setup.requestsWithALocalID.isEmpty, "\(setup.requestsWithALocalID)")
    }

    @Test(
        "an action queued on a post created offline (POST posts/-1/publish) is sent to posts/<server id>/publish"
    )
    func actionOnALocalRecord() async throws {
        let setup = try Setup()
        setup.server.route(.post, "posts/:id/publish") { context in
            try .json(
                context.patch(in: "posts", id: context.parameters["id"] ?? "", with: ["published": true]))
        }
        setup.server.failAll(with: .noConnection)
        let articles = ArticleRepository(backend: setup.backend)
        let post = try setup.localID(await articles.create(NewArticle(title: "Trip")).result)
        let action = articles.resource(for: post).appending("publish")
        #expect(action.path == "posts/-1/publish")
        _ = queued(await articles.send(.post, action).result)

        setup.server.clearRequests()
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)

        let created = try #require(setup.server.records(in: "posts").last)
        let id = try #require(created["id"]?.intValue)
        #expect(id == 2)
        #expect(created["published"] == true)
        let writes = setup.server.requests.filter { $0.method == .post }.map(\.path)
        #expect(writes == ["posts", "posts/\(id)/publish"])
        #expect(setup.requestsWithALocalID.isEmpty, "\(setup.requestsWithALocalID)")
    }

    @Test(
        "an action on a record (POST posts/7/publish) creates nothing: it gets no local id, and its replay names no created record"
    )
    func anActionIsNoCreate() async throws {
        let setup = try Setup()
        setup.server.route(.post, "posts/:id/publish") { context in
            try .json(
                context.patch(in: "posts", id: context.parameters["id"] ?? "", with: ["published": true]))
        }
        setup.server.failAll(with: .noConnection)
        let articles = ArticleRepository(backend: setup.backend)
        let publish = queued(
            await articles.send(.post, articles.resource(for: 1).appending("publish")).result)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)
        #expect(setup.server.records(in: "posts").first?["published"] == true)
        #expect(publish?.localID == nil)
        #expect(publish?.localRecord == nil)
        // The ids the server named for records created offline: none.
        #expect(try setup.store.integer("SELECT COUNT(*) FROM id_map") == 0)
    }
}

@Suite("Queued writes keep their typed resource")
struct QueuedResourceTests {
    @Test(
        "a write queued through v2/reviews with foreignKeys [\"author\"]: after a restart its entry has the request's resource, and the replay rewrites `author` only"
    )
    func resourceSurvivesARestart() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let server = try DepotOfflineTests.server()
        let expected = VersionedReviewRepository(backend: server).resource(for: 7)
        server.failAll(with: .noConnection)
        do {
            let store = try OfflineStore(at: url)
            let backend = server.with(.offline(store))
            let member = try #require(
                queued(await ReviewerRepository(backend: backend).create(NewReviewer(name: "Grace")).result)?
                    .localID)
            #expect(member == -1)
            let reviews = VersionedReviewRepository(backend: backend)
            _ = queued(await reviews.patch(7, with: ["author": member, "externalId": member]).result)
            // A replay the queued-behind write started ends at the cut network before the store goes.
            #expect(await store.outbox.replay().remaining == 2)
        }

        // A restart: a new store on the same file.
        let store = try OfflineStore(at: url)
        let entries = try store.outbox.entries()
        #expect(entries.map(\.path) == ["members", "v2/reviews/7"])
        let entry = try #require(entries.last)
        #expect(entry.resource == expected)
        #expect(entry.resource.collection == ["v2", "reviews"])
        #expect(entry.resource.parent.isEmpty)
        #expect(entry.resource.id == "7")
        #expect(entry.resource.foreignKeys == ["author"])
        #expect(entries.first?.resource == ReviewerRepository(backend: server).collectionResource)

        server.stopFailing()
        let report = await store.outbox.replay(through: server)
        #expect(report == OutboxReplayReport(sent: 2, kept: 0, remaining: 0, ending: .finished))
        let review = try #require(server.records(in: "reviews").first { $0["id"] == 7 })
        #expect(review["author"] == 2)
        #expect(review["externalId"] == -1)
        #expect(server.requests.contains { $0.method == .patch && $0.path == "v2/reviews/7" })
    }

    @Test(
        "a row whose typed resource is missing (written before schema 6) or damaged reads its path by json-server's convention"
    )
    func unreadableResourceFallsBackToThePath() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let down = FailingBackend(error: .cannotConnect).with(.offline(store))
        _ = queued(await ReviewRepository(backend: down).patch(7, with: ["author": 1]).result)
        _ = queued(await ReviewRepository(backend: down).patch(8, with: ["author": 1]).result)
        _ = await store.outbox.replay()
        #expect(try store.outbox.entries().map(\.resource.foreignKeys) == [["author"], ["author"]])

        try store.sql("UPDATE outbox SET addressed = NULL WHERE path = 'reviews/7'")
        try store.sql(#"UPDATE outbox SET addressed = '{"segments": 3}' WHERE path = 'reviews/8'"#)
        let entries = try store.outbox.entries()
        #expect(
            entries.map(\.resource) == [
                RequestResource(path: "reviews/7"), RequestResource(path: "reviews/8"),
            ])
        #expect(entries.map(\.resource.foreignKeys) == [.jsonServer, .jsonServer])
    }
}
