import Depot
import Foundation
import Testing

@testable import DepotOffline

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Replays that meet another device's writes on the DRF test app over real HTTP, which gives a
// record's strong `ETag` and checks `If-Match`: the write goes conditionally, and a `412`
// leads to the read and the merge.

private struct Post: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var userId: Int
    var title: String
    var body: String
}

private struct PostRepository: CRUDRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
}

/// What a request looked like and what it got: for checking the calls a replay makes.
private struct Exchange: Sendable {
    var method: HTTPMethod
    var path: String
    var ifMatch: String?
    var status: Int?
}

/// A network in front of a real server that can be cut (every request fails with
/// `.cannotConnect` without leaving the process) and logs each request it passes on.
private final class Network: Backend, @unchecked Sendable {
    let server: URLSessionBackend
    private let lock = NSLock()
    private var down = false
    private var log: [Exchange] = []

    init(_ server: URLSessionBackend) { self.server = server }

    var isDown: Bool {
        get { lock.withLock { down } }
        set { lock.withLock { down = newValue } }
    }

    var exchanges: [Exchange] { lock.withLock { log } }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        guard !isDown else { return .failure(.cannotConnect) }
        let sent = server.send(request)
        return Future { [self] promise in
            sent.start { result in
                let status: Int? =
                    switch result {
                    case .success(let response): response.status
                    case .failure(let error): error.statusCode
                    }
                self.lock.withLock {
                    self.log.append(
                        Exchange(
                            method: request.method, path: request.path, ifMatch: request.headers["If-Match"],
                            status: status))
                }
                promise(result)
            }
        }
    }
}

/// This device through `.offline(store)` over a network it can cut; the other device straight
/// to a private space of the DRF app.
private struct Devices {
    let folder: TemporaryFolder
    let network: Network
    let store: OfflineStore
    let mine: PostRepository
    let theirs: PostRepository

    init(policy: OfflinePolicy = OfflinePolicy()) throws {
        let space = try OfflineLiveServer.drfSpace()
        folder = try TemporaryFolder()
        network = Network(URLSessionBackend(baseURL: space, timeout: 60))
        store = try OfflineStore(at: folder.file("depot.sqlite"))
        mine = PostRepository(backend: network.with(.offline(store, policy: policy)))
        theirs = PostRepository(backend: URLSessionBackend(baseURL: space, timeout: 60))
    }

    /// Brings the network back and replays (a single queued write: no replay runs before it).
    func replay() async -> OutboxReplayReport {
        network.isDown = false
        return await store.outbox.replay()
    }

    /// The exchanges the replay made: those after the first `count`.
    func calls(after count: Int) -> [String] {
        network.exchanges.dropFirst(count).map {
            "\($0.method.rawValue) \($0.ifMatch == nil ? "" : "if-match ")\($0.status ?? 0)"
        }
    }
}

@Suite(
    "Conflicts over HTTP with validators (DRF)",
    .enabled(
        if: OfflineLiveServer.isAvailable,
        "needs the live test servers (DEPOT_DRF_URL, DEPOT_CLOSED_URL): run `bash scripts/test --filter DepotOfflineTests`"
    )
)
struct ConflictServerTests {
    @Test("nobody else wrote: one PATCH with If-Match, no read")
    func unchangedIsOneConditionalWrite() async throws {
        let devices = try Devices()
        let before = try await devices.mine.findByID(1).value
        devices.network.isDown = true
        let queued = try #require(queued(await devices.mine.patch(1, with: ["title": "Mine"]).result))
        let entry = try #require(try devices.store.outbox.entries().first { $0.id == queued.id })
        #expect(entry.base?["title"] == .string(before.title))
        let count = devices.network.exchanges.count

        #expect(await devices.replay().sent == 1)
        #expect(devices.calls(after: count) == ["PATCH if-match 200"])
        #expect(try await devices.theirs.findByID(1).value.title == "Mine")
    }

    @Test("another device changed another field: 412, the read, then the merged PATCH with their tag")
    func otherFieldMerges() async throws {
        let devices = try Devices()
        _ = try await devices.mine.findByID(1).value
        devices.network.isDown = true
        _ = queued(await devices.mine.patch(1, with: ["title": "Mine"]).result)
        _ = try await devices.theirs.patch(1, with: ["body": "Theirs"]).value
        let count = devices.network.exchanges.count

        #expect(await devices.replay().sent == 1)
        #expect(devices.calls(after: count) == ["PATCH if-match 412", "GET 200", "PATCH if-match 200"])
        let post = try await devices.theirs.findByID(1).value
        #expect(post.title == "Mine" && post.body == "Theirs")
    }

    @Test(
        "the same field, under each policy", arguments: ["keepForApp", "serverWins", "clientWins", "merge"])
    func sameField(_ name: String) async throws {
        let policy: ConflictPolicy =
            switch name {
            case "serverWins": .serverWins
            case "clientWins": .clientWins
            case "merge":
                .merge { conflict in
                    guard case .object(var record)? = conflict.theirs else { return nil }
                    record["title"] = "Merged"
                    return .object(record)
                }
            default: .keepForApp
            }
        let devices = try Devices(policy: OfflinePolicy(onConflict: policy))
        _ = try await devices.mine.findByID(2).value
        devices.network.isDown = true
        _ = queued(await devices.mine.update(Post(id: 2, userId: 1, title: "Mine", body: "Mine")).result)
        _ = try await devices.theirs.patch(2, with: ["title": "Theirs"]).value
        let events = devices.store.outbox.events

        let report = await devices.replay()
        let summaries = await firstEvents(name == "keepForApp" ? 1 : 2, of: events).map(\.summary)
        #expect(summaries.first?.hasPrefix("conflict") == true)
        let post = try await devices.theirs.findByID(2).value
        switch name {
        case "keepForApp":
            #expect(report.kept == 1)
            #expect(post.title == "Theirs")
            #expect(try devices.store.outbox.entries().first?.conflict?.fields == ["title"])
        case "serverWins":
            #expect(report.dropped == 1)
            #expect(post.title == "Theirs")
        case "clientWins":
            #expect(report.sent == 1)
            #expect(post == Post(id: 2, userId: 1, title: "Mine", body: "Mine"))
        default:
            #expect(report.sent == 1)
            #expect(post.title == "Merged")
        }
    }

    @Test("a delete of a record another device changed: 412, the read, a conflict; the record stays")
    func deleteOfChanged() async throws {
        let devices = try Devices()
        _ = try await devices.mine.findByID(3).value
        devices.network.isDown = true
        _ = queued(await devices.mine.delete(id: 3).result)
        _ = try await devices.theirs.patch(3, with: ["body": "Theirs"]).value
        let count = devices.network.exchanges.count

        #expect(await devices.replay().kept == 1)
        #expect(devices.calls(after: count) == ["DELETE if-match 412", "GET 200"])
        #expect(try devices.store.outbox.entries().first?.conflict?.kind == .deletedWhereChanged)
        #expect(try await devices.theirs.findByID(3).value.body == "Theirs")
    }

    @Test("an edit of a record another device deleted: 404, the read's 404, a conflict")
    func editOfDeleted() async throws {
        let devices = try Devices()
        _ = try await devices.mine.findByID(4).value
        devices.network.isDown = true
        _ = queued(await devices.mine.patch(4, with: ["title": "Mine"]).result)
        _ = try await devices.theirs.delete(id: 4).value
        let count = devices.network.exchanges.count

        #expect(await devices.replay().kept == 1)
        #expect(devices.calls(after: count) == ["PATCH if-match 404", "GET 404"])
        #expect(try devices.store.outbox.entries().first?.conflict?.kind == .changedWhereDeleted)
    }

    @Test("two offline edits of one record: the first goes with If-Match, the second is read and compared")
    func chainOfEdits() async throws {
        let devices = try Devices()
        _ = try await devices.mine.findByID(5).value
        devices.network.isDown = true
        _ = queued(await devices.mine.patch(5, with: ["title": "First"]).result)
        _ = queued(await devices.mine.patch(5, with: ["body": "Second"]).result)
        let entries = try devices.store.outbox.entries()
        #expect(entries.map { $0.writeBase?.entityTag != nil } == [true, false])
        _ = try await devices.theirs.patch(5, with: ["userId": 2]).value

        devices.network.isDown = false
        #expect(await replayAll(devices.store) == 0)
        let post = try await devices.theirs.findByID(5).value
        #expect(post.title == "First" && post.body == "Second" && post.userId == 2)
    }
}
