import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

@Suite("Outbox: writes that survive the network")
struct OutboxTests {
    @Test(
        "every write carries an Idempotency-Key from its first attempt and is retryable; a given key is kept")
    func idempotencyKeyOnEveryWrite() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let server = try InMemoryBackend(database: Data(#"{"todos": []}"#.utf8))
        let backend = server.with(.offline(store))
        _ = try await backend.send(todoWrite(#""title": "a""#)).value
        _ = try await backend.send(todoWrite(#""title": "b""#, headers: ["Idempotency-Key": "mine"])).value
        _ = try await backend.send(BackendRequest(path: "todos")).value
        let requests = server.requests
        let generated = try #require(requests[0].headers["Idempotency-Key"])
        #expect(UUID(uuidString: generated) != nil)
        #expect(requests[0].isRetryable)
        #expect(requests[1].headers.values(for: "Idempotency-Key") == ["mine"])
        #expect(requests[2].headers["Idempotency-Key"] == nil)
        #expect(try store.outbox.entries().isEmpty)
    }

    @Test("a write with any HTTP answer is returned as it is; a cancelled one is not queued")
    func answersAreNotQueued() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let server = InMemoryBackend()
        server.failNext(1, status: 500)
        server.failNext(1, status: 409)
        let backend = server.with(.offline(store))
        #expect(await backend.send(todoWrite(#""title": "a""#)).result.failure?.statusCode == 500)
        #expect(await backend.send(todoWrite(#""title": "a""#)).result.failure?.statusCode == 409)
        let cancelled = FailingBackend(error: .cancelled).with(.offline(store))
        #expect(await cancelled.send(todoWrite(#""title": "a""#)).result.failure == .cancelled)
        #expect(try store.outbox.entries().isEmpty)
        #expect(store.outbox.queuedCount == 0)
    }

    @Test(
        "queued while down: .queued names the entry, which survives a restart and is replayed in order with its key",
        arguments: [
            ServiceError.cannotConnect, .noConnection, .timedOut,
            .transport(code: -1005, description: "lost"),
        ]
    )
    func queuedPersistedAndReplayedInOrder(failure: ServiceError) async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let switchable = SwitchableBackend(
            server: try InMemoryBackend(database: Data(#"{"todos": []}"#.utf8)))
        var written: [QueuedWrite] = []
        do {
            let store = try OfflineStore(at: url)
            // The first write meets `failure` itself; the rest are queued behind it.
            let down = FailingBackend(error: failure).with(.offline(store))
            for title in ["first", "second", "third"] {
                let result = await down.send(todoWrite(#""title": "\#(title)""#)).result
                written += [try #require(queuedWrite(result))]
            }
            let entries = try store.outbox.entries()
            #expect(entries.map(\.id) == written.map(\.id))
            #expect(entries.map(\.idempotencyKey) == written.map(\.idempotencyKey))
            #expect(entries.map(\.position) == [1, 2, 3])
            #expect(entries.allSatisfy { $0.isQueued && $0.method == .post && $0.path == "todos" })
            #expect(written.allSatisfy { $0.method == .post && $0.path == "todos" })
            // A replay started by the queued-behind writes ends on the failing backend.
            let settled = await store.outbox.replay()
            #expect(settled.ending == .interrupted(failure))
            #expect(settled.remaining == 3)
        }
        // A restart: a new store on the file finds the same entries.
        let store = try OfflineStore(at: url)
        let entries = try store.outbox.entries()
        #expect(entries.map(\.id) == written.map(\.id))
        #expect(store.outbox.queuedCount == 3)
        #expect(await store.outbox.replay().ending == .noBackend)

        let report = await store.outbox.replay(through: switchable)
        #expect(report == OutboxReplayReport(sent: 3, kept: 0, remaining: 0, ending: .finished))
        #expect(titles(in: switchable.server) == ["first", "second", "third"])
        #expect(switchable.server.records(in: "todos").map { $0["id"] } == [.int(1), .int(2), .int(3)])
        #expect(switchable.attempts.map { $0.headers["Idempotency-Key"] } == written.map(\.idempotencyKey))
        #expect(switchable.attempts.allSatisfy { $0.isRetryable })
        #expect(try store.outbox.entries().isEmpty)
    }

    @Test("the key of the first attempt is the key of the replay")
    func firstAttemptAndReplayShareTheKey() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend()
        let backend = switchable.with(.offline(store))
        switchable.isDown = true
        let write = try #require(queuedWrite(await backend.send(todoWrite(#""title": "a""#)).result))
        switchable.isDown = false
        #expect(await store.outbox.replay().sent == 1)
        let keys = switchable.attempts.map { $0.headers["Idempotency-Key"] }
        #expect(keys == [write.idempotencyKey, write.idempotencyKey])
        #expect(switchable.server.requests.count == 1)
    }

    @Test("no credential is stored; the replay gets a fresh token from the auth behind the middleware")
    func credentialsAreNotStored() async throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let switchable = SwitchableBackend()
        let tokens = TokenCounter()
        let backend = switchable.with(
            .offline(store),
            .bearer(token: { tokens.next() }, refresh: { _ in tokens.next() }),
            .headers(["X-Client": "tests"])
        )
        switchable.isDown = true
        // Credentials on the request itself (the middleware should be first; strip anyway).
        let signed = todoWrite(
            #""title": "signed""#,
            headers: [
                "Authorization": "Basic c2VjcmV0", "Proxy-Authorization": "Basic cHJveHk=",
                "Cookie": "session=s3cr3t", "X-Trace": "t1",
            ])
        _ = try #require(queuedWrite(await backend.send(signed).result))
        _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "plain""#)).result))
        _ = await store.outbox.replay()
        #expect(switchable.attempts.first?.headers["Authorization"] == "Basic c2VjcmV0")

        let entries = try store.outbox.entries()
        for entry in entries {
            for name in ["Authorization", "Proxy-Authorization", "Cookie", "Idempotency-Key", "X-Client"] {
                #expect(!entry.headers.contains(name), "\(name) stored in \(entry.headers)")
            }
        }
        #expect(entries[0].headers["X-Trace"] == "t1")
        #expect(entries[0].headers["Content-Type"] == "application/json")
        // Not in the file either, in any form.
        try store.sql("PRAGMA wal_checkpoint(TRUNCATE)")
        let bytes = try Data(contentsOf: url)
        for secret in ["c2VjcmV0", "cHJveHk=", "s3cr3t", "Bearer token"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) found in the file")
        }

        switchable.isDown = false
        let before = switchable.attempts.count
        #expect(await store.outbox.replay().sent == 2)
        let replays = switchable.attempts.dropFirst(before)
        let authorizations = replays.map { $0.headers["Authorization"] ?? "none" }
        // Each replay is signed anew: a token later than any the failed attempts carried.
        let used = Set(switchable.attempts.prefix(before).compactMap { $0.headers["Authorization"] })
        #expect(authorizations.count == 2)
        #expect(authorizations.allSatisfy { $0.hasPrefix("Bearer token-") && !used.contains($0) })
        #expect(replays.allSatisfy { $0.headers["X-Client"] == "tests" && $0.headers["Cookie"] == nil })
    }

    @Test("a 409 is kept and reported, the entries behind it are sent; retry and discard resolve it")
    func refusedEntryIsKept() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend(
            server: try InMemoryBackend(database: Data(#"{"todos": [{"id": 1, "title": "old"}]}"#.utf8)))
        let backend = switchable.with(.offline(store))
        let events = store.outbox.events
        switchable.isDown = true
        let duplicate = try #require(
            queuedWrite(await backend.send(todoWrite(#""id": 1, "title": "dup""#)).result))
        let fresh = try #require(queuedWrite(await backend.send(todoWrite(#""title": "fresh""#)).result))
        _ = await store.outbox.replay()
        switchable.isDown = false

        let report = await store.outbox.replay()
        #expect(report == OutboxReplayReport(sent: 1, kept: 1, remaining: 0, ending: .finished))
        #expect(titles(in: switchable.server) == ["old", "fresh"])
        let seen = await firstEvents(4, of: events)
        #expect(
            seen.map(\.summary) == [
                "queued \(duplicate.id)", "queued \(fresh.id)", "kept \(duplicate.id)", "sent \(fresh.id)",
            ])
        if case .kept(let entry, let error) = seen[2] {
            #expect(error.statusCode == 409)
            guard case .conflict = error else {
                Issue.record("expected .conflict, got \(error)")
                return
            }
            guard case .kept(let refusal) = entry.state else {
                Issue.record("expected a kept entry, got \(entry.state)")
                return
            }
            #expect(refusal.status == 409)
            #expect(refusal.message != nil)
        }
        if case .sent(_, let response) = seen[3] { #expect(response.status == 201) }

        // Kept, with its refusal, after a restart too.
        let entries = try OfflineStore(at: folder.file("depot.sqlite")).outbox.entries()
        #expect(entries.map(\.id) == [duplicate.id])
        guard case .kept(let refusal) = entries.first?.state else {
            Issue.record("expected a kept entry, got \(entries)")
            return
        }
        #expect(refusal.status == 409)
        #expect(refusal.error.statusCode == 409)
        #expect(store.outbox.queuedCount == 0)

        // Retry: back in the queue, replayed, refused again and kept again.
        let later = store.outbox.events
        #expect(try store.outbox.retry(duplicate.id))
        _ = await store.outbox.replay()
        #expect(try store.outbox.entries().map(\.isQueued) == [false])
        #expect(
            await firstEvents(2, of: later).map(\.summary) == [
                "queued \(duplicate.id)", "kept \(duplicate.id)",
            ])

        // Discard: gone, reported.
        let last = store.outbox.events
        #expect(try store.outbox.discard(duplicate.id))
        #expect(try !store.outbox.discard(duplicate.id))
        #expect(try store.outbox.entries().isEmpty)
        #expect(await firstEvents(1, of: last).map(\.summary) == ["discarded \(duplicate.id)"])
        #expect(titles(in: switchable.server) == ["old", "fresh"])
    }

    @Test("a 5xx stops the replay and keeps the entries queued")
    func serverErrorStopsReplay() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend()
        let backend = switchable.with(.offline(store))
        switchable.isDown = true
        for title in ["a", "b"] {
            _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "\#(title)""#)).result))
        }
        _ = await store.outbox.replay()
        switchable.isDown = false
        switchable.server.failNext(1, status: 503)
        let report = await store.outbox.replay()
        #expect(report.sent == 0 && report.remaining == 2)
        #expect(report.ending.isInterrupted(status: 503))
        #expect(try store.outbox.entries().map(\.isQueued) == [true, true])
        #expect(await store.outbox.replay().sent == 2)
        #expect(titles(in: switchable.server) == ["a", "b"])
    }

    @Test("a new write while entries are queued is queued behind them, never sent ahead")
    func newWriteQueuedBehind() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend()
        let backend = switchable.with(.offline(store))
        switchable.isDown = true
        let create = try #require(queuedWrite(await backend.send(todoWrite(#""title": "created""#)).result))
        switchable.isDown = false
        // The network is back, but the entry is still queued: the PATCH must not overtake it.
        let patch = BackendRequest(method: .patch, path: "todos/1", body: Data(#"{"title": "patched"}"#.utf8))
        let patched = try #require(queuedWrite(await backend.send(patch).result))
        #expect(patched.method == .patch)
        // The replay the queued-behind write started sends both, in order.
        let report = await store.outbox.replay()
        #expect(report.ending == .finished)
        #expect(titles(in: switchable.server) == ["patched"])
        let keys = switchable.server.requests.map { $0.headers["Idempotency-Key"] }
        #expect(keys == [create.idempotencyKey, patched.idempotencyKey])
        #expect(try store.outbox.entries().isEmpty)
        // Nothing queued any more: writes go straight through again.
        #expect(try await backend.send(todoWrite(#""title": "direct""#)).value.status == 201)
    }

    @Test("a replay starts by itself after a later request succeeds")
    func automaticReplayAfterSuccess() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend(
            server: try InMemoryBackend(database: Data(#"{"todos": []}"#.utf8)))
        let backend = switchable.with(.offline(store))
        let events = store.outbox.events
        switchable.isDown = true
        let write = try #require(queuedWrite(await backend.send(todoWrite(#""title": "later""#)).result))
        switchable.isDown = false
        #expect(try await backend.send(BackendRequest(path: "todos")).value.status == 200)
        let seen = await firstEvents(2, of: events)
        #expect(seen.map(\.summary) == ["queued \(write.id)", "sent \(write.id)"])
        #expect(titles(in: switchable.server) == ["later"])
        #expect(store.outbox.queuedCount == 0)
    }

    @Test("events reach every subscriber in order; a subscriber sees only what follows it")
    func eventsInOrder() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let switchable = SwitchableBackend()
        let backend = switchable.with(.offline(store))
        let first = store.outbox.events
        let second = store.outbox.events
        switchable.isDown = true
        var ids: [String] = []
        for title in ["a", "b", "c"] {
            ids += [
                try #require(queuedWrite(await backend.send(todoWrite(#""title": "\#(title)""#)).result)).id
            ]
        }
        let late = store.outbox.events
        _ = await store.outbox.replay()
        switchable.isDown = false
        #expect(await store.outbox.replay().sent == 3)
        // Each create was queued with a local id: the server's id for it follows its `sent`.
        let replayed = ids.flatMap { ["sent \($0)", "created \($0)"] }
        let expected = ids.map { "queued \($0)" } + replayed
        #expect(await firstEvents(9, of: first).map(\.summary) == expected)
        #expect(await firstEvents(9, of: second).map(\.summary) == expected)
        #expect(await firstEvents(6, of: late).map(\.summary) == replayed)
    }

    @Test("8 tasks × 100 writes while down: 800 entries, each task's order kept")
    func concurrentWrites() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let backend = FailingBackend(error: .noConnection).with(.offline(store))
        let queued = await withTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var ids: [String] = []
                    for index in 0..<100 {
                        let request = todoWrite(#""task": \#(task), "index": \#(index)"#)
                        if case .failure(.queued(let write)) = await backend.send(request).result {
                            ids.append(write.id)
                        }
                    }
                    return ids
                }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(queued.count == 800)
        _ = await store.outbox.replay()
        let entries = try store.outbox.entries()
        #expect(entries.count == 800)
        #expect(Set(entries.map(\.id)) == Set(queued))
        #expect(Set(entries.map(\.idempotencyKey)).count == 800)
        #expect(entries.map(\.position) == entries.map(\.position).sorted())
        var byTask: [Int: [Int]] = [:]
        for entry in entries {
            let fields = try JSONDecoder().decode([String: Int].self, from: try #require(entry.body))
            byTask[fields["task"] ?? -1, default: []].append(fields["index"] ?? -1)
        }
        #expect(byTask.count == 8)
        for (task, indices) in byTask { #expect(indices == Array(0..<100), "task \(task)") }
        #expect(store.outbox.queuedCount == 800)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test("removeAll() empties the outbox and its count")
    func removeAllForgetsTheQueue() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "a""#)).result))
        try store.removeAll()
        #expect(store.outbox.queuedCount == 0)
        #expect(try store.outbox.entries().isEmpty)
        #expect(await store.outbox.replay().ending == .finished)
    }

    /// The window between a replay taking the lease and its first claim (which only checks the
    /// lease, `renewing: false`): a sign-out there must end that replay, or it would go on to
    /// send what the next user queues.
    @Test("a replay that took the lease just before removeAll() claims nothing after, not even a new write")
    func removeAllEndsALeaseJustTaken() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        _ = try store.outbox.enqueue(todoWrite(#""title": "before""#), policy: OfflinePolicy())
        #expect(try store.outbox.tryTakeLease())
        try store.removeAll()
        // The next user's write, queued before the replay's first claim.
        _ = try store.outbox.enqueue(todoWrite(#""title": "after""#), policy: OfflinePolicy())
        var ended = false
        let claim = try store.outbox.claimHead(renewing: false) { _ in ended = true }
        guard case .leaseLost = claim else {
            Issue.record("the replay went on after removeAll(): \(claim)")
            return
        }
        #expect(!ended)
        #expect(
            try store.outbox.entries().map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == [
                #"{"title": "after"}"#
            ])
    }
}

@Suite("Outbox: one sender per store, whichever chain uses it")
struct OutboxReplayerTests {
    @Test(
        "a .offline(store) called by hand, without with(...), replays through the chain its requests went down"
    )
    func aMiddlewareCalledByHandReplays() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let network = SwitchableBackend()
        let offline = OfflineMiddleware(store: store)
        network.isDown = true
        _ = try #require(
            queuedWrite(await offline.intercept(todoWrite(#""title": "a""#), next: network.send).result))
        network.isDown = false
        let report = await store.outbox.replay()
        #expect(report == OutboxReplayReport(sent: 1, kept: 0, remaining: 0, ending: .finished))
        #expect(titles(in: network.server) == ["a"])
    }

    @Test(".live() finds the store behind URLSessionBackend's own middleware")
    func theChainIsSeenThroughURLSessionBackend() throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let backend = URLSessionBackend(
            baseURL: try #require(URL(string: "http://127.0.0.1:9")), middleware: [.offline(store)])
        #expect(backend.middlewareChain.contains { $0 is OfflineMiddleware })
        #expect(backend.with(.retry()).middlewareChain.contains { $0 is OfflineMiddleware })
    }

    @Test(
        "two .offline(store) chains on one store: the one made last replays, whatever requests pass, each entry once"
    )
    func twoChainsOnOneStoreShareOneSender() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let first = SwitchableBackend()
        let second = SwitchableBackend()
        let firstChain = first.with(.offline(store))
        let secondChain = second.with(.offline(store))
        first.isDown = true
        second.isDown = true
        var written: [QueuedWrite] = []
        for title in ["a", "b", "c"] {
            written += [
                try #require(queuedWrite(await firstChain.send(todoWrite(#""title": "\#(title)""#)).result))
            ]
        }
        // The replay the queued-behind writes started goes through the chain made last: down too.
        #expect(await store.outbox.replay().ending == .interrupted(.cannotConnect))
        #expect(first.attempts.count == 1)

        // A read through the first chain succeeds: replays still go through the second.
        first.isDown = false
        _ = try await firstChain.send(BackendRequest(method: .get, path: "todos")).value
        _ = await store.outbox.replay()
        #expect(titles(in: first.server).isEmpty)
        second.isDown = false
        let failedAttempts = second.attempts.count
        _ = try await secondChain.send(BackendRequest(method: .get, path: "todos")).value
        async let one = store.outbox.replay()
        async let other = store.outbox.replay()
        let reports = await [one, other]
        #expect(reports.allSatisfy { $0.ending == .finished && $0.remaining == 0 })

        let posts = second.attempts.dropFirst(failedAttempts).filter { $0.method == .post }
        #expect(posts.map { $0.headers["Idempotency-Key"] } == written.map(\.idempotencyKey))
        #expect(titles(in: second.server) == ["a", "b", "c"])
        #expect(titles(in: first.server).isEmpty)
        #expect(try store.outbox.entries().isEmpty)
    }

    @Test("an outbox whose store was released sends nothing and says so")
    func anOutboxWithoutItsStoreCannotReplay() async throws {
        let folder = try TemporaryFolder()
        var store: OfflineStore? = try OfflineStore(at: folder.file("depot.sqlite"))
        do {
            // The chain holds the store while it lives.
            let backend = FailingBackend(error: .cannotConnect).with(.offline(try #require(store)))
            _ = try #require(queuedWrite(await backend.send(todoWrite(#""title": "a""#)).result))
            _ = try await #require(store).outbox.replay()
        }
        let outbox = try #require(store?.outbox)
        weak let released = store
        store = nil
        // The replay above may still hold the store for a moment after it answered (giving its
        // lease back): wait until the store is gone, with a bound.
        let deadline = ContinuousClock.now + .seconds(30)
        while released != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        try #require(released == nil, "the store is still held 30 s after it was released")
        let report = await outbox.replay(through: SwitchableBackend())
        #expect(report == OutboxReplayReport(sent: 0, kept: 0, remaining: 1, ending: .noBackend))
        #expect(try outbox.entries().count == 1)
    }
}

extension OutboxReplayReport.Ending {
    /// Whether the replay was interrupted by a response with `status`.
    func isInterrupted(status: Int) -> Bool {
        if case .interrupted(let error) = self { return error.statusCode == status }
        return false
    }
}

@Suite("Outbox: events end with the store")
struct OutboxLifetimeTests {
    @Test("releasing the store ends the streams of events")
    func streamsEndWithTheStore() async throws {
        let folder = try TemporaryFolder()
        var store: OfflineStore? = try OfflineStore(at: folder.file("depot.sqlite"))
        let events = try #require(store?.outbox.events)
        store = nil
        // The loop ends because the stream finishes, not because a bound ran out (`hangBound`:
        // far beyond any scheduling delay on a loaded machine, so only a stream that never
        // ends reaches it).
        let ended = await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                for await _ in events { return false }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(hangBound))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(ended == true)
    }
}
