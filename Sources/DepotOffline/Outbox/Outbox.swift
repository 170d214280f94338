import Depot
import Dispatch
import Foundation

/// The writes an ``OfflineStore`` keeps until they can be sent: `store.outbox`.
///
/// The `.offline(store)` middleware sends every `POST`, `PUT`, `PATCH` and `DELETE` through
/// the outbox:
///
/// ```swift
/// let store = try OfflineStore(at: appSupport.appending(path: "depot.sqlite"))
/// let backend = URLSessionBackend(baseURL: api).with(.offline(store), auth, .retry())
///
/// do {
///     try await todos.create(Todo(title: "Milk")).value
/// } catch .queued(let write) {
///     showPending(write.id)            // stored; sent when the network is back
/// }
///
/// for await event in store.outbox.events { … }   // .queued, .sent, .kept, .discarded
/// ```
///
/// **Every write carries an `Idempotency-Key`** (draft-ietf-httpapi-idempotency-key-header)
/// from its first attempt: a new UUID unless the request already has one. The key is chosen
/// when the write's future is made, so starting that same future again sends the same key
/// (a server that honours keys takes it for the same write); make a new future for a new
/// write. The same key goes with every replay, so a server that honours the header applies
/// the write once even when an earlier attempt reached it and only the answer was lost. Since
/// the key makes sending it again safe, the request is also marked
/// ``Depot/BackendRequest/isRetryable`` for a retry middleware behind this one.
///
/// **A write that fails before any answer arrives** (`.cannotConnect`, `.noConnection`,
/// `.timedOut` or `.transport`; not `.cancelled`) is committed to the store in one durable
/// transaction (synced to disk: it survives the app being killed and a power loss), and only
/// then does its caller's future fail with ``Depot/ServiceError/queued(_:)``, whose
/// ``Depot/QueuedWrite/id`` is the entry's ``OutboxEntry/id``. It is never reported as a
/// success. If that commit fails (a full disk, or ``OfflinePolicy/maxQueuedWrites`` entries
/// already wait), the caller gets the original transport error: nothing was queued. A write
/// that got any HTTP answer is returned as it is: a 4xx or 5xx is the server's answer, not
/// queued.
///
/// **What is stored**: method, path, query, header fields, body, the key and when it was
/// queued. Never a secret: the header fields ``OfflinePolicy/redaction`` names
/// (`Authorization`, `Cookie`, `X-Api-Key`, … by default) are dropped before writing, and a
/// write whose query carries a secret (`access_token=…`) is not queued at all. List
/// `.offline(store)` **first**, in front of authentication, so that requests carry no
/// credential when they reach it anyway, and each replay gets a fresh one from the
/// middleware behind it.
///
/// **Order.** Writes are replayed in the order they were queued, and a new write never
/// overtakes an older one to the same resource (path):
/// - while any entry is queued, a new write is queued behind it (its caller gets `.queued`
///   too) and a replay starts, which sends the earlier entries first and then this one; so a
///   `PATCH` never reaches the server before the queued `POST` that created its record;
/// - while a `PUT`, `PATCH` or `DELETE` of a path is kept after a refusal (below), a new
///   write to that path is queued behind it and held there, unsent, until the app resolves
///   the kept one with ``retry(_:)`` (then the kept one goes first) or ``discard(_:)``;
///   writes to other paths go on, and so do creates (a kept `POST todos` holds back no other
///   `POST todos`).
///
/// (Writes started at the same time, from different tasks, have no order between them.)
///
/// **Replay** (``replay()``): the queued entries are sent one at a time, in order, through
/// the rest of the chain (what follows the middleware: auth, retry, the backend), each with
/// its own stored key. Outcomes, reported on ``events``:
/// - a 2xx: the entry is removed from the store, ``OutboxEvent/sent(_:_:)``;
/// - anything the server did not decide: no answer, a request that could not be made (a
///   token provider that failed, say), a `401`, `407`, `408`, `421`, `425`, `429`, any `5xx`, a `1xx` or
///   `3xx`: **the replay stops and the entry stays queued**, with those behind it, in order,
///   for a later replay (so an entry the server keeps answering with a 5xx holds back those
///   behind it: ``entries()`` shows it, and ``discard(_:)`` lets the rest go);
/// - a refusal by the server (`400`, `403`, `404`, `409`, `410`, `412`, `422` and every other
///   4xx): the entry is **kept** (state ``OutboxEntry/State/kept(_:)``, with the status, the
///   server's message and the first 64 KiB of its body), ``OutboxEvent/kept(_:_:)``, and **the
///   replay goes on with the entries behind it**, but for writes to the path of a kept
///   `PUT`, `PATCH` or `DELETE`, which wait for the app's decision: one refused to-do must
///   not hold back the others, and a stale edit must not land after a newer one.
///
/// **Delivery: at least once; exactly once where the server honours `Idempotency-Key`.**
/// An entry leaves the store only when the server accepted it (2xx), when the app discards
/// it, or with ``OfflineStore/removeAll()``: nothing queued is ever dropped silently. A
/// replay removes an entry *after* its 2xx arrives, so a process killed between the two
/// sends that entry again later, with the same key: a server that honours the key answers
/// it without applying it twice; one that does not applies it twice.
///
/// **One sender per store**, across processes too: a replay holds the store's sender lease
/// (a row in the file, renewed before each entry) while it runs, so an app and its extension
/// sharing the file never send an entry twice. A replay started meanwhile waits for it, then
/// sends what is still queued. The lease ends when its holder gives it back, at once when its
/// process is gone (a crash, `kill -9`), or 5 minutes after its last renewal (a holder that
/// hangs or is suspended). It is no file lock, so a suspended app holds none on a shared file.
///
/// A replay starts on its own after any later request through the middleware succeeds (a 2xx
/// to a read or a write), in the background, when entries are queued; checking costs one
/// lock, so the online path stays fast. Replays go through the chain behind the `.offline`
/// middleware, fixed when that chain is made (the one made last, when a store is put in
/// several; or the backend given to ``replay(through:)``): give each API a store of its own. Calling ``replay()`` while one
/// runs in this process waits for that one and returns its report.
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
    ///
    /// - Returns: `false` when no kept entry has that id.
    @discardableResult
    public func retry(_ id: String) throws(OfflineStoreError) -> Bool {
        defer { publishChanges() }
        let path = database.path
        let requeued = try database.withConnection { connection throws(OfflineStoreError) -> Bool in
            try syncCounts(connection)
            let entry = try connection.transaction { () throws(OfflineStoreError) -> OutboxEntry? in
                try connection.execute(
                    """
                    UPDATE outbox SET state = 'queued', refused_status = NULL, refused_message = NULL,
                        refused_body = NULL, refused_at = NULL
                    WHERE id = ? AND state = 'kept'
                    """, [.text(id)])
                guard connection.changes > 0 else { return nil }
                return try Self.entry(id: id, in: connection, path: path)
            }
            guard let entry else { return false }
            state.withLock {
                $0.queuedCount += 1
                $0.keptCount -= 1
                $0.held = false
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
                    of: entry, response: nil, policy: state.withLock { $0.policy }, in: connection)
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
        guard let replayer else { return unsent() }
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
        guard let replayer else { return unsent() }
        return await replayer.replay(using: { backend.send($0) })
    }

    /// The report of a replay that cannot start: the store that sends this outbox's entries
    /// was released.
    func unsent() -> OutboxReplayReport {
        let remaining = queuedCount
        return OutboxReplayReport(
            sent: 0, kept: 0, remaining: remaining, ending: remaining > 0 ? .noBackend : .finished)
    }
}
