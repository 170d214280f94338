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
    private let hub = OutboxEventHub()
    /// Who hears what the outbox changes on its own: the `.live()` middleware in front of the
    /// store's `.offline` middleware, subscribed when their chain was made.
    private let changeListeners = Listeners<ChangeFeed.Publication>()
    /// Changes made under the store's lock, published once it is released
    /// (``publishChanges()``).
    private let unpublished = Locked([ChangeFeed.Publication]())
    /// The one-sender rule across processes and stores.
    private let lease = SenderLease()

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
    private func unsent() -> OutboxReplayReport {
        let remaining = queuedCount
        return OutboxReplayReport(
            sent: 0, kept: 0, remaining: remaining, ending: remaining > 0 ? .noBackend : .finished)
    }

    // MARK: - Events

    /// Reports `event` on ``events`` (under the store's lock: in the order the store changed),
    /// and notes what it touched for ``publishChanges()``: the paths of the entry (for a create
    /// the server named, the record's local and server paths too). A write queued by a request
    /// that passed a `.live()` (`publishedBy`) is noted for the other listeners only: that one
    /// reports it as the request returns.
    private func emit(_ event: OutboxEvent, publishedBy: ObjectIdentifier? = nil) {
        hub.emit(event)
        guard !changeListeners.isEmpty else { return }
        let entry = event.entry
        var changes = [ChangeFeed.Change(entry.method, entry.resource)]
        // Under the store's lock: the ids in memory, never read from the file here.
        let rewritten = state.withLock { $0.localIDs }.rewriting(entry.resource)
        if rewritten != entry.resource { changes.append(ChangeFeed.Change(entry.method, rewritten)) }
        if case .created(_, let localID, let serverID) = event {
            let collection = entry.resource
            for id in [localID, serverID] {
                if let text = JSONServerRules.idText(id) {
                    changes.append(
                        ChangeFeed.Change(
                            .record(text, in: Array(collection.collection), under: Array(collection.parent))))
                }
            }
        }
        unpublished.withLock { $0.append(ChangeFeed.Publication(changes, publishedBy: publishedBy)) }
    }

    /// Tells the listeners what the events noted since the last call touched, in one
    /// publication (and one for each write a `.live()` reports itself): called once the store's
    /// lock is released, so a listener may use the store.
    private func publishChanges() {
        let noted = unpublished.withLock { noted in
            defer { noted = [] }
            return noted
        }
        var merged: [ChangeFeed.Change] = []
        for publication in noted {
            if publication.publishedBy == nil {
                merged += publication.changes
            } else {
                changeListeners.tell(publication)
            }
        }
        if !merged.isEmpty { changeListeners.tell(ChangeFeed.Publication(merged)) }
    }

    /// Calls `publish` with what the outbox's replays send, create and roll back, what the app
    /// retries or discards, and the writes it queues, on no lock of the store's, until the
    /// subscription ends.
    func subscribeChanges(_ publish: @escaping @Sendable (ChangeFeed.Publication) -> Void)
        -> ChangeFeed.Subscription
    {
        changeListeners.add(publish)
    }

    // MARK: - The replayer's side

    /// The replayer that sends this outbox's entries: the store's, registered when the store
    /// opens (see ``OutboxReplayer``); `nil` once the store is released.
    var replayer: OutboxReplayer? {
        state.withLock { $0.replayer }
    }

    /// Registers the replayer that sends this outbox's entries.
    func register(_ replayer: OutboxReplayer) {
        state.withLock { $0.replayer = replayer }
    }

    /// Takes the sender lease if nobody else holds it: `true` when this outbox holds it now.
    func tryTakeLease() throws(OfflineStoreError) -> Bool {
        try database.withConnection { connection throws(OfflineStoreError) in try lease.tryTake(connection) }
    }

    /// Gives the sender lease back; a lease not given back ends with its duration (or its
    /// process).
    func releaseLease() {
        try? database.withConnection { connection throws(OfflineStoreError) in try lease.release(connection) }
    }

    /// Reads the counts again when another connection changed the file (see
    /// ``syncCounts(_:)``).
    func syncCounts() throws(OfflineStoreError) {
        try database.withConnection { connection throws(OfflineStoreError) in try syncCounts(connection) }
    }

    /// What ``claimHead(renewing:whenEmpty:)`` found.
    enum Claim {
        /// The entry to send next.
        case entry(OutboxEntry)
        /// Nothing can be sent: the lease is given back and `whenEmpty` has run.
        case ended
        /// The lease is no longer this outbox's.
        case leaseLost
    }

    /// Renews the lease (unless `renewing` is `false`: the replay has just taken it), then
    /// finds the first queued entry not held behind a kept `PUT`, `PATCH` or `DELETE` of its
    /// resource; when there is none, gives the lease back, marks what is still queued as held,
    /// and runs `whenEmpty` with how many entries remain, all under the store's lock (so a
    /// write queued at that moment either is found here or is queued after `whenEmpty` ran).
    func claimHead(renewing: Bool = true, whenEmpty: (_ remaining: Int) -> Void) throws(OfflineStoreError)
        -> Claim
    {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) -> Claim in
            if renewing {
                guard try lease.renew(connection) else { return .leaseLost }
            }
            try syncCounts(connection)
            let head = try connection.query(
                """
                SELECT \(Self.columns) FROM outbox AS q
                WHERE state = 'queued' AND NOT EXISTS (\(Self.keptAhead))
                ORDER BY position LIMIT 1
                """
            ) { row throws(OfflineStoreError) in try Self.entry(from: row, path: path) }.first
            if let head { return .entry(head) }
            try lease.release(connection)
            let remaining = state.withLock { state in
                // What is still queued waits behind kept entries: no use replaying it again
                // until something changes.
                state.held = state.queuedCount > 0
                return state.queuedCount
            }
            whenEmpty(remaining)
            return .ended
        }
    }

    /// The condition, on a queued row `q`, that a kept `PUT`, `PATCH` or `DELETE` of its
    /// resource comes before it: such a row is held.
    static let keptAhead = """
        SELECT 1 FROM outbox AS k
        WHERE k.state = 'kept' AND k.resource = q.resource AND k.position < q.position AND k.method <> 'POST'
        """

    /// Removes a sent entry (durably, with its outcome) and reports it.
    ///
    /// A create that held a local id has the server's id for it (from the answer's body, or
    /// its `Location`) written in the same transaction, so the entries behind it are sent
    /// with the server's id after any crash; ``OutboxEvent/created(_:localID:serverID:)``
    /// follows the ``OutboxEvent/sent(_:_:)``.
    func recordSent(_ entry: OutboxEntry, response: BackendResponse) throws(OfflineStoreError) {
        defer { publishChanges() }
        let serverID = entry.localID == nil ? nil : LocalIDs.serverID(in: response, for: entry)
        try database.withConnection { connection throws(OfflineStoreError) in
            let removed = try connection.transaction { () throws(OfflineStoreError) -> Bool in
                try connection.execute(
                    "DELETE FROM outbox WHERE id = ? AND state = 'queued'", [.text(entry.id)])
                guard connection.changes > 0 else { return false }
                try Self.recordOutcome(
                    of: entry, response: response, policy: state.withLock { $0.policy }, in: connection)
                if let localID = entry.localID, let serverID {
                    try LocalIDs.record(
                        localID, serverID, resource: entry.resource.collectionPath, in: connection)
                }
                return true
            }
            state.withLock {
                if removed { $0.queuedCount -= 1 }
                $0.pending.remove(entry.id)
                if let localID = entry.localID, let serverID {
                    $0.localIDs.map(localID, to: serverID)
                    $0.pending = $0.pending.rewritten(by: $0.localIDs)
                }
                // Stored answers older than this write show it from now on (see `sent`).
                if let write = PendingWrite(
                    sent: entry.id, position: entry.position, method: entry.method,
                    resource: $0.localIDs.rewriting(entry.resource), response: response.body, sentAt: Date())
                {
                    $0.sent.add(write)
                    if $0.sent.count > Self.maxRecentOutcomes, let oldest = $0.sent.entryIDsInOrder.first {
                        $0.sent.remove(oldest)
                    }
                }
            }
            emit(.sent(entry, response))
            if let localID = entry.localID, let serverID {
                emit(.created(entry, localID: localID, serverID: serverID))
            }
        }
    }

    /// `request` with the local ids the server has named replaced by its ids (see
    /// ``LocalIDs``): what a replay sends, and what a read or write through the middleware
    /// asks for.
    func rewritingLocalIDs(_ request: BackendRequest) -> BackendRequest {
        overlay().localIDs.rewriting(request)
    }

    /// Keeps a refused entry (durably) with its refusal, and reports it.
    func recordKept(_ entry: OutboxEntry, error: ServiceError) throws(OfflineStoreError) {
        defer { publishChanges() }
        let refusal = OutboxRefusal(
            status: error.statusCode, message: error.message ?? error.errorDescription,
            body: (error.response?.body ?? Data()).prefix(Self.maxStoredBodyBytes), refusedAt: Date())
        try database.withConnection { connection throws(OfflineStoreError) in
            try connection.transaction { () throws(OfflineStoreError) in
                try connection.execute(
                    """
                    UPDATE outbox SET state = 'kept', refused_status = ?, refused_message = ?,
                        refused_body = ?, refused_at = ?
                    WHERE id = ? AND state = 'queued'
                    """,
                    [
                        refusal.status.map { .integer(Int64($0)) } ?? .null,
                        refusal.message.map { .text($0) } ?? .null,
                        .blob(refusal.body), .real(refusal.refusedAt.timeIntervalSince1970), .text(entry.id),
                    ])
            }
            // Discarded while it was being sent: nothing is kept, nothing to report.
            guard connection.changes > 0 else { return }
            state.withLock {
                $0.queuedCount -= 1
                $0.keptCount += 1
                // Refused: reads no longer show it (rolled back) until the app retries it.
                $0.pending.remove(entry.id)
            }
            var kept = entry
            kept.state = .kept(refusal)
            emit(.kept(kept, error))
        }
    }

    /// Reads the counts of queued and kept entries again when another connection (another
    /// process, or another store on the file) committed a change since the last look: one
    /// `PRAGMA data_version` otherwise. Called under the store's lock.
    private func syncCounts(_ connection: SQLiteConnection) throws(OfflineStoreError) {
        let version = try connection.integer("PRAGMA data_version") ?? 0
        guard state.withLock({ $0.dataVersion != version }) else { return }
        let queued = try connection.integer("SELECT count(*) FROM outbox WHERE state = 'queued'") ?? 0
        let kept = try connection.integer("SELECT count(*) FROM outbox WHERE state = 'kept'") ?? 0
        state.withLock {
            $0.queuedCount = Int(queued)
            $0.keptCount = Int(kept)
            $0.dataVersion = version
            $0.held = false
            $0.pendingIsStale = true
        }
    }

    /// The queued writes as reads see them, and the ids the server named for records created
    /// offline: from memory, read from the file again only after another connection changed
    /// it (at most once per change).
    func overlay() -> (pending: PendingWrites, localIDs: LocalIDs, sent: PendingWrites) {
        let current = state.withLock { ($0.pendingIsStale, $0.pending, $0.localIDs, $0.sent) }
        guard current.0 else { return (current.1, current.2, current.3) }
        let path = database.path
        let loaded = try? database.withConnection {
            connection throws(OfflineStoreError) -> (PendingWrites, LocalIDs, PendingWrites) in
            try syncCounts(connection)
            var localIDs = LocalIDs()
            let pairs = try connection.query("SELECT local_id, server_id FROM id_map") { row in
                (row.text(0), row.text(1))
            }
            for (local, server) in pairs {
                if let local = JSONServerRules.parse(Data(local.utf8)),
                    let server = JSONServerRules.parse(Data(server.utf8))
                {
                    localIDs.map(local, to: server)
                }
            }
            let entries = try connection.query(
                "SELECT \(Self.columns) FROM outbox WHERE state = 'queued' ORDER BY position"
            ) { row throws(OfflineStoreError) in try Self.entry(from: row, path: path) }
            let pending = PendingWrites(entries, localIDs: localIDs)
            var sent = PendingWrites()
            let outcomes = try connection.query(
                """
                SELECT entry_id, sequence, method, path, body, decided_at, addressed FROM outbox_outcomes
                WHERE outcome = 'sent' ORDER BY sequence
                """
            ) { row in
                (
                    row.text(0), Int(row.integer(1)), row.text(2),
                    Self.resource(row, 6) ?? RequestResource(path: row.text(3)), row.blob(4), row.real(5)
                )
            }
            for (id, sequence, method, resource, body, decidedAt) in outcomes {
                if let method = HTTPMethod(rawValue: method),
                    let write = PendingWrite(
                        sent: id, position: sequence, method: method, resource: localIDs.rewriting(resource),
                        response: body, sentAt: Date(timeIntervalSince1970: decidedAt))
                {
                    sent.add(write)
                }
            }
            state.withLock {
                $0.pending = pending
                $0.localIDs = localIDs
                $0.sent = sent
                $0.pendingIsStale = false
            }
            return (pending, localIDs, sent)
        }
        // A file that cannot be read: reads are answered as they come.
        return loaded ?? (current.1, current.2, current.3)
    }

    /// Whether entries a replay can send are queued, as this process last counted them (a
    /// replay that found every queued entry held behind a kept one says no): a write then
    /// waits behind them, as ``waitsBehindEntries(_:_:)`` finds unless another connection
    /// changed the file since.
    var hasSendableEntries: Bool {
        state.withLock { $0.queuedCount > 0 && !$0.held }
    }

    /// Whether `write` must be queued behind entries: any queued one a replay can send, any
    /// entry of its resource that waits (queued, or a kept `PUT`, `PATCH` or `DELETE`).
    /// Writes to other resources pass entries held behind kept ones.
    /// Called under the store's lock.
    func waitsBehindEntries(_ write: BackendRequest, _ connection: SQLiteConnection)
        throws(OfflineStoreError) -> Bool
    {
        try syncCounts(connection)
        guard state.withLock({ $0.queuedCount > 0 || $0.keptCount > 0 }) else { return false }
        let resource = write.resource.path
        return try connection.integer(
            """
            SELECT EXISTS (
                SELECT 1 FROM outbox WHERE resource = ? AND (state = 'queued' OR method <> 'POST'))
            OR EXISTS (SELECT 1 FROM outbox AS q WHERE state = 'queued' AND NOT EXISTS (\(Self.keptAhead)))
            """, [.text(resource)]) == 1
    }

    /// What ``queueIfBehindEntries(_:policy:)`` did with a write.
    enum BehindEntries {
        /// The write need not wait: send it.
        case notBehind
        /// The store could not tell (SQLite failed): better sent out of order than not at all.
        case unknown
        /// It waits behind entries, and is queued as this entry.
        case queued(OutboxEntry)
        /// It waits behind entries, but could not be queued.
        case notQueued(OfflineStoreError)
    }

    /// Looks whether `write` must wait behind entries (``waitsBehindEntries(_:_:)``) and, when
    /// it must, commits it as the last entry (``enqueue(_:policy:)``), both under one hold of
    /// the store's lock: no replay sends the entries ahead of it between the look and the
    /// queuing.
    func queueIfBehindEntries(_ write: BackendRequest, policy: OfflinePolicy) -> BehindEntries {
        defer { publishChanges() }
        let outcome = try? database.withConnection { connection -> BehindEntries in
            guard let behind = try? waitsBehindEntries(write, connection) else { return .unknown }
            guard behind else { return .notBehind }
            do throws(OfflineStoreError) {
                return .queued(try enqueue(write, policy: policy, in: connection))
            } catch {
                return .notQueued(error)
            }
        }
        return outcome ?? .unknown
    }

    /// Commits `write` as the last entry, durably, then counts and reports it.
    ///
    /// - Throws: ``OfflineStoreError/Kind/outboxFull(limit:)`` when the policy's
    ///   ``OfflinePolicy/maxQueuedWrites`` entries (queued or kept) are in the store already.
    func enqueue(_ write: BackendRequest, policy: OfflinePolicy) throws(OfflineStoreError)
        -> OutboxEntry
    {
        defer { publishChanges() }
        return try database.withConnection { connection throws(OfflineStoreError) -> OutboxEntry in
            try enqueue(write, policy: policy, in: connection)
        }
    }

    /// ``enqueue(_:policy:)`` for a caller that holds the store's lock (and publishes the
    /// changes once it is released).
    private func enqueue(_ write: BackendRequest, policy: OfflinePolicy, in connection: SQLiteConnection)
        throws(OfflineStoreError) -> OutboxEntry
    {
        var headers = policy.redaction.removingSecrets(from: write.headers)
        let limit = policy.maxQueuedWrites
        let key = headers[Self.idempotencyKeyField] ?? UUID().uuidString.lowercased()
        headers.remove(Self.idempotencyKeyField)
        let body = write.body.flatMap { $0.isEmpty ? nil : $0 }
        let id = UUID().uuidString.lowercased()
        let createdAt = Date()
        let resource = write.resource
        let path = database.path
        let entry = try connection.transaction(durable: true) {
            () throws(OfflineStoreError) -> OutboxEntry in
            let count = try connection.integer("SELECT count(*) FROM outbox") ?? 0
            guard count < limit else {
                throw OfflineStoreError(
                    .outboxFull(limit: limit), path: path, message: "\(count) writes wait to be sent")
            }
            let position =
                try connection.integer("SELECT coalesce(max(position), 0) + 1 FROM outbox") ?? 1
            let localID = try LocalIDs.newLocalID(for: write, in: connection)
            try connection.execute(
                """
                INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                    created_at, state, resource, local_id, addressed)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)
                """,
                [
                    .text(id), .integer(position), .text(write.method.rawValue), .text(write.path),
                    .blob(FieldCoding.encode(write.query)), .blob(FieldCoding.encode(headers)),
                    .blob(body ?? Data()), .text(key), .real(createdAt.timeIntervalSince1970),
                    .text(resource.path), localID.map { .text(LocalIDs.json($0)) } ?? .null,
                    Self.text(of: resource),
                ])
            return OutboxEntry(
                id: id, position: Int(position), method: write.method, path: write.path,
                resource: resource, query: write.query, headers: headers, body: body, idempotencyKey: key,
                createdAt: createdAt, state: .queued, localID: localID)
        }
        state.withLock {
            $0.queuedCount += 1
            $0.held = false
            $0.pending.add(entry, localIDs: $0.localIDs)
        }
        emit(.queued(entry), publishedBy: write.context.publishedBy)
        return entry
    }

    /// Forgets the counts after ``OfflineStore/removeAll()`` emptied the table (called under
    /// the store's lock).
    func didRemoveAll() {
        state.withLock {
            $0.queuedCount = 0
            $0.keptCount = 0
            $0.held = false
            $0.pending = PendingWrites()
            $0.localIDs = LocalIDs()
            $0.sent = PendingWrites()
        }
    }
}
