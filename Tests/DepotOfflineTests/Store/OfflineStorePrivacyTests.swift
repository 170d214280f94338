import Depot
import DepotInMemory
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
        let store = try OfflineStore(at: url)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        _ = await backend.send(todoWrite(#""title": "a""#)).result
        _ = await store.outbox.replay(through: FailingBackend(error: .cannotConnect))
        #expect(try Self.mode(url.deletingLastPathComponent()) == 0o700)
        for suffix in ["", "-wal", "-shm"] {
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

    @Test("no header or query item the redaction names reaches the file; storesResponse is honoured")
    func secretsNeverReachTheFile() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let server = try InMemoryBackend(
            database: Data(
                #"{"todos": [{"id": 1, "title": "one"}], "me": {"name": "ada"}, "vault": {"pin": 1}}"#.utf8))
        let switchable = SwitchableBackend(server: server)
        let policy = OfflinePolicy(
            storesResponse: { request, _ in request.path != "vault" },
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

    /// (Debian's SQLite is built with secure_delete on by default, so there this holds without
    /// the pragma too; Depot sets it for builds where it is off.)
    @Test("a discarded write's body leaves no bytes behind in the file (secure_delete)")
    func deletedBodiesLeaveNoBytes() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        let write = try #require(
            queuedWrite(await backend.send(todoWrite(#""title": "marker-4711""#)).result))
        #expect(try Self.fileHolds("marker-4711", store: url))
        #expect(try store.integer("PRAGMA secure_delete") == 1)
        #expect(try store.outbox.discard(write.id))
        try store.sql("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try !Self.fileHolds("marker-4711", store: url))
    }

    @Test(
        "removeAll() leaves nothing in the file or its log; a reader keeping the log is an error, a later call finishes"
    )
    func removeAllLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "marker-5150""#)).result))
        #expect(try Self.fileHolds("marker-5150", store: url))
        // Another connection to the file (another process's store, say) in the middle of a read:
        // the pages it reads stay in the log until it is done.
        let reader = try SQLiteConnection(path: url.filePath, create: false)
        try reader.executeScript("BEGIN")
        #expect(try reader.integer("SELECT count(*) FROM outbox") == 1)
        // On a thread of its own: SQLite waits out its 5 s busy timeout in it, which would hold a
        // thread of the cooperative pool the other tests run on (2 on a 2-core machine).
        let outcome: Result<Void, OfflineStoreError> = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Result { () throws(OfflineStoreError) in try store.removeAll() })
            }
            .start()
        }
        guard case .failure(let error) = outcome else {
            Issue.record("removeAll() returned as if done while the reader kept the log")
            return
        }
        #expect(error.kind == .sqlite, "\(error)")
        #expect(error.resultCode == 5)  // SQLITE_BUSY
        #expect(error.description.contains(url.filePath))
        #expect(error.message.contains("write-ahead log could not be emptied"))
        #expect(try store.integer("SELECT count(*) FROM outbox") == 0)
        #expect(try Self.fileHolds("marker-5150", store: url))  // in the log the reader holds
        try reader.executeScript("COMMIT")
        try store.removeAll()
        #expect(try !Self.fileHolds("marker-5150", store: url))
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
        // Writes queued behind others start replays in the background: let them end while
        // the network is still down.
        _ = await store.outbox.replay()
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
        let setup = try OutboxOrderTests.Setup()
        _ = try await setup.queue([todoWrite(#""title": "a""#)])
        setup.switchable.server.failNext(
            1, status: 422, body: Data(repeating: UInt8(ascii: "x"), count: 200_000))
        #expect(await setup.store.outbox.replay().kept == 1)
        guard case .kept(let refusal) = try setup.store.outbox.entries().first?.state else {
            Issue.record("expected a kept entry")
            return
        }
        #expect(refusal.body.count == Outbox.maxStoredBodyBytes)
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
            _ = await store.outbox.replay()
            #expect(try store.outbox.discard(dropped.id))
            switchable.isDown = false
            #expect(await store.outbox.replay().sent == 1)
        }
        let reopened = try OfflineStore(at: url)
        let outcomes = try reopened.outbox.recentOutcomes()
        #expect(outcomes.map(\.write.id).last == written.id)
        #expect(outcomes.map(\.write.idempotencyKey).last == written.idempotencyKey)
        guard case .sent(let response) = outcomes.last?.decision else {
            Issue.record("expected a sent outcome, got \(outcomes)")
            return
        }
        #expect(response.status == 201)
        #expect(response.headers["Location"]?.hasSuffix("todos/1") == true)
        #expect(outcomes.first?.decision == .discarded)

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
                body: nil, idempotencyKey: "k\(index)", queuedAt: Date(), state: .queued)
        }
        for entry in entries { hub.emit(.queued(entry)) }
        hub.finishAll()
        var seen: [String] = []
        for await event in stream { seen.append(event.entry.id) }
        #expect(seen == ["e2", "e3", "e4"])
    }
}

extension OfflineStorePrivacyTests {
    @Test("a redaction that does not list them still keeps credentials out of the file and the log")
    func credentialsAreAlwaysRedacted() async throws {
        let redaction = Redaction(headers: ["X-Tenant"])
        for name in ["Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-Tenant"] {
            #expect(redaction.redacts(header: name), "\(name)")
        }
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let backend = FailingBackend(error: .cannotConnect).with(
            .offline(store, policy: OfflinePolicy(redaction: redaction)))
        let headers: HTTPHeaders = ["Authorization": "Bearer bearer-5150", "X-Tenant": "tenant-5151"]
        _ = try #require(
            queuedWrite(await backend.send(todoWrite(#""title": "a""#, headers: headers)).result))
        #expect(try store.outbox.entries().first?.headers == ["Content-Type": "application/json"])
        #expect(try !Self.fileHolds("bearer-5150", store: url))
        #expect(try !Self.fileHolds("tenant-5151", store: url))
    }

    @Test("an outcome keeps no body the answer marked no-store, nor one storesResponse refuses")
    func outcomesHonourNoStore() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let policy = OfflinePolicy(storesResponse: { request, _ in request.path != "tokens" })
        let down = FailingBackend(error: .cannotConnect).with(.offline(store, policy: policy))
        for path in ["keys", "tokens", "todos"] {
            let write = BackendRequest(method: .post, path: path, body: Data("{}".utf8))
            _ = try #require(queuedWrite(await down.send(write).result))
        }
        let server = AnsweringBackend { request in
            let noStore: HTTPHeaders = request.path == "keys" ? ["Cache-Control": "no-store"] : [:]
            return BackendResponse(
                status: 201, headers: noStore.merging(["Location": "\(request.path)/9"]),
                body: Data(#"{"id": 9, "secret": "body-of-\#(request.path)"}"#.utf8))
        }
        // The policy reaches the outbox with a request through the middleware; the replays the
        // writes queued behind others started end first (through the backend that is down).
        _ = await down.send(BackendRequest(path: "todos")).result
        _ = await store.outbox.replay()
        #expect(await store.outbox.replay(through: server).sent == 3)
        let outcomes = try store.outbox.recentOutcomes()
        let bodies = outcomes.map { outcome -> String in
            guard case .sent(let response) = outcome.decision else { return "not sent" }
            #expect(response.status == 201)
            #expect(response.headers["Location"] == "\(outcome.write.path)/9")
            return String(decoding: response.body, as: UTF8.self)
        }
        #expect(bodies == ["", "", #"{"id": 9, "secret": "body-of-todos"}"#])
        try store.sql("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try !Self.fileHolds("body-of-keys", store: url))
        #expect(try !Self.fileHolds("body-of-tokens", store: url))
    }

    @Test("a store of version 3 loses the secrets it kept when it is upgraded")
    func upgradeScrubsSecrets() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        do {
            let old = try OfflineStore(at: url, migrations: Array(StoreSchema.migrations.prefix(3)))
            let headers: HTTPHeaders = ["X-Api-Key": "api-key-7001", "Accept": "application/json"]
            try old.sql(
                """
                INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                    created_at, state)
                VALUES ('e1', 1, 'PATCH', 'todos/1', x'', ?, x'', 'k1', 0, 'queued')
                """, [.blob(FieldCoding.encode(headers))])
            try OfflineResponseStorage(store: old).store(
                StoredResponse(BackendResponse(status: 200, body: Data("me-7002".utf8))),
                for: StoredResponseKey(
                    path: "me", query: [URLQueryItem(name: "access_token", value: "token-7003")]))
            try OfflineResponseStorage(store: old).store(
                StoredResponse(
                    BackendResponse(status: 200, headers: ["X-Api-Key": "api-key-7004"], body: Data())),
                for: StoredResponseKey(path: "todos"))
            #expect(try Self.fileHolds("api-key-7001", store: url))
        }
        let store = try OfflineStore(at: url)
        #expect(try store.outbox.entries().first?.headers == ["Accept": "application/json"])
        #expect(try OfflineResponseStorage(store: store).count() == 1)
        for secret in ["api-key-7001", "me-7002", "token-7003", "api-key-7004"] {
            #expect(try !Self.fileHolds(secret, store: url), "\(secret) is still in the file")
        }
    }

    @Test("the sender lease of a process that is gone, or of one past its duration, is taken at once")
    func staleLeasesAreTaken() async throws {
        // A process that has ended: its pid answers ESRCH.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/sh")
        ended.arguments = ["-c", "exit 0"]
        try ended.run()
        ended.waitUntilExit()
        for (pid, expiresIn) in [(Int64(ended.processIdentifier), 3600.0), (Int64(getppid()), -1.0)] {
            let setup = try OutboxOrderTests.Setup()
            let store = setup.store
            _ = try await setup.queue([todoWrite(#""title": "a""#)])
            try store.sql(
                "INSERT OR REPLACE INTO outbox_sender (id, owner, pid, expires_at) VALUES (1, 'other', ?, ?)",
                [.integer(pid), .real(Date().timeIntervalSince1970 + expiresIn)])
            let report = await awaitWithin(hangBound) { await store.outbox.replay() }
            #expect(report?.sent == 1, "pid \(pid), expiring in \(expiresIn) s")
            #expect(try store.integer("SELECT count(*) FROM outbox_sender") == 0)
        }
    }
}

/// A backend that answers every request with `answer(request)`.
struct AnsweringBackend: Backend {
    let answer: @Sendable (BackendRequest) -> BackendResponse

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        .success(answer(request))
    }
}

extension HTTPHeaders {
    /// These fields and `other`'s.
    func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(fields + other.fields)
    }
}

extension Result {
    /// Whether this is a failure.
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
