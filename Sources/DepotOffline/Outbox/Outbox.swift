import Depot
import Dispatch
import Foundation
import JSONServerEngine

/// The writes an ``OfflineStore`` keeps until they can be sent: `store.outbox`.
///
/// The `.offline(store)` middleware sends every `POST`, `PUT`, `PATCH` and `DELETE` through
/// the outbox. One that fails before any answer arrives is committed to the store durably,
/// and only then does its caller's future fail with ``Depot/ServiceError/queued(_:)``;
/// ``replay()`` sends the queued writes in order through the rest of the chain, each with the
/// `Idempotency-Key` of its first attempt, and ``events`` tells what became of them:
///
/// ```swift
/// do {
///     try await todos.create(Todo(title: "Milk")).value
/// } catch .queued(let write) {
///     showPending(write.id)            // stored; sent when the network is back
/// }
///
/// for await event in store.outbox.events { … }   // .queued, .sent, .kept, .discarded, .created, .conflict
/// ```
///
/// Delivery is at least once (exactly once where the server honours the key), in order per
/// resource, by one sender per store across processes; nothing queued is dropped silently.
/// <doc:WorkingOffline> tells the whole story: what is stored, the order, what each answer
/// does to an entry, crashes and shared files.
public final class Outbox: Sendable {
    /// The header field of draft-ietf-httpapi-idempotency-key-header.
    static let idempotencyKeyField = "Idempotency-Key"
    /// The most bytes of a refusal's body stored with a kept entry, and of a sent entry's
    /// response stored among the ``recentOutcomes()``.
    public static let maxStoredBodyBytes = 64 << 10
    /// How many outcomes ``recentOutcomes()`` keeps: the latest.
    public static let maxRecentOutcomes = 100
    /// How many events each stream of ``events`` holds for a subscriber that does not read
    /// them: past that the oldest are dropped.
    public static let eventBufferLimit = 1_000

    let database: SQLiteDatabase
    /// The counts, the policy and the replayer, under their own lock.
    let state: OutboxState
    let hub = OutboxEventHub()
    /// Who hears what the outbox changes on its own: the `.live()` middleware in front of the
    /// store's `.offline` middleware, subscribed when their chain was made.
    let changeListeners = Listeners<ChangeFeed.Publication>()
    /// Changes made under the store's lock, published once it is released
    /// (``publishChanges()``).
    let unpublished = Locked([ChangeFeed.Publication]())
    /// The one-sender rule across processes and stores.
    let lease = SenderLease()

    /// The outbox of the store whose connection is `database`.
    init(database: SQLiteDatabase) throws(OfflineStoreError) {
        self.database = database
        state = OutboxState()
        try database.withConnection { connection throws(OfflineStoreError) in try syncCounts(connection) }
    }

    deinit {
        // The store is released: end the streams of `events`, so their loops finish.
        hub.finishAll()
    }

    // MARK: - Listing and resolving

    /// Every entry, queued or kept, in the order a replay sends them (by
    /// ``OutboxEntry/position``).
    ///
    /// - Throws: ``OfflineStoreError`` when SQLite fails, or ``OfflineStoreError/Kind/corrupt``
    ///   when a stored entry cannot be read back.
    public func entries() throws(OfflineStoreError) -> [OutboxEntry] {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) in
            try connection.query("SELECT \(Self.columns) FROM outbox ORDER BY position") {
                row throws(OfflineStoreError) in try Self.entry(from: row, path: path)
            }
        }
    }

    /// What became of the latest entries that left the outbox (up to ``maxRecentOutcomes``,
    /// oldest first): sent, with the server's answer (the `201`'s `Location` and body carry
    /// the created record's id), or discarded.
    ///
    /// Kept in the store with the removal itself, so an app that subscribes to ``events``
    /// late, or starts again after a replay in the background, still learns what the server
    /// answered.
    public func recentOutcomes() throws(OfflineStoreError) -> [OutboxOutcome] {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) in
            try connection.query("SELECT \(Self.outcomeColumns) FROM outbox_outcomes ORDER BY sequence") {
                row throws(OfflineStoreError) in try Self.outcome(from: row, path: path)
            }
        }
    }

    /// How many entries wait for a replay (kept entries not counted), as this process last
    /// read them from the file.
    public var queuedCount: Int {
        state.withLock { $0.queuedCount }
    }

    /// A stream of what happens to entries from now on: each access returns a new stream, fed
    /// with every event after it was created, in the order the store changed. Events wait in
    /// the stream until read, up to ``eventBufferLimit`` of them: a subscriber that stops
    /// reading loses the oldest first (``recentOutcomes()`` and ``entries()`` still tell
    /// where every entry stands). Stop iterating (or cancel the task) to unsubscribe; the
    /// stream ends when the store is released.
    public var events: AsyncStream<OutboxEvent> {
        hub.subscribe(bufferingNewest: Self.eventBufferLimit)
    }

    /// Puts a kept entry back in the queue at its place (before every entry queued after
    /// it), reports ``OutboxEvent/queued(_:)``, and starts a replay when a backend is known.
    ///
    /// Use it once the app has resolved the refusal (refreshed what the `412` said was stale,
    /// say). The entry keeps its `Idempotency-Key`: a server that refused it applied nothing.
    /// An entry kept with a conflict is made on the server's record from then on (its base
    /// becomes the conflict's ``OutboxConflict/theirs``, and a `PUT` sends their record with
    /// the fields the user changed, a `PATCH` those fields, under a new `Idempotency-Key`):
    /// the user's changes go over theirs, the other device's other changes stand, and only a
    /// change another device makes after that is a conflict again.
    ///
    /// - Returns: `false` when no kept entry has that id.
    @discardableResult
    public func retry(_ id: String) throws(OfflineStoreError) -> Bool {
        try requeue(id, resolvedWith: nil)
    }

    /// Settles an entry kept with a conflict (or a refusal) with `record`: the entry becomes a
    /// `PUT` of `record` to its path (a create stays a `POST`, of `record`), made on the conflict's ``OutboxConflict/theirs``, with a
    /// new `Idempotency-Key`, queued again at its place (``OutboxEvent/queued(_:)``); `nil`
    /// drops it as ``discard(_:)`` does. Reads show `record` at once.
    ///
    /// ```swift
    /// case .conflict(let entry, let conflict):
    ///     try store.outbox.resolve(entry.id, with: userPicked(conflict.mine, conflict.theirs))
    /// ```
    ///
    /// - Returns: `false` when no kept entry has that id.
    @discardableResult
    public func resolve(_ id: String, with record: JSONValue?) throws(OfflineStoreError) -> Bool {
        guard let record else {
            let kept = try entries().contains { $0.id == id && !$0.isQueued }
            return kept ? try discard(id) : false
        }
        return try requeue(id, resolvedWith: record)
    }

    /// The body of a `PUT` or `PATCH` kept with a conflict, made on the conflict's
    /// ``OutboxConflict/theirs``: the members the user changed (from the base to mine) over
    /// their record for a `PUT`, those members alone for a `PATCH`; `nil` for anything else
    /// (a `DELETE` stays one).
    static func rebased(_ entry: OutboxEntry) -> Data? {
        guard entry.method == .put || entry.method == .patch, let conflict = entry.conflict,
            let base = conflict.base?.objectValue, let mine = conflict.mine?.objectValue,
            let theirs = conflict.theirs?.objectValue
        else { return nil }
        let changes = ThreeWayMerge.changes(from: base, to: mine)
        guard entry.method == .put else { return JSONServerRules.encode(changes.compactMapValues { $0 }) }
        var record = theirs
        for (key, value) in changes { record[key] = value }
        return JSONServerRules.encode(record)
    }

    /// Puts the kept entry `id` back in the queue (see ``retry(_:)``), as a `PUT` of `record`
    /// when one is given (see ``resolve(_:with:)``).
    private func requeue(_ id: String, resolvedWith record: JSONValue?) throws(OfflineStoreError) -> Bool {
        defer { publishChanges() }
        let path = database.path
        let requeued = try database.withConnection { connection throws(OfflineStoreError) -> Bool in
            try syncCounts(connection)
            let entry = try connection.transaction { () throws(OfflineStoreError) -> OutboxEntry? in
                guard let kept = try Self.entry(id: id, in: connection, path: path), !kept.isQueued else {
                    return nil
                }
                // After a conflict the write is made on the server's record as it was read.
                var base = kept.writeBase
                if let conflict = kept.conflict {
                    base = conflict.theirs?.objectValue.map {
                        WriteBase(record: $0, entityTag: nil, lastModified: nil)
                    }
                }
                var method = kept.method
                var body = kept.body ?? Data()
                var key = kept.idempotencyKey
                if let record {
                    // A create stays one, with the app's record; an edit becomes a `PUT` of it.
                    if method != .post { method = .put }
                    body = JSONServerRules.encode(value: record)
                    key = UUID.randomText()
                } else if let rebased = Self.rebased(kept) {
                    // Retried after a conflict: the user's changes over their record.
                    body = rebased
                    key = UUID.randomText()
                }
                try connection.execute(
                    """
                    UPDATE outbox SET state = 'queued', refused_status = NULL, refused_message = NULL,
                        refused_body = NULL, refused_at = NULL, conflict = NULL, method = ?, body = ?,
                        idempotency_key = ?, base = ?, base_etag = ?, base_last_modified = ?
                    WHERE id = ? AND state = 'kept'
                    """,
                    [.text(method.rawValue), .blob(body), .text(key)] + Self.values(of: base) + [.text(id)])
                return try Self.entry(id: id, in: connection, path: path)
            }
            guard let entry else { return false }
            state.withLock {
                $0.queuedCount += 1
                $0.keptCount -= 1
                $0.held = false
                // Kept with a conflict, it was still shown: shown as it now is.
                $0.pending.remove(entry.id)
                $0.pending.add(entry, localIDs: $0.localIDs)
            }
            emit(.queued(entry))
            return true
        }
        if requeued { replayer?.replayInBackground() }
        return requeued
    }

    /// Removes an entry, queued or kept, so that it is never sent, and reports
    /// ``OutboxEvent/discarded(_:)``.
    ///
    /// For a refusal the app will not resolve, or a pending change the user cancelled. Writes
    /// to the same path held behind a kept entry go on once it is discarded. An entry a
    /// replay is sending at that moment may still reach the server (its
    /// ``OutboxEvent/sent(_:_:)`` then follows).
    ///
    /// - Returns: `false` when no entry has that id.
    @discardableResult
    public func discard(_ id: String) throws(OfflineStoreError) -> Bool {
        defer { publishChanges() }
        let path = database.path
        let removed = try database.withConnection { connection throws(OfflineStoreError) -> OutboxEntry? in
            try syncCounts(connection)
            let removed = try connection.transaction { () throws(OfflineStoreError) -> OutboxEntry? in
                guard let entry = try Self.entry(id: id, in: connection, path: path) else { return nil }
                try connection.execute("DELETE FROM outbox WHERE id = ?", [.text(id)])
                try Self.recordOutcome(
                    of: entry, response: nil, decidedAt: Date(), policy: state.withLock { $0.policy },
                    in: connection)
                return entry
            }
            guard let removed else { return nil }
            state.withLock {
                if removed.isQueued { $0.queuedCount -= 1 } else { $0.keptCount -= 1 }
                $0.held = false
                $0.pending.remove(removed.id)
            }
            emit(.discarded(removed))
            return removed
        }
        guard let removed else { return false }
        // Writes held behind a kept entry may go now.
        if !removed.isQueued { replayer?.replayInBackground() }
        return true
    }

    // MARK: - Replay

    /// Sends the queued entries, in order, through the chain behind the store's `.offline`
    /// middleware (the chain made last), and returns what happened.
    ///
    /// See ``Outbox`` for the outcomes; each entry's arrives on ``events`` as it happens. Only
    /// one replay runs at a time, across processes too: while one runs in this process
    /// (started by another call or automatically), this waits for it and returns its report;
    /// while another process replays the file, this waits for it, then sends what is still
    /// queued. Without queued entries it returns at once
    /// (``OutboxReplayReport/Ending/finished``); when no chain was made with the store's
    /// `.offline` middleware since the store was opened, with
    /// ``OutboxReplayReport/Ending/noBackend``: use ``replay(through:)`` then. Cancelling the awaiting task does not stop the replay.
    @discardableResult
    public func replay() async -> OutboxReplayReport {
        guard let replayer = storesReplayer else { return unsent() }
        return await replayer.replay(using: nil)
    }

    /// Sends the queued entries, in order, through `backend`: for an app that starts with
    /// queued writes before it made a chain with the store's `.offline` middleware.
    ///
    /// Pass the backend **behind** the middleware, with its authentication
    /// (`URLSessionBackend(baseURL: api).with(auth)`); the whole chain, `.offline` included,
    /// works too (the middleware lets a replay's requests through). When no such chain was made,
    /// `backend` also serves later automatic replays until one is. While a replay runs,
    /// this waits for it (whatever backend it uses) and returns its report.
    @discardableResult
    public func replay(through backend: any Backend) async -> OutboxReplayReport {
        guard let replayer = storesReplayer else { return unsent() }
        return await replayer.replay(using: { backend.send($0) })
    }

    /// The replayer of this outbox's store while the store lives: `nil` once the store is
    /// released, even while a replay it started is still finishing (and holds the replayer).
    private var storesReplayer: OutboxReplayer? {
        guard let replayer, replayer.store != nil else { return nil }
        return replayer
    }

    /// The report of a replay that cannot start: the store that sends this outbox's entries
    /// was released.
    func unsent() -> OutboxReplayReport {
        let remaining = queuedCount
        return OutboxReplayReport(
            sent: 0, kept: 0, remaining: remaining, ending: remaining > 0 ? .noBackend : .finished)
    }
}
