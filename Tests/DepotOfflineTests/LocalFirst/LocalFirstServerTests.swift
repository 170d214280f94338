import Depot
import Foundation
import Testing

@testable import DepotOffline

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A post of the DRF app.
private struct ServerPost: Codable, Identifiable, Sendable, Equatable {
    var userId: Int
    var id: Int
    var title: String
    var body: String
}

private struct NewServerPost: Encodable, Sendable {
    var userId: Int
    var title: String
    var body: String
}

/// A comment of the DRF app.
private struct ServerComment: Codable, Identifiable, Sendable, Equatable {
    var postId: Int
    var id: Int
    var name: String
    var email: String
    var body: String
}

private struct NewServerComment: Encodable, Sendable {
    var postId: Int
    var name: String
    var email: String
    var body: String
}

private struct ServerPosts: CRUDRepository {
    typealias Entity = ServerPost
    let backend: any Backend
    let name = "posts"
}

private struct ServerComments: CRUDRepository {
    typealias Entity = ServerComment
    let backend: any Backend
    let name = "comments"
}

/// A backend in front of the real server whose network can be cut: while ``isDown`` every
/// request fails with `.cannotConnect` and nothing reaches the server.
private final class NetworkSwitch: Backend, @unchecked Sendable {
    let server: any Backend
    private let lock = NSLock()
    private var down = true

    init(_ server: any Backend) {
        self.server = server
    }

    var isDown: Bool {
        get { lock.withLock { down } }
        set { lock.withLock { down = newValue } }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        isDown ? .failure(.cannotConnect) : server.send(request)
    }
}

/// The write a `.queued` failure carries, and its local id as a number.
private func queuedLocalID<T>(
    _ result: Result<T, ServiceError>, sourceLocation: SourceLocation = #_sourceLocation
) -> Int? {
    guard case .failure(.queued(let write)) = result else {
        Issue.record("expected .queued, got \(result)", sourceLocation: sourceLocation)
        return nil
    }
    guard case .int(let id)? = write.localID, id < 0 else {
        Issue.record(
            "expected a negative local id, got \(String(describing: write.localID))",
            sourceLocation: sourceLocation)
        return nil
    }
    return id
}

/// Fails the test unless `result` is `.queued`.
private func expectQueued<T>(
    _ result: Result<T, ServiceError>, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard case .failure(.queued) = result else {
        Issue.record("expected .queued, got \(result)", sourceLocation: sourceLocation)
        return
    }
}

/// What the DRF space holds, read straight from it (no store in between).
private struct SpaceState {
    var posts: [ServerPost]
    var comments: [ServerComment]

    init(_ space: URL) async throws {
        let server = URLSessionBackend(baseURL: space, timeout: 60)
        posts = try await ServerPosts(backend: server).findAll().value
        comments = try await ServerComments(backend: server).findAll().value
    }

    /// The records the test created: the seed has posts 1…100 and comments 1…500.
    var newPosts: [ServerPost] { posts.filter { $0.id > 100 } }
    var newComments: [ServerComment] { comments.filter { $0.id > 500 } }
}

/// Local-first against the DRF app over real HTTP (issue 24): a post, a comment on it and an
/// edit of it, all made offline while the post has only a local id, reach the server once each,
/// with the post's real id, when the outbox is replayed; then reads by the local id and
/// listings answer the server's records.
///
/// Skipped without `DEPOT_DRF_URL` (`bash scripts/test` sets it).
@Suite(
    "Local-first against the DRF app",
    .enabled(
        if: OfflineLiveServer.drf != nil,
        "needs the DRF test server (DEPOT_DRF_URL): run `DEPOT_SKIP_AHC=1 bash scripts/test --filter LocalFirstServerTests`"
    )
)
struct LocalFirstServerTests {
    static let title = "Trip"
    static let patchedTitle = "Trip to Rome"
    static let commentBody = "Nice pictures"

    private func newPost() -> NewServerPost {
        NewServerPost(userId: 1, title: Self.title, body: "written offline")
    }

    private func newComment(on postID: Int) -> NewServerComment {
        NewServerComment(postId: postID, name: "offline", email: "me@example.com", body: Self.commentBody)
    }

    @Test(
        "offline post, comment on its local id, patch of it: replayed to the DRF app, once each, with server ids"
    )
    func postCommentPatchReplayed() async throws {
        let space = try OfflineLiveServer.drfSpace()
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let network = NetworkSwitch(URLSessionBackend(baseURL: space, timeout: 60))
        let backend = network.with(.offline(store))
        let posts = ServerPosts(backend: backend)
        let comments = ServerComments(backend: backend)
        let events = store.outbox.events

        // Online first: the listing is stored, as an app that ran before would have it.
        network.isDown = false
        let before = try await posts.findAll().value
        #expect(before.map(\.id) == Array(1...100))
        network.isDown = true

        let localID = try #require(queuedLocalID(await posts.create(newPost()).result))
        expectQueued(await comments.create(newComment(on: localID)).result)
        expectQueued(await posts.patch(localID, with: ["title": Self.patchedTitle]).result)

        // Offline, the changes show by the local id and in the stored listing.
        #expect(try await posts.findByID(localID).value.title == Self.patchedTitle)
        let offlineList = try await posts.findAll().value
        #expect(offlineList.count == 101)
        #expect(offlineList.last?.id == localID)
        #expect(offlineList.last?.title == Self.patchedTitle)

        network.isDown = false
        // A replay the queued-behind writes started may still be on its way to ending at the cut
        // network: the first call may join it; what was sent is read from the server.
        var report = await store.outbox.replay()
        for _ in 0..<4 where report.remaining > 0 {
            report = await store.outbox.replay()
        }
        #expect(report.remaining == 0, "\(report)")
        #expect(try store.outbox.entries().isEmpty, "entries left or kept")

        let state = try await SpaceState(space)
        let post = try #require(state.newPosts.first, "no new post at the server")
        #expect(state.newPosts.count == 1, "new posts: \(state.newPosts)")
        #expect(post.title == Self.patchedTitle)
        #expect(state.newComments.count == 1, "new comments: \(state.newComments)")
        #expect(state.newComments.first?.postId == post.id)
        #expect(state.newComments.first?.body == Self.commentBody)
        #expect(state.comments.allSatisfy { $0.postId > 0 }, "a local id reached the server")

        // Queued (3), then sent and created for the post, sent and created for the comment,
        // sent for the patch.
        let seen = await firstEvents(8, of: events)
        #expect(
            seen.map { String($0.summary.prefix { $0 != " " }) } == [
                "queued", "queued", "queued", "sent", "created", "sent", "created", "sent",
            ])
        let created = seen.compactMap { event -> (JSONValue, JSONValue)? in
            guard case .created(_, let local, let server) = event else { return nil }
            return (local, server)
        }
        #expect(created.first?.0 == .int(localID))
        #expect(created.first?.1 == .int(post.id))
        #expect(created.last?.1 == state.newComments.first.map { .int($0.id) })

        // Through the offline chain, the local id answers the server's record, and the listings
        // show the server's ids.
        let found = try await posts.findByID(localID).value
        #expect(found == post)
        let listed = try await posts.findAll().value
        #expect(listed.map(\.id) == Array(1...100) + [post.id])
        #expect(listed.last?.title == Self.patchedTitle)
        let onPost = try await comments.findAll(query: Query().filter("postId", post.id)).value
        #expect(onPost.map(\.body) == [Self.commentBody])

        // Offline again: the answers stored before the replay show what the server accepted.
        network.isDown = true
        #expect(try await posts.findByID(localID).value.id == post.id)
        #expect(try await posts.findAll().value.map(\.id) == Array(1...100) + [post.id])
    }

    @Test("the same with the store reopened between every step, as after restarts")
    func postCommentPatchReplayedAcrossRestarts() async throws {
        let space = try OfflineLiveServer.drfSpace()
        let folder = try TemporaryFolder()
        let file = folder.file("depot.sqlite")
        let network = NetworkSwitch(URLSessionBackend(baseURL: space, timeout: 60))

        /// Opens a store on the file with a chain through the network, runs `body`, waits until
        /// no replay of the store runs, writes what waits in memory, and releases the store.
        func step<T>(_ body: (OfflineStore, any Backend) async throws -> T) async throws -> T {
            let store = try OfflineStore(at: file)
            let value = try await body(store, network.with(.offline(store)))
            // A replay a queued write started in the background ends before the store goes:
            // joining it returns when it is over (at once while nothing runs).
            _ = await store.outbox.replay(through: network)
            // The answers read in the last tenth of a second go to the file too, as an app
            // that goes to the background does.
            store.flush()
            return value
        }

        network.isDown = false
        try await step { (_, backend) async throws in
            _ = try await ServerPosts(backend: backend).findAll().value
        }
        network.isDown = true
        let localID = try await step { (_, backend) async throws in
            return try #require(queuedLocalID(await ServerPosts(backend: backend).create(newPost()).result))
        }
        try await step { (_, backend) async throws in
            expectQueued(await ServerComments(backend: backend).create(newComment(on: localID)).result)
        }
        try await step { (store, backend) async throws in
            let posts = ServerPosts(backend: backend)
            expectQueued(await posts.patch(localID, with: ["title": Self.patchedTitle]).result)
            #expect(try await posts.findByID(localID).value.title == Self.patchedTitle)
            #expect(try await posts.findAll().value.last?.id == localID)
            #expect(try store.outbox.entries().count == 3)
        }
        try await step { (store, backend) async throws in
            // After a restart, the pending writes still show.
            let post = try await ServerPosts(backend: backend).findByID(localID).value
            #expect(post.title == Self.patchedTitle)
            let onPost = try await ServerComments(backend: backend)
                .findAll(query: Query().filter("postId", localID)).value
            #expect(onPost.map(\.body) == [Self.commentBody])
            #expect(try store.outbox.entries().count == 3)
        }

        network.isDown = false
        let seen = try await step { (store, _) async throws in
            let events = store.outbox.events
            // A new store has seen no request through its chain: the app names the backend.
            let report = await store.outbox.replay(through: network)
            #expect(report == OutboxReplayReport(sent: 3, kept: 0, remaining: 0, ending: .finished))
            return await firstEvents(5, of: events)
        }
        let state = try await SpaceState(space)
        let post = try #require(state.newPosts.first, "no new post at the server")
        #expect(state.newPosts.count == 1, "new posts: \(state.newPosts)")
        #expect(post.title == Self.patchedTitle)
        #expect(state.newComments.count == 1, "new comments: \(state.newComments)")
        #expect(state.newComments.first?.postId == post.id)
        #expect(state.comments.allSatisfy { $0.postId > 0 }, "a local id reached the server")
        #expect(
            seen.map { String($0.summary.prefix { $0 != " " }) } == [
                "sent", "created", "sent", "created", "sent",
            ])
        guard case .created(_, let local, let server)? = seen.dropFirst().first else {
            Issue.record("expected .created after the post's .sent, got \(seen)")
            return
        }
        #expect(local == .int(localID))
        #expect(server == .int(post.id))

        try await step { (_, backend) async throws in
            let posts = ServerPosts(backend: backend)
            #expect(try await posts.findByID(localID).value == post)
            let listed = try await posts.findAll().value
            #expect(listed.map(\.id) == Array(1...100) + [post.id])
            #expect(listed.last?.title == Self.patchedTitle)
        }
        // Offline after one more restart: the stored answers show the server's ids.
        network.isDown = true
        try await step { (_, backend) async throws in
            let posts = ServerPosts(backend: backend)
            #expect(try await posts.findByID(localID).value.id == post.id)
            #expect(try await posts.findAll().value.map(\.id) == Array(1...100) + [post.id])
        }
    }
}
