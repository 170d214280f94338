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
    @Test func aStoredAnswerIsServedWhenTheServerIsDownAndAfterARestart() async throws {
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
