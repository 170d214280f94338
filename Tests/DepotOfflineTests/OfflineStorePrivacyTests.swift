import Depot
import Foundation
import Testing

@testable import DepotOffline

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 22, defects 4, 5 and 7: the store is private, keeps no secret, and is bounded.
@Suite("OfflineStore: private files, no secrets, bounded")
struct OfflineStorePrivacyTests {
    /// The permission bits of the file at `url` (not following a symbolic link).
    static func mode(_ url: URL) throws -> mode_t {
        var info = stat()
        try #require(lstat(url.filePath, &info) == 0, "no file at \(url.filePath)")
        return info.st_mode & 0o777
    }

    /// Whether `text` appears in the store's file or its companions.
    static func fileHolds(_ text: String, store url: URL) throws -> Bool {
        try ["", "-wal", "-shm"].contains { suffix in
            let file = url.companion(suffix)
            guard file.exists else { return false }
            return try Data(contentsOf: file).range(of: Data(text.utf8)) != nil
        }
    }

    @Test("a new store is 0600 in a 0700 folder it creates, and so are its -wal, -shm and lock files")
    func newStoreIsPrivate() async throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appending(path: "fresh/depot.sqlite")
        // A permissive umask, as many processes have: the store must not rely on it.
        let previous = umask(0o002)
        defer { umask(previous) }
        let store = try OfflineStore(at: url)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        _ = await backend.send(todoWrite(#""title": "a""#)).result
        _ = await store.outbox.replay(through: FailingBackend(error: .cannotConnect))
        #expect(try Self.mode(url.deletingLastPathComponent()) == 0o700)
        for suffix in ["", "-wal", "-shm", "-sender.lock"] {
            #expect(try Self.mode(url.companion(suffix)) == 0o600, "\(suffix)")
        }
    }

    @Test("a store file readable by others (an older version's) is made private when opened")
    func olderStoreIsMadePrivate() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        _ = try OfflineStore(at: url)
        for suffix in ["", "-wal", "-shm"] where url.companion(suffix).exists {
            try #require(chmod(url.companion(suffix).filePath, 0o644) == 0)
        }
        try #require(try Self.mode(url) == 0o644)
        let store = try OfflineStore(at: url)
        #expect(try Self.mode(url) == 0o600)
        try store.sql("DELETE FROM answers")
        #expect(try Self.mode(url.companion("-wal")) == 0o600)
    }

    @Test("no header or query item the redaction names reaches the file; storesAnswer is honoured")
    func secretsNeverReachTheFile() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let server = try InMemoryBackend(
            database: Data(
                #"{"todos": [{"id": 1, "title": "one"}], "me": {"name": "ada"}, "vault": {"pin": 1}}"#.utf8))
        let switchable = SwitchableBackend(server: server)
        let policy = OfflinePolicy(
            storesAnswer: { request, _ in request.path != "vault" },
            redaction: .default.adding(headers: ["X-Tenant-Secret"]))
        let backend = switchable.with(.offline(store, policy: policy))
        let secrets: HTTPHeaders = [
            "X-Api-Key": "api-key-0001", "Api-Key": "api-key-0002", "X-Tenant-Secret": "tenant-0003",
            "Authorization": "Bearer bearer-0004", "Cookie": "session=cookie-0005",
        ]
        // Reads: with secret headers (stored without them), with a token in the URL (not stored).
        _ = try await backend.send(BackendRequest(path: "todos", headers: secrets)).value
        _ = try await backend.send(BackendRequest(path: "me?access_token=token-0006")).value
        _ = try await backend.send(
            BackendRequest(path: "me", query: [URLQueryItem(name: "api_key", value: "key-0007")])
        )
        .value
        _ = try await backend.send(BackendRequest(path: "vault")).value
        store.flush()
        // Writes while down: queued without the secret headers; one with a token in its URL
        // is not queued at all.
        switchable.isDown = true
        _ = try #require(
            queuedWrite(await backend.send(todoWrite(#""title": "b""#, headers: secrets)).result))
        let tokenWrite = BackendRequest(
            method: .post, path: "todos?access_token=token-0008", body: Data("{}".utf8))
        guard case .failure(.cannotConnect) = await backend.send(tokenWrite).result else {
            Issue.record("a write with a secret in its URL must fail as the network failed")
            return
        }
        #expect(try store.outbox.entries().count == 1)
        #expect(try store.outbox.entries().first?.headers["X-Api-Key"] == nil)
        // Offline: the stored answer serves; the ones not stored do not.
        #expect(try await backend.send(BackendRequest(path: "todos")).value.status == 200)
        #expect(await backend.send(BackendRequest(path: "vault")).result.isFailure)
        #expect(await backend.send(BackendRequest(path: "me?access_token=token-0006")).result.isFailure)

        for secret in [
            "api-key-0001", "api-key-0002", "tenant-0003", "bearer-0004", "cookie-0005", "token-0006",
            "key-0007", "token-0008", "\"pin\"",
        ] {
            #expect(try !Self.fileHolds(secret, store: url), "\(secret) found in the store's files")
        }
        #expect(try Self.fileHolds("one", store: url), "the stored answer itself is in the file")
    }

    @Test("a discarded write's body leaves no bytes behind in the file (secure_delete)")
    func deletedBodiesLeaveNoBytes() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        let write = try #require(
            queuedWrite(await backend.send(todoWrite(#""title": "marker-4711""#)).result))
        #expect(try Self.fileHolds("marker-4711", store: url))
        #expect(try store.outbox.discard(write.id))
        try store.sql("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try !Self.fileHolds("marker-4711", store: url))
    }

    @Test("the outbox holds at most maxQueuedWrites; past that a write is not queued and not sent ahead")
    func outboxIsBounded() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend()
        let backend = switchable.with(.offline(store, policy: OfflinePolicy(maxQueuedWrites: 3)))
        switchable.isDown = true
        for title in ["a", "b", "c"] {
            _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "\#(title)""#)).result))
        }
        // Full: a write is neither queued nor sent ahead of the three, down or up.
        for isDown in [true, false] {
            switchable.isDown = isDown
            let before = switchable.attempts.count
            let refused = await backend.send(todoWrite(#""title": "late""#)).result
            guard case .failure(.invalidRequest(let message)) = refused else {
                Issue.record("expected .invalidRequest for a full outbox, got \(refused)")
                return
            }
            #expect(message.contains("outbox is full"))
            #expect(switchable.attempts.count == before)
        }
        #expect(try store.outbox.entries().count == 3)
        #expect(await store.outbox.replay().sent == 3)
        #expect(titles(in: switchable.server) == ["a", "b", "c"])
    }

    @Test("a refusal's body is kept up to 64 KiB")
    func refusalBodyIsCapped() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend()
        let backend = switchable.with(.offline(store))
        switchable.isDown = true
        _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "a""#)).result))
        switchable.isDown = false
        switchable.server.failNext(1, status: 422, body: Data(repeating: UInt8(ascii: "x"), count: 200_000))
        #expect(await store.outbox.replay().kept == 1)
        guard case .kept(let refusal) = try store.outbox.entries().first?.state else {
            Issue.record("expected a kept entry")
            return
        }
        #expect(refusal.body.count == Outbox.maxKeptBodyBytes)
    }

    @Test("recent outcomes keep the server's answer to a sent write, across a restart, the latest 100")
    func recentOutcomesSurvive() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let written: QueuedWrite
        do {
            let store = try OfflineStore(at: url)
            let switchable = SwitchableBackend()
            let backend = switchable.with(.offline(store))
            switchable.isDown = true
            written = try #require(queuedWrite(await backend.send(todoWrite(#""title": "a""#)).result))
            let dropped = try #require(queuedWrite(await backend.send(todoWrite(#""title": "b""#)).result))
            #expect(try store.outbox.discard(dropped.id))
            switchable.isDown = false
            #expect(await store.outbox.replay().sent == 1)
        }
        let reopened = try OfflineStore(at: url)
        let outcomes = try reopened.outbox.recentOutcomes()
        #expect(outcomes.map(\.write.id).last == written.id)
        #expect(outcomes.map(\.write.idempotencyKey).last == written.idempotencyKey)
        guard case .sent(let response) = outcomes.last?.result else {
            Issue.record("expected a sent outcome, got \(outcomes)")
            return
        }
        #expect(response.status == 201)
        #expect(response.headers["Location"]?.hasSuffix("todos/1") == true)
        #expect(outcomes.first?.result == .discarded)

        // Only the latest are kept.
        let backend = FailingBackend(error: .cannotConnect).with(.offline(reopened))
        for index in 0..<Outbox.maxRecentOutcomes {
            let write = try #require(
                queuedWrite(await backend.send(todoWrite(#""title": "\#(index)""#)).result))
            #expect(try reopened.outbox.discard(write.id))
        }
        let latest = try reopened.outbox.recentOutcomes()
        #expect(latest.count == Outbox.maxRecentOutcomes)
        #expect(!latest.contains { $0.write.id == written.id })
    }

    @Test("a subscriber that stops reading holds the newest events only")
    func eventsAreBounded() async {
        let hub = OutboxEventHub()
        let stream = hub.subscribe(bufferingNewest: 3)
        let entries = (0..<5).map { index in
            OutboxEntry(
                id: "e\(index)", position: index, method: .post, path: "todos", query: [], headers: [:],
                body: nil, idempotencyKey: "k\(index)", createdAt: Date(), state: .queued)
        }
        for entry in entries { hub.emit(.queued(entry)) }
        hub.finishAll()
        var seen: [String] = []
        for await event in stream { seen.append(event.entry.id) }
        #expect(seen == ["e2", "e3", "e4"])
    }
}

extension Result {
    /// Whether this is a failure.
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
