import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

/// A post with every field a create sends, so a local record decodes as one.
private struct Post: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var userId: Int
    var title: String
    var views: Int
}

private struct NewPost: Encodable, Sendable {
    var userId: Int
    var title: String
    var views: Int
}

private struct Comment: Codable, Identifiable, Sendable {
    var id: Int
    var postId: Int
    var body: String
}

private struct NewComment: Encodable, Sendable {
    var postId: Int
    var body: String
}

private struct PostRepository: CRUDRepository, PagedRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
    let pagination = Pagination.jsonServer
}

private struct CommentRepository: CRUDRepository {
    typealias Entity = Comment
    let backend: any Backend
    let name = "comments"
}

/// Five posts (views 10, 20, 30, 40, 50; users 1, 1, 1, 2, 2) and one comment.
private func server() throws -> InMemoryBackend {
    let posts = (1...5).map { id in
        #"{"id": \#(id), "userId": \#(id <= 3 ? 1 : 2), "title": "Post \#(id)", "views": \#(id * 10)}"#
    }
    return try InMemoryBackend(
        database: Data(
            #"{"posts": [\#(posts.joined(separator: ","))], "comments": [{"id": 1, "postId": 1, "body": "First"}]}"#
                .utf8))
}

/// A server, a store on a real file, and repositories through `.offline(store)`.
private struct Setup {
    let folder: TemporaryFolder
    let server: InMemoryBackend
    let store: OfflineStore
    let backend: any Backend
    var posts: PostRepository { PostRepository(backend: backend) }
    var comments: CommentRepository { CommentRepository(backend: backend) }

    init(policy: OfflinePolicy = OfflinePolicy()) throws {
        folder = try TemporaryFolder()
        server = try DepotOfflineTests.server()
        store = try OfflineStore(at: folder.file("depot.sqlite"))
        backend = server.with(.offline(store, policy: policy))
    }

    /// The store opened again on the same file (as after a restart), with a new chain.
    func reopened(policy: OfflinePolicy = OfflinePolicy()) throws -> (OfflineStore, any Backend) {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        return (store, server.with(.offline(store, policy: policy)))
    }

    /// Runs `body` and returns its value with the receipt's count of pending writes.
    func counted<T>(_ body: () async throws -> T) async throws -> (T, Int) {
        let receipt = AnswerReceipt()
        let value = try await receipt.collect(body)
        return (value, receipt.pendingWrites)
    }
}

@Suite("Local-first: pending writes show in reads")
struct LocalFirstTests {
    // MARK: - A record

    @Test("offline: a queued PATCH merges, a PUT replaces, a DELETE makes the record 404")
    func recordOffline() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findAll().value
        for id in 1...3 { _ = try await setup.posts.findByID(id).value }
        setup.server.failAll(with: .noConnection)

        _ = queued(await setup.posts.patch(1, with: ["title": "Edited"]).result)
        _ = queued(await setup.posts.update(Post(id: 2, userId: 9, title: "Replaced", views: 1)).result)
        _ = queued(await setup.posts.delete(id: 3).result)

        let (first, applied) = try await setup.counted { try await setup.posts.findByID(1).value }
        #expect(first == Post(id: 1, userId: 1, title: "Edited", views: 10))
        #expect(applied == 1)
        #expect(
            try await setup.posts.findByID(2).value == Post(id: 2, userId: 9, title: "Replaced", views: 1))
        let gone = await setup.posts.findByID(3).result
        guard case .failure(.notFound(let response)) = gone else {
            Issue.record("expected 404, got \(gone)")
            return
        }
        #expect(response.body == Data("{}".utf8))
        // The stored listing shows all three.
        let (listed, count) = try await setup.counted { try await setup.posts.findAll().value }
        #expect(listed.map(\.id) == [1, 2, 4, 5])
        #expect(listed.first?.title == "Edited")
        #expect(listed[1].title == "Replaced")
        #expect(count == 3)
    }

    @Test("online: a write the server has not received yet (its replay stopped at a 503) shows in reads")
    func recordOnlineWhileReplayStopped() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.patch(1, with: ["title": "Pending"]).result)
        setup.server.stopFailing()
        setup.server.route(.patch, "posts/:id") { _ in .error(503, "maintenance") }

        let (post, applied) = try await setup.counted { try await setup.posts.findByID(1).value }
        #expect(post.title == "Pending")
        #expect(applied == 1)
        #expect(setup.server.records(in: "posts").first?["title"] == "Post 1")
        let report = await setup.store.outbox.replay()
        #expect(report.remaining == 1)
        let all = try await setup.posts.findAll().value
        #expect(all.first?.title == "Pending")
        #expect(all.count == 5)
    }

    @Test(
        "a write queued behind a create still shows once the create reached the server and the replay stopped"
    )
    func shownAfterCreateSent() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findByID(2).value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "New", views: 1)).result)
        _ = queued(await setup.posts.patch(2, with: ["title": "Pending"]).result)
        setup.server.stopFailing()
        setup.server.route(.patch, "posts/:id") { _ in .error(503, "maintenance") }
        // The create reaches the server; the patch stops the replay (a replay started in the
        // background while the network was down may be joined first).
        for _ in 0..<5 where setup.server.records(in: "posts").count < 6 {
            _ = await setup.store.outbox.replay()
        }
        #expect(setup.server.records(in: "posts").count == 6)
        #expect(setup.store.outbox.queuedCount == 1)
        #expect(try await setup.posts.findByID(2).value.title == "Pending")
    }

    // MARK: - A listing

    @Test("a create shows in listings whose filters it passes, last when unsorted, and not in others")
    func createInFilteredListings() async throws {
        let setup = try Setup()
        let mine = Query().filter("userId", 1)
        let theirs = Query().filter("userId", 2)
        _ = try await setup.posts.findAll(query: mine).value
        _ = try await setup.posts.findAll(query: theirs).value
        setup.server.failAll(with: .noConnection)

        let write = queued(await setup.posts.create(NewPost(userId: 1, title: "Offline", views: 25)).result)
        #expect(write?.localID == .int(-1))
        #expect(write?.localRecord?.objectValue?["title"] == "Offline")

        let (listed, applied) = try await setup.counted { try await setup.posts.findAll(query: mine).value }
        #expect(listed.map(\.id) == [1, 2, 3, -1])
        #expect(applied == 1)
        #expect(try await setup.posts.findAll(query: theirs).value.map(\.id) == [4, 5])
        #expect(try await setup.posts.findByID(-1).value.title == "Offline")
    }

    @Test("an update that leaves a listing's filter removes the record from it; one that stays changes it")
    func updatesHeldToFilters() async throws {
        let setup = try Setup()
        let popular = Query().filter("views", .atLeast, 30)
        _ = try await setup.posts.findAll(query: popular).value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.patch(3, with: ["views": 5]).result)
        _ = queued(await setup.posts.patch(4, with: ["title": "Still popular"]).result)
        let listed = try await setup.posts.findAll(query: popular).value
        #expect(listed.map(\.id) == [4, 5])
        #expect(listed.first?.title == "Still popular")
    }

    @Test("a page that ends past Int.max, with a create queued, is answered from the store, not trapped")
    func pageEndingPastIntMax() async throws {
        let setup = try Setup()
        // Page 2 of this size starts at Int.max / 2 + 1 and would end past Int.max.
        let size = Int.max / 2 + 1
        let online = try await setup.posts.findPage(2, size: size).value
        #expect(online.items.isEmpty)
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "Offline", views: 1)).result)
        let stored = try await setup.posts.findPage(2, size: size).value
        #expect(stored.items.isEmpty)
        #expect(stored.total == online.total.map { $0 + 1 })
    }

    @Test("a slice at Int.max from a server that sends no X-Total-Count, with a create queued, is answered")
    func sliceAtIntMaxWithoutTotal() async throws {
        let setup = try Setup()
        setup.server.route(.get, "posts") { context in
            var response = context.jsonServerResponse()
            response.headers.remove("X-Total-Count")
            return response
        }
        let edge = Query().range(Int.max..<Int.max)
        #expect(try await setup.posts.findAll(query: edge).value.isEmpty)
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "Offline", views: 1)).result)
        #expect(try await setup.posts.findAll(query: edge).value.isEmpty)
    }

    @Test("sorted pages: a create goes where the sort puts it, on its page, and X-Total-Count counts it")
    func createOnSortedPages() async throws {
        let setup = try Setup()
        let byViews = Query().sorted(by: "views")
        _ = try await setup.posts.findPage(1, size: 2, query: byViews).value
        _ = try await setup.posts.findPage(2, size: 2, query: byViews).value
        _ = try await setup.posts.findPage(3, size: 2, query: byViews).value
        setup.server.failAll(with: .noConnection)

        // Views 35: after 10 and 20 (page 1), between 30 and 40 on page 2, whose 40 moves on.
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "Middle", views: 35)).result)
        let first = try await setup.posts.findPage(1, size: 2, query: byViews).value
        let second = try await setup.posts.findPage(2, size: 2, query: byViews).value
        #expect(first.items.map(\.views) == [10, 20])
        #expect(first.total == 6)
        #expect(second.items.map(\.views) == [30, 35])
        #expect(second.total == 6)

        // Views 5: first of all, on page 1; page 1's last moves out of it.
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "Least", views: 5)).result)
        let again = try await setup.posts.findPage(1, size: 2, query: byViews).value
        #expect(again.items.map(\.views) == [5, 10])
        #expect(again.total == 7)
        // Views 99: after every stored one; page 3 (views 50) has room.
        _ = queued(await setup.posts.create(NewPost(userId: 2, title: "Most", views: 99)).result)
        let last = try await setup.posts.findPage(3, size: 2, query: byViews).value
        #expect(last.items.map(\.views) == [50, 99])
        #expect(last.total == 8)
    }

    @Test(
        "online: listings the server answers show a create it has not received (its replay stopped at a 503)")
    func listingOnlineWhileReplayStopped() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "Waiting", views: 35)).result)
        setup.server.stopFailing()
        setup.server.route(.post, "posts") { _ in .error(503, "maintenance") }

        let (page, applied) = try await setup.counted {
            try await setup.posts.findPage(2, size: 2, query: Query().sorted(by: "views")).value
        }
        #expect(page.items.map(\.views) == [30, 35])
        #expect(page.total == 6)
        #expect(applied == 1)
        let mine = try await setup.posts.findAll(query: Query().filter("userId", 1)).value
        #expect(mine.map(\.id) == [1, 2, 3, -1])
        let theirs = try await setup.posts.findAll(query: Query().filter("userId", 2)).value
        #expect(theirs.map(\.id) == [4, 5])
        #expect(setup.server.records(in: "posts").count == 5)
    }

    @Test("a deleted record leaves a page, and X-Total-Count drops by one")
    func deleteFromPage() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findPage(1, size: 3).value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.delete(id: 2).result)
        let page = try await setup.posts.findPage(1, size: 3).value
        #expect(page.items.map(\.id) == [1, 3])
        #expect(page.total == 4)
    }

    // MARK: - Local ids and reconciling

    @Test("local ids: negative numbers, unique and durable in the store; strings where the ids are strings")
    func localIDs() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let first = queued(await setup.posts.create(NewPost(userId: 1, title: "A", views: 1)).result)
        let second = queued(await setup.posts.create(NewPost(userId: 1, title: "B", views: 1)).result)
        #expect(first?.localID == .int(-1))
        #expect(second?.localID == .int(-2))
        #expect(try setup.store.outbox.entries().map(\.localID) == [.int(-1), .int(-2)])

        // Another store on the file goes on counting down.
        let (again, backend) = try setup.reopened()
        let third = queued(
            await PostRepository(backend: backend).create(NewPost(userId: 1, title: "C", views: 1)).result)
        #expect(third?.localID == .int(-3))
        _ = again

        // A collection whose stored answers have string ids gets "local-" ids.
        let folder = try TemporaryFolder()
        let tags = try InMemoryBackend(database: Data(#"{"tags": [{"id": "swift", "name": "Swift"}]}"#.utf8))
        let store = try OfflineStore(at: folder.file("tags.sqlite"))
        let backend2 = tags.with(.offline(store))
        _ = try await backend2.send(BackendRequest(method: .get, path: "tags")).value
        store.flush()
        tags.failAll(with: .noConnection)
        let created = await backend2.send(
            BackendRequest(method: .post, path: "tags", body: Data(#"{"name": "Offline"}"#.utf8))
        ).result
        guard case .failure(.queued(let write)) = created, case .string(let local)? = write.localID else {
            Issue.record("expected a string local id, got \(created)")
            return
        }
        #expect(local.hasPrefix("local-"))
    }

    @Test("a queued create's local id and record read as the app's own types; other writes have none")
    func localIDsReadAsTheAppsTypes() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let write = try #require(
            queued(await setup.posts.create(NewPost(userId: 2, title: "Typed", views: 7)).result))
        #expect(try write.localID(as: Post.ID.self) == -1)
        #expect(
            try write.localRecord(as: Post.self, coding: setup.posts.coding)
                == Post(id: -1, userId: 2, title: "Typed", views: 7))
        // A local id that is not the type asked for is a decoding error, never a crash.
        #expect(throws: ServiceError.self) { try write.localID(as: String.self) }
        #expect(throws: ServiceError.self) { try write.localRecord(as: Comment.self) }

        let patch = try #require(queued(await setup.posts.patch(1, with: ["views": 11]).result))
        #expect(try patch.localID(as: Post.ID.self) == nil)
        #expect(try patch.localRecord(as: Post.self) == nil)
    }

    @Test("a local record reads with the repository's coding: snake_case members as the entity's")
    func localRecordReadsWithTheRepositorysCoding() throws {
        let record: JSONValue = ["id": -1, "user_id": 2, "title": "Snake", "views": 3]
        let coding = JSONCoding.default.keyStrategy(.snakeCase)
        #expect(
            try record.decoded(as: Post.self, coding: coding)
                == Post(id: -1, userId: 2, title: "Snake", views: 3))
        #expect(throws: ServiceError.self) { try record.decoded(as: Post.self) }
        #expect(try JSONValue.string("local-1").decoded(as: String.self) == "local-1")
        #expect(
            try JSONValue.string("8c1e2d3a-0000-4000-8000-000000000000").decoded(as: UUID.self).uuidString
                .hasPrefix("8C1E2D3A"))
    }

    @Test("replay: a post and its comment created offline reach the server with the post's real id, once")
    func reconcileOnReplay() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let events = setup.store.outbox.events
        let post = queued(await setup.posts.create(NewPost(userId: 1, title: "Trip", views: 0)).result)
        let localID = try #require(post?.localID.flatMap { if case .int(let id) = $0 { id } else { nil } })
        _ = queued(await setup.comments.create(NewComment(postId: localID, body: "Nice")).result)
        _ = queued(await setup.posts.patch(localID, with: ["title": "Trip to Rome"]).result)

        // Offline, every change shows, by the local id.
        #expect(try await setup.posts.findByID(localID).value.title == "Trip to Rome")

        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)

        let posts = setup.server.records(in: "posts")
        let comments = setup.server.records(in: "comments")
        #expect(posts.count == 6)
        #expect(posts.last?["id"] == 6)
        #expect(posts.last?["title"] == "Trip to Rome")
        #expect(comments.count == 2)
        #expect(comments.last?["postId"] == 6)
        // No local id reached the server.
        #expect(
            !setup.server.requests.contains {
                $0.path.contains("-1") || String(decoding: $0.body ?? Data(), as: UTF8.self).contains("-1")
            })

        // Reads by the local id answer the server's record; listings show the server's ids.
        #expect(try await setup.posts.findByID(localID).value.id == 6)
        #expect(try await setup.posts.findAll().value.map(\.id) == [1, 2, 3, 4, 5, 6])

        var seen: [String] = []
        for await event in events {
            seen.append(String(event.summary.prefix { $0 != " " }))
            if case .created(_, let local, let server) = event {
                #expect(local == .int(localID))
                #expect(server == 6)
                break
            }
        }
        #expect(seen == ["queued", "queued", "queued", "sent", "created"])

        // Sign-out forgets the ids the server named and the outcomes: -1 is no record any more.
        try setup.store.removeAll()
        #expect(try setup.store.outbox.recentOutcomes().isEmpty)
        let forgotten = await setup.posts.findByID(localID).result
        guard case .failure(.notFound) = forgotten else {
            Issue.record("after removeAll, findByID(\(localID)) gave \(forgotten)")
            return
        }
        // Nor after a restart: the file no longer holds the id map.
        let (reopened, backend) = try setup.reopened()
        let afterRestart = await PostRepository(backend: backend).findByID(localID).result
        guard case .failure(.notFound) = afterRestart else {
            Issue.record("after removeAll and a restart, findByID(\(localID)) gave \(afterRestart)")
            return
        }
        _ = reopened
    }

    @Test("after the replay, offline again: the answers stored before it show what the server accepted")
    func storedAnswersShowSentWrites() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findAll().value
        _ = try await setup.posts.findByID(1).value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "New", views: 1)).result)
        _ = queued(await setup.posts.patch(1, with: ["title": "Changed"]).result)
        _ = queued(await setup.posts.delete(id: 5).result)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)
        #expect(setup.server.records(in: "posts").count == 5)

        // The network goes again before anything was read afresh.
        setup.server.failAll(with: .noConnection)
        let (listed, applied) = try await setup.counted { try await setup.posts.findAll().value }
        #expect(listed.map(\.id) == [1, 2, 3, 4, 6])
        #expect(listed.first?.title == "Changed")
        #expect(applied == 0)
        #expect((try? await setup.posts.findByID(1).value)?.title == "Changed")
        #expect((try? await setup.posts.findByID(6).value)?.title == "New")
        #expect((try? await setup.posts.findByID(-1).value)?.id == 6)

        // After a restart too (the outcomes are in the file).
        setup.store.flush()
        let (store, backend) = try setup.reopened()
        let again = try await PostRepository(backend: backend).findAll().value
        #expect(again.map(\.id) == [1, 2, 3, 4, 6])
        _ = store

        // A fresh answer from the server needs none of it.
        setup.server.stopFailing()
        let fresh = try await setup.posts.findAll().value
        #expect(fresh.map(\.id) == [1, 2, 3, 4, 6])
    }

    @Test(
        "an online PATCH answered with the whole record is what reads show offline; an answer that is another record, cut short, or not JSON is not stored"
    )
    func onlineWriteStoresTheWholeRecordOnly() async throws {
        let setup = try Setup()
        for id in 1...4 { _ = try await setup.posts.findByID(id).value }
        #expect(try await setup.posts.patch(1, with: ["title": "Patched"]).value.title == "Patched")
        // A server that answers a PATCH of post 2 with post 4, and one of post 3 cut short.
        setup.server.route(.patch, "posts/2") { _ in
            .json(["id": 4, "userId": 2, "title": "Post 4", "views": 40])
        }
        setup.server.route(.patch, "posts/3") { _ in
            BackendResponse(status: 200, body: Data(#"{"id": 3, "userId": 1, "title": "Cut"#.utf8))
        }
        // And one of post 4 whole, but not JSON (a member without a value).
        setup.server.route(.patch, "posts/4") { _ in
            BackendResponse(
                status: 200, body: Data(#"{"id": 4, "userId": 2, "title": "Bad", "views": }"#.utf8))
        }
        #expect(try await setup.posts.patch(2, with: ["title": "Lost"]).value.id == 4)
        await #expect(throws: ServiceError.self) {
            try await setup.posts.patch(3, with: ["title": "Cut"]).value
        }
        await #expect(throws: ServiceError.self) {
            try await setup.posts.patch(4, with: ["title": "Bad"]).value
        }

        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(1).value.title == "Patched")
        #expect(try await setup.posts.findByID(2).value.title == "Post 2")
        #expect(try await setup.posts.findByID(3).value.title == "Post 3")
        #expect(try await setup.posts.findByID(4).value.title == "Post 4")
    }

    @Test("an answer the server gave before a replayed write, arriving after it, has the write laid over")
    func answerOvertakenByAReplayedWrite() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.patch(1, with: ["title": "Sent"]).result)
        setup.server.stopFailing()
        // A read the server answers at once, whose answer is held on its way back.
        let gate = Gate()
        let held = setup.server.with(.offline(setup.store), HoldingFirst(.get, at: gate))
        let read = Task { try await PostRepository(backend: held).findByID(1).value }
        try #require(await gate.arrived())
        // Meanwhile a replay sends the queued write, and the server applies it.
        #expect(await replayAll(setup.store) == 0)
        #expect(setup.server.records(in: "posts").first?["title"] == "Sent")
        gate.open()
        #expect(try await read.value.title == "Post 1")
        #expect(!gate.gaveUp)

        // Offline, the stored answer misses the write: it is laid over (before, the answer was
        // dated when it arrived, after the write, and reads showed "Post 1").
        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(1).value.title == "Sent")
        // And the next edit is made on it.
        _ = queued(await setup.posts.patch(1, with: ["views": 11]).result)
        #expect(try setup.store.outbox.entries().first?.base?["title"] == "Sent")
    }

    @Test(
        "a write discarded while a replay sent it, that the server applied, shows in reads, after a restart too"
    )
    func discardedWhileSent() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findByID(1).value
        setup.server.failAll(with: .noConnection)
        let write = try #require(queued(await setup.posts.patch(1, with: ["title": "Sent"]).result))
        setup.server.stopFailing()
        let gate = Gate()
        _ = setup.server.with(.offline(setup.store), HoldingFirst(.patch, at: gate))
        let replay = Task { await setup.store.outbox.replay() }
        try #require(await gate.arrived())
        // The app discards it while the server's answer is on its way back.
        #expect(try setup.store.outbox.discard(write.id))
        gate.open()
        _ = await replay.value
        #expect(!gate.gaveUp)
        #expect(setup.server.records(in: "posts").first?["title"] == "Sent")
        // Both are on record, the discard first (`discard(_:)` says a sent event may follow).
        let outcomes = try setup.store.outbox.recentOutcomes().filter { $0.write.id == write.id }
        let decisions = outcomes.map { outcome in
            if case .sent = outcome.decision { "sent" } else { "discarded" }
        }
        #expect(decisions == ["discarded", "sent"])

        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(1).value.title == "Sent")
        // After a restart too (before, only memory knew it was sent: the file had no outcome).
        setup.store.flush()
        let (store, backend) = try setup.reopened()
        #expect(try await PostRepository(backend: backend).findByID(1).value.title == "Sent")
        _ = store
    }

    @Test("a create sent while the app signs out (removeAll) leaves no outcome or id behind in the file")
    func removedAllWhileSent() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.create(NewPost(userId: 1, title: "Before", views: 1)).result)
        setup.server.stopFailing()
        let gate = Gate()
        _ = setup.server.with(.offline(setup.store), HoldingFirst(.post, at: gate))
        let replay = Task { await setup.store.outbox.replay() }
        try #require(await gate.arrived())
        try setup.store.removeAll()
        gate.open()
        let report = await replay.value
        #expect(!gate.gaveUp)
        #expect(setup.server.records(in: "posts").count == 6)
        #expect(report.sent == 0)
        // The sign-out ended its lease: it stopped at its next claim.
        guard case .interrupted(.timedOut) = report.ending else {
            Issue.record("expected .interrupted(.timedOut), got \(report.ending)")
            return
        }
        // Before, the answer that came back after the sign-out was written into the emptied
        // file: the next user's `recentOutcomes()` held it, and reads laid it over.
        #expect(try setup.store.outbox.recentOutcomes().isEmpty)
        #expect(try setup.store.integer("SELECT count(*) FROM id_map") == 0)
        setup.store.flush()
        let (store, _) = try setup.reopened()
        #expect(try store.outbox.recentOutcomes().isEmpty)
    }

    @Test("a write discarded while sent shows as sent even after more discards than the outcomes kept")
    func discardedWhileSentAmongManyDiscards() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findByID(1).value
        setup.server.failAll(with: .noConnection)
        let held = try #require(queued(await setup.posts.patch(1, with: ["title": "Sent"]).result))
        // Replays from now on go through a chain that holds the first `PATCH` once armed.
        let gate = Gate()
        let holding = HoldingFirst(.patch, at: gate, armed: false)
        _ = setup.server.with(.offline(setup.store), holding)
        var others: [QueuedWrite] = []
        for views in 0...Outbox.maxRecentOutcomes {
            others.append(try #require(queued(await setup.posts.patch(2, with: ["views": views]).result)))
        }
        // The replays the queuing started in the background have ended (the network is down).
        #expect(await setup.store.outbox.replay().remaining == others.count + 1)
        setup.server.stopFailing()
        holding.arm()
        let replay = Task { await setup.store.outbox.replay() }
        try #require(await gate.arrived())
        // A "discard all" while the first is on its way: its discarded outcome is pushed out
        // of the recent ones by the others'.
        for write in [held] + others { #expect(try setup.store.outbox.discard(write.id)) }
        gate.open()
        #expect(await replay.value.sent == 1)
        #expect(!gate.gaveUp)
        #expect(try setup.store.outbox.recentOutcomes().last?.write.id == held.id)
        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(1).value.title == "Sent")
    }

    @Test("online, the server's 404 for a record deleted since a replayed write is the answer")
    func serversNotFoundIsTheAnswer() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.patch(1, with: ["title": "Sent"]).result)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)
        // Another device deletes it; the server says so (before: the sent write's answer,
        // among the recent outcomes, was laid over the 404 and the post came back).
        try await PostRepository(backend: setup.server).delete(id: 1).value
        let read = await setup.posts.findByID(1).result
        guard case .failure(.notFound) = read else {
            Issue.record("expected 404, got \(read)")
            return
        }
        // Offline, with nothing stored for it, the sent write still shows.
        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(1).value.title == "Sent")
    }

    @Test(
        "writes sent in later replays show over stored answers after those sent before, once the outbox emptied"
    )
    func sentWritesInTheOrderSent() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findAll().value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.patch(2, with: ["title": "Two"]).result)
        _ = queued(await setup.posts.patch(3, with: ["title": "Three"]).result)
        _ = queued(await setup.posts.update(Post(id: 1, userId: 1, title: "Replaced", views: 1)).result)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)
        // The outbox is empty: the next entry is the first again.
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.delete(id: 1).result)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)

        // Before, the delete (first in its outbox) was laid under the PUT (third in its own).
        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findAll().value.map(\.id) == [2, 3, 4, 5])
        let gone = await setup.posts.findByID(1).result
        guard case .failure(.notFound) = gone else {
            Issue.record("expected 404, got \(gone)")
            return
        }
    }

    @Test("a post and a comment created offline that the server gave the same id each read as themselves")
    func sentCreatesOfOneIDInTwoCollections() async throws {
        let folder = try TemporaryFolder()
        let server = try InMemoryBackend(
            database: Data(
                #"{"posts": [{"id": 1, "userId": 1, "title": "One", "views": 1}], "comments": [{"id": 1, "postId": 1, "body": "c"}]}"#
                    .utf8))
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let posts = PostRepository(backend: server.with(.offline(store)))
        let comments = CommentRepository(backend: server.with(.offline(store)))
        server.failAll(with: .noConnection)
        let post = queued(await posts.create(NewPost(userId: 1, title: "New", views: 0)).result)
        let local = try #require(post?.localID?.intValue)
        _ = queued(await comments.create(NewComment(postId: local, body: "On it")).result)
        server.stopFailing()
        #expect(await replayAll(store) == 0)
        #expect(server.records(in: "posts").last?["id"] == 2)
        #expect(server.records(in: "comments").last?["id"] == 2)

        // Offline, nothing stored for either: each shows from its own create (before, the
        // comment's create hid the post's: both are "2").
        server.failAll(with: .noConnection)
        #expect(try await posts.findByID(local).value.title == "New")
        #expect(try await comments.findByID(2).value.body == "On it")
    }

    @Test("a record created offline that got the id of a record deleted meanwhile reads as created")
    func sentCreateOfAReusedID() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findByID(5).value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.delete(id: 5).result)
        let created = queued(await setup.posts.create(NewPost(userId: 2, title: "New", views: 0)).result)
        let local = try #require(created?.localID?.intValue)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)
        // json-server gives the deleted post's id again.
        #expect(setup.server.records(in: "posts").last?["id"] == 5)

        // Before, the create was laid first and the delete after it: a 404.
        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(local).value == Post(id: 5, userId: 2, title: "New", views: 0))
    }

    @Test("a record created offline that got the id of one another device deleted replaces its stored answer")
    func sentCreateReplacesAStoredRecord() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findByID(5).value
        try await PostRepository(backend: setup.server).delete(id: 5).value
        setup.server.failAll(with: .noConnection)
        let created = queued(await setup.posts.create(NewPost(userId: 2, title: "New", views: 0)).result)
        let local = try #require(created?.localID?.intValue)
        setup.server.stopFailing()
        #expect(await replayAll(setup.store) == 0)
        #expect(setup.server.records(in: "posts").last?["id"] == 5)

        // Before, the answer stored for the deleted post 5 was shown, the create laid under it.
        setup.server.failAll(with: .noConnection)
        #expect(try await setup.posts.findByID(local).value.title == "New")
    }

    @Test(
        "a listing filtered on a record created offline answers its pending records, without a stored answer")
    func listingOfLocalRecord() async throws {
        let setup = try Setup()
        setup.server.failAll(with: .noConnection)
        let post = queued(await setup.posts.create(NewPost(userId: 1, title: "T", views: 0)).result)
        let localID = try #require(post?.localID.flatMap { if case .int(let id) = $0 { id } else { nil } })
        _ = queued(await setup.comments.create(NewComment(postId: localID, body: "on it")).result)
        _ = queued(await setup.comments.create(NewComment(postId: 1, body: "elsewhere")).result)
        let (found, applied) = try await setup.counted {
            try await setup.comments.findAll(query: Query().filter("postId", localID)).value
        }
        #expect(found.map(\.body) == ["on it"])
        #expect(applied == 1)
    }

    @Test("the same with the store reopened between every step, as after restarts")
    func reconcileAcrossRestarts() async throws {
        let folder = try TemporaryFolder()
        let server = try DepotOfflineTests.server()
        let url = folder.file("depot.sqlite")
        server.failAll(with: .noConnection)
        func step<T>(_ body: (any Backend, OfflineStore) async throws -> T) async throws -> T {
            let store = try OfflineStore(at: url)
            return try await body(server.with(.offline(store)), store)
        }
        let localID = try await step { backend, _ in
            let write = queued(
                await PostRepository(backend: backend).create(NewPost(userId: 1, title: "T", views: 0)).result
            )
            return try #require(write?.localID.flatMap { if case .int(let id) = $0 { id } else { nil } })
        }
        try await step { backend, _ in
            _ = queued(
                await CommentRepository(backend: backend).create(NewComment(postId: localID, body: "c"))
                    .result)
        }
        try await step { backend, _ in
            _ = queued(await PostRepository(backend: backend).patch(localID, with: ["title": "T2"]).result)
            let post = try await PostRepository(backend: backend).findByID(localID).value
            #expect(post.title == "T2")
        }
        server.stopFailing()
        try await step { _, store in
            // (A replay the last step started in the background may send some of them.)
            let report = await store.outbox.replay(through: server)
            #expect(report.remaining == 0)
        }
        try await step { backend, _ in
            let post = try await PostRepository(backend: backend).findByID(localID).value
            #expect(post.id == 6)
        }
        #expect(server.records(in: "comments").last?["postId"] == 6)
        #expect(server.records(in: "posts").last?["title"] == "T2")
    }

    @Test("refusal: a queued PATCH the server refuses (409) leaves reads, and the event says so")
    func refusalRollsBack() async throws {
        let setup = try Setup()
        _ = try await setup.posts.findByID(1).value
        setup.server.failAll(with: .noConnection)
        _ = queued(await setup.posts.patch(1, with: ["title": "Mine"]).result)
        #expect(try await setup.posts.findByID(1).value.title == "Mine")

        setup.server.stopFailing()
        setup.server.route(.patch, "posts/:id") { _ in .error(409, "edited elsewhere") }
        let events = setup.store.outbox.events
        let report = await setup.store.outbox.replay()
        #expect(report.kept == 1)
        for await event in events {
            if case .kept(let entry, let error) = event {
                #expect(entry.path.hasSuffix("posts/1"))
                #expect(error.statusCode == 409)
                break
            }
        }
        let (post, applied) = try await setup.counted { try await setup.posts.findByID(1).value }
        #expect(post.title == "Post 1")
        #expect(applied == 0)
    }

    // MARK: - Optimistic mode

    @Test("answersQueuedWrites: a queued write's future succeeds offline with the local answer")
    func optimisticMode() async throws {
        let setup = try Setup(policy: OfflinePolicy(answersQueuedWrites: true))
        _ = try await setup.posts.findByID(1).value
        setup.server.failAll(with: .noConnection)

        let (created, applied) = try await setup.counted {
            try await setup.posts.create(NewPost(userId: 1, title: "Optimistic", views: 3)).value
        }
        #expect(created == Post(id: -1, userId: 1, title: "Optimistic", views: 3))
        #expect(applied == 1)
        let patched = try await setup.posts.patch(1, with: ["views": 99]).value
        #expect(patched == Post(id: 1, userId: 1, title: "Post 1", views: 99))
        try await setup.posts.delete(id: -1).value
        #expect(setup.store.outbox.queuedCount == 3)
        let gone = await setup.posts.findByID(-1).result
        guard case .failure(.notFound) = gone else {
            Issue.record("expected 404, got \(gone)")
            return
        }
    }
}

/// Holds the answer to the first request of `method` through it at `gate` (the server has
/// answered it; the answer is on its way back); lets everything else through.
private struct HoldingFirst: Middleware {
    let method: HTTPMethod
    let gate: Gate
    private let armed: Locked<Bool>

    init(_ method: HTTPMethod, at gate: Gate, armed: Bool = true) {
        self.method = method
        self.gate = gate
        self.armed = Locked(armed)
    }

    /// Holds the next request of `method`.
    func arm() { armed.withLock { $0 = true } }

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let held =
            request.method == method
            && armed.withLock { armed in
                defer { armed = false }
                return armed
            }
        guard held else { return next(request) }
        return Future { promise in
            next(request).start { result in
                DispatchQueue.global().async {
                    gate.wait()
                    promise(result)
                }
            }
        }
    }
}
