import Depot
import Foundation
import Testing

@testable import DepotOffline

/// The servers `bash scripts/test` starts (see Tests/DepotTests/Network/LiveServer.swift).
enum LiveServers {
    /// The Django REST framework app.
    static let drf = url("DEPOT_DRF_URL")
    /// A port on 127.0.0.1 where nothing listens: the server, stopped.
    static let closed = url("DEPOT_CLOSED_URL")

    private static func url(_ name: String) -> URL? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : URL(string: $0) }
    }
}

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
        if: LiveServers.drf != nil && LiveServers.closed != nil,
        "needs the live test servers: run `bash scripts/test` (it starts the DRF app)"))
struct OfflineReadLiveTests {
    @Test func aStoredAnswerIsServedWhenTheServerIsDownAndAfterARestart() async throws {
        let folder = try TemporaryFolder()
        let file = folder.file("depot.sqlite")
        let up = try #require(LiveServers.drf)
        let down = try #require(LiveServers.closed)

        let online: [LivePost]
        do {
            let store = try OfflineStore(at: file)
            let posts = LivePostRepository(backend: URLSessionBackend(baseURL: up).with(.offline(store)))
            online = try await posts.findAll(query: ["userId": 2]).value
            store.answerQueue.sync {}
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
