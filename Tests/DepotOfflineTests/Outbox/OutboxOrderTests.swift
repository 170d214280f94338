import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

/// Issue 22, defect 2: a replay keeps an entry for the app only when the server refused it;
/// on anything the server did not decide it stops with the entry still queued, and no newer
/// write ever overtakes an older one to the same resource.
@Suite("Outbox: order kept on every failure")
struct OutboxOrderTests {
    /// A `PATCH todos/<id>` setting the title.
    static func patch(_ id: Int, _ title: String) -> BackendRequest {
        BackendRequest(
            method: .patch, path: "todos/\(id)", headers: ["Content-Type": "application/json"],
            body: Data(#"{"title": "\#(title)"}"#.utf8))
    }

    /// A server with todos 1 and 2, a store, and the backend `.offline(store)` in front of it;
    /// `middleware` goes behind the offline middleware.
    struct Setup {
        let folder: TemporaryFolder
        let store: OfflineStore
        let switchable: SwitchableBackend
        let backend: any Backend

        init(_ middleware: any Middleware...) throws {
            folder = try TemporaryFolder()
            store = try OfflineStore(at: folder.file("depot.sqlite"))
            switchable = SwitchableBackend(
                server: try InMemoryBackend(
                    database: Data(#"{"todos": [{"id": 1, "title": "one"}, {"id": 2, "title": "two"}]}"#.utf8)
                ))
            backend = switchable.with([OfflineMiddleware(store: store)] + middleware)
        }

        /// Queues `requests` while the network is down; the network is back after.
        func queue(_ requests: [BackendRequest]) async throws -> [QueuedWrite] {
            switchable.isDown = true
            defer { switchable.isDown = false }
            var writes: [QueuedWrite] = []
            for request in requests {
                writes.append(try #require(queuedWrite(await backend.send(request).result)))
            }
            // Writes queued behind others start replays in the background: let them end while
            // the network is still down.
            _ = await store.outbox.replay()
            return writes
        }

        /// The titles in the bodies of the `PATCH`es the server received, in order.
        var patchesReceived: [String] {
            switchable.server.requests.filter { $0.method == .patch }.compactMap { request in
                request.body.flatMap { try? JSONDecoder().decode([String: String].self, from: $0)["title"] }
            }
        }
    }

    @Test(
        "an answer the server did not decide stops the replay with every entry still queued",
        arguments: [401, 408, 425, 429, 500, 502, 503, 302])
    func undecidedAnswerStopsTheReplay(status: Int) async throws {
        let setup = try Setup()
        _ = try await setup.queue([Self.patch(1, "a"), Self.patch(2, "b")])
        setup.switchable.server.failNext(1, status: status)
        let report = await setup.store.outbox.replay(through: setup.switchable)
        #expect(report.sent == 0 && report.kept == 0 && report.remaining == 2)
        guard case .interrupted(let error) = report.ending else {
            Issue.record("expected .interrupted, got \(report.ending)")
            return
        }
        #expect(error.statusCode == status)
        #expect(try setup.store.outbox.entries().map(\.isQueued) == [true, true])
        // The next replay sends both, in order.
        #expect(await setup.store.outbox.replay().sent == 2)
        // The refused attempt, then both.
        #expect(setup.patchesReceived == ["a", "a", "b"])
    }

    @Test(
        "a server's refusal keeps the entry, and the replay goes on with the entries behind it",
        arguments: [400, 403, 404, 409, 410, 412, 422, 451])
    func refusalKeepsTheEntry(status: Int) async throws {
        let setup = try Setup()
        let writes = try await setup.queue([Self.patch(1, "refused"), Self.patch(2, "accepted")])
        setup.switchable.server.failNext(1, status: status)
        let report = await setup.store.outbox.replay(through: setup.switchable)
        #expect(report == OutboxReplayReport(sent: 1, kept: 1, remaining: 0, ending: .finished))
        let entries = try setup.store.outbox.entries()
        #expect(entries.map(\.id) == [writes[0].id])
        guard case .kept(let refusal) = entries.first?.state else {
            Issue.record("expected a kept entry, got \(entries)")
            return
        }
        #expect(refusal.status == status)
    }

    @Test(
        "a token provider that fails stops the replay; a newer write queues behind; all arrive in order")
    func failingTokenProviderKeepsOrder() async throws {
        let keychain = Keychain()
        let setup = try Setup(
            .bearer(token: { try keychain.token() }, refresh: { _ in try keychain.token() }))
        let queued = try await setup.queue((0..<3).map { Self.patch(1, "queued-\($0)") })

        keychain.isLocked = true
        let report = await setup.store.outbox.replay()
        guard case .interrupted(.invalidRequest(let message)) = report.ending else {
            Issue.record("expected an interruption by the token provider, got \(report.ending)")
            return
        }
        #expect(message.contains("token provider"))
        #expect(report.remaining == 3 && report.kept == 0)
        #expect(try setup.store.outbox.entries().map(\.id) == queued.map(\.id))
        #expect(try setup.store.outbox.entries().allSatisfy(\.isQueued))
        #expect(setup.patchesReceived.isEmpty)

        // The keychain opens; a newer write must not overtake the three.
        keychain.isLocked = false
        let newer = try #require(queuedWrite(await setup.backend.send(Self.patch(1, "newer")).result))
        #expect(newer.method == .patch)
        _ = await setup.store.outbox.replay()
        #expect(setup.patchesReceived == ["queued-0", "queued-1", "queued-2", "newer"])
        #expect(titles(in: setup.switchable.server) == ["newer", "two"])
        #expect(try setup.store.outbox.entries().isEmpty)
    }

    @Test("a kept PATCH holds a newer write to its path until the app retries it; other paths go on")
    func keptEntryHoldsItsPath() async throws {
        let setup = try Setup()
        let stale = try #require(try await setup.queue([Self.patch(1, "stale")]).first)
        setup.switchable.server.failNext(1, status: 412)
        #expect(await setup.store.outbox.replay(through: setup.switchable).kept == 1)

        // Another path goes straight to the server.
        #expect(try await setup.backend.send(Self.patch(2, "other")).value.status == 200)
        // The same path waits behind the kept entry, unsent, however often a replay runs.
        let newer = try #require(queuedWrite(await setup.backend.send(Self.patch(1, "newer")).result))
        let held = await setup.store.outbox.replay()
        #expect(held == OutboxReplayReport(sent: 0, kept: 0, remaining: 1, ending: .finished))
        #expect(setup.patchesReceived == ["stale", "other"])
        #expect(try setup.store.outbox.entries().map(\.id) == [stale.id, newer.id])

        // Retried, the kept one goes first; then the newer one.
        #expect(try setup.store.outbox.retry(stale.id))
        _ = await setup.store.outbox.replay()
        #expect(setup.patchesReceived == ["stale", "other", "stale", "newer"])
        #expect(titles(in: setup.switchable.server) == ["newer", "other"])
        #expect(try setup.store.outbox.entries().isEmpty)
    }

    @Test("discarding a kept DELETE lets the writes held behind it go")
    func discardReleasesHeldWrites() async throws {
        let setup = try Setup()
        let delete = BackendRequest(method: .delete, path: "todos/1")
        let kept = try #require(try await setup.queue([delete]).first)
        setup.switchable.server.failNext(1, status: 409)
        #expect(await setup.store.outbox.replay(through: setup.switchable).kept == 1)
        let events = setup.store.outbox.events
        let newer = try #require(queuedWrite(await setup.backend.send(Self.patch(1, "kept alive")).result))
        #expect(setup.patchesReceived.isEmpty)
        #expect(try setup.store.outbox.discard(kept.id))
        // Discarding starts the replay of what it held.
        #expect(
            await firstEvents(3, of: events).map(\.summary) == [
                "queued \(newer.id)", "discarded \(kept.id)", "sent \(newer.id)",
            ])
        #expect(setup.patchesReceived == ["kept alive"])
    }

    @Test("a kept POST holds back no other create in its collection")
    func keptCreateHoldsNothing() async throws {
        let setup = try Setup()
        _ = try await setup.queue([todoWrite(#""title": "refused""#)])
        setup.switchable.server.failNext(1, status: 422)
        #expect(await setup.store.outbox.replay(through: setup.switchable).kept == 1)
        #expect(try await setup.backend.send(todoWrite(#""title": "fresh""#)).value.status == 201)
    }

    @Test("two stores on one file replaying at once send each entry exactly once, in order")
    func twoStoresOneSender() async throws {
        let setup = try Setup()
        let count = 200
        let writes = try await setup.queue((0..<count).map { todoWrite(#""title": "t\#($0)""#) })
        let other = try OfflineStore(at: setup.folder.file("depot.sqlite"))
        #expect(other.outbox.queuedCount == count)
        // Each answer takes a moment, so that the two replays overlap.
        setup.switchable.server.latency = 0.001
        async let first = setup.store.outbox.replay(through: setup.switchable)
        async let second = other.outbox.replay(through: setup.switchable)
        let reports = await [first, second]
        #expect(reports.map(\.sent).reduce(0, +) == count)
        #expect(reports.allSatisfy { $0.ending == .finished && $0.remaining == 0 })
        let keys = setup.switchable.server.requests.filter { $0.method == .post }
            .compactMap { $0.headers["Idempotency-Key"] }
        #expect(keys == writes.map(\.idempotencyKey))
        #expect(titles(in: setup.switchable.server).count == 2 + count)
    }
}

/// A token source that fails while locked, as a keychain does before the first unlock.
final class Keychain: @unchecked Sendable {
    struct Locked: Error {}
    private let lock = NSLock()
    private var locked = false

    var isLocked: Bool {
        get { lock.withLock { locked } }
        set { lock.withLock { locked = newValue } }
    }

    func token() throws -> String {
        guard !isLocked else { throw Locked() }
        return "token"
    }
}
