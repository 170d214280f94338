import Depot
import Foundation
import Testing

@testable import DepotOffline

/// A post as the DRF app serves it.
struct LivePost: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var userId: Int
    var title: String
}

struct LivePostRepository: Readable {
    typealias Entity = LivePost
    let backend: any Backend
    let name = "posts"
}

@Suite(
    "Stored reads against the DRF app",
    .enabled(
        if: OfflineLiveServer.isAvailable,
        "needs the live test servers: run `bash scripts/test` (it starts the DRF app)"))
struct OfflineReadLiveTests {
    @Test func aStoredResponseIsServedWhenTheServerIsDownAndAfterARestart() async throws {
        let folder = try TemporaryFolder()
        let file = folder.file("depot.sqlite")
        let up = try #require(OfflineLiveServer.drf)
        let down = try #require(OfflineLiveServer.closed)

        let online: [LivePost]
        do {
            let store = try OfflineStore(at: file)
            let posts = LivePostRepository(backend: URLSessionBackend(baseURL: up).with(.offline(store)))
            online = try await posts.findAll(query: ["userId": 2]).value
            store.flush()
            // The same app, its server gone: the connection is refused.
            let offline = LivePostRepository(backend: URLSessionBackend(baseURL: down).with(.offline(store)))
            let receipt = AnswerReceipt()
            let served = try await receipt.collect { try await offline.findAll(query: ["userId": 2]).value }
            #expect(served == online)
            #expect(receipt.source != .network)
            // Never asked for while online: the failure itself.
            #expect(await offline.findAll(query: ["userId": 3]).result.failure == .cannotConnect)
        }

        let restarted = try OfflineStore(at: file)
        let posts = LivePostRepository(backend: URLSessionBackend(baseURL: down).with(.offline(restarted)))
        #expect(try await posts.findAll(query: ["userId": 2]).value == online)
        #expect(online.count == 10)
    }
}

@Suite(
    "Stored reads against the DRF app: accounts, no-store, the byte bound",
    .enabled(
        if: OfflineLiveServer.isAvailable,
        "needs the live test servers: run `bash scripts/test` (it starts the DRF app)"))
struct OfflineReadLiveRulesTests {
    @Test func aResponseStoredForOneAccountIsNeverServedToAnother() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let up = try #require(OfflineLiveServer.drf)
        let down = try #require(OfflineLiveServer.closed)
        let account = Shared("alice")
        let policy = OfflinePolicy(account: { account.current })

        let online = try await LivePostRepository(
            backend: URLSessionBackend(baseURL: up).with(.offline(store, policy: policy))
        ).findByID(1).value
        store.flush()

        let offline = LivePostRepository(
            backend: URLSessionBackend(baseURL: down).with(.offline(store, policy: policy)))
        account.current = "bob"
        #expect(await offline.findByID(1).result.failure == .cannotConnect)
        account.current = "alice"
        #expect(try await offline.findByID(1).value == online)
    }

    @Test func aResponseTheServerMarksNoStoreIsNeverStored() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let up = try #require(OfflineLiveServer.drf)
        let down = try #require(OfflineLiveServer.closed)
        let noStore = HeadersMiddleware(["X-Test-Cache-Control": "no-store, private"])

        let answer = try await URLSessionBackend(baseURL: up).with(.offline(store), noStore)
            .send(BackendRequest(path: "posts/2")).value
        #expect(answer.headers["Cache-Control"] == "no-store, private")  // the server's own answer
        _ = try await LivePostRepository(backend: URLSessionBackend(baseURL: up).with(.offline(store)))
            .findByID(3).value
        store.flush()

        #expect(try store.integer("SELECT count(*) FROM answers") == 1)
        let offline = LivePostRepository(backend: URLSessionBackend(baseURL: down).with(.offline(store)))
        #expect(await offline.findByID(2).result.failure == .cannotConnect)
        #expect(try await offline.findByID(3).value.id == 3)
    }

    @Test func theByteBoundEvictsTheLeastRecentlyUsedResponse() async throws {
        let folder = try TemporaryFolder()
        let up = try #require(OfflineLiveServer.drf)
        let down = try #require(OfflineLiveServer.closed)

        // How many bytes each post's answer counts, as this server sends it.
        let measure = try OfflineStore(at: folder.file("measure.sqlite"))
        let measured = OfflineResponseStorage(store: measure)
        var size: [Int: Int] = [:]
        for id in [1, 2, 3] {
            let before = try measured.totalBytes()
            _ = try await LivePostRepository(backend: URLSessionBackend(baseURL: up).with(.offline(measure)))
                .findByID(id).value
            measure.flush()
            size[id] = try measured.totalBytes() - before
        }
        let (one, two, three) = (size[1] ?? 0, size[2] ?? 0, size[3] ?? 0)
        #expect(one > 0 && two > 0 && three > 0)
        try #require(two / 2 <= three)

        // Room for posts 1 and 2, then for 1 and 3, never for all three.
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let policy = OfflinePolicy(maxBytes: one + three + two / 2)
        let posts = LivePostRepository(
            backend: URLSessionBackend(baseURL: up).with(.offline(store, policy: policy)))
        for id in [1, 2] { _ = try await posts.findByID(id).value }
        store.flush()
        _ = try await posts.findByID(1).value  // now 2 is the least recently used
        _ = try await posts.findByID(3).value
        store.flush()

        #expect(try store.integer("SELECT count(*) FROM answers") == 2)
        let offline = LivePostRepository(
            backend: URLSessionBackend(baseURL: down).with(.offline(store, policy: policy)))
        #expect(await offline.findByID(2).result.failure == .cannotConnect)
        #expect(try await offline.findByID(1).value.id == 1)
        #expect(try await offline.findByID(3).value.id == 3)
    }
}
