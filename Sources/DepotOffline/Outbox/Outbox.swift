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
/// lock, so the online path stays fast. Replays go through the rest of the chain of the
/// `.offline` middleware that handled the last request in this process (or the backend given
/// to ``replay(through:)``): give each API a store of its own. Calling ``replay()`` while one
/// runs in this process waits for that one and returns its report.
public final class Outbox: Sendable {
    /// The rest of a middleware chain: what a replay sends entries through.
    typealias Send = @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>

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

    /// The outbox a replay is sending for, so that a request a replay sends through a backend
    /// that includes the `.offline` middleware again passes through instead of being queued.
    @TaskLocal static var replaying: ObjectIdentifier?

    let database: SQLiteDatabase
    private let state: OutboxState
    private let hub = OutboxEventHub()
    /// The one-sender rule across processes and stores.
    private let lease = SenderLease()
    /// Where failed writes are committed, off the thread that delivered the failure.
    private let queue = DispatchQueue(label: "depot.offline.outbox")

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
            }
            hub.emit(.queued(entry))
            return true
        }
        if requeued { replayInBackground() }
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
            }
            hub.emit(.discarded(removed))
            return removed
        }
        guard let removed else { return false }
        // Writes held behind a kept entry may go now.
        if !removed.isQueued { replayInBackground() }
        return true
    }

    // MARK: - Replay

    /// Sends the queued entries, in order, through the rest of the chain of the `.offline`
    /// middleware that last handled a request in this process, and returns what happened.
    ///
    /// See ``Outbox`` for the outcomes; each entry's arrives on ``events`` as it happens. Only
    /// one replay runs at a time, across processes too: while one runs in this process
    /// (started by another call or automatically), this waits for it and returns its report;
    /// while another process replays the file, this waits for it, then sends what is still
    /// queued. Without queued entries it returns at once
    /// (``OutboxReplayReport/Ending/finished``); when no request went through the middleware
    /// since the store was opened, with ``OutboxReplayReport/Ending/noBackend``: use
    /// ``replay(through:)`` then. Cancelling the awaiting task does not stop the replay.
    @discardableResult
    public func replay() async -> OutboxReplayReport {
        await replay(using: nil)
    }

    /// Sends the queued entries, in order, through `backend`: for an app that starts with
    /// queued writes before any request went through the `.offline` middleware.
    ///
    /// Pass the backend **behind** the middleware, with its authentication
    /// (`URLSessionBackend(baseURL: api).with(auth)`); the whole chain, `.offline` included,
    /// works too (the middleware lets a replay's requests through). `backend` also serves later
    /// automatic replays until a request goes through the middleware. While a replay runs,
    /// this waits for it (whatever backend it uses) and returns its report.
    @discardableResult
    public func replay(through backend: any Backend) async -> OutboxReplayReport {
        await replay(using: { backend.send($0) })
    }

    private enum ReplayStart {
        case run(Send)
        case joined
        case done(OutboxReplayReport)
    }

    private func replay(using given: Send?) async -> OutboxReplayReport {
        // Entries another process queued count too; read on the outbox's queue, not the
        // caller's thread (the look may wait for another write's sync to disk).
        let failure = await withCheckedContinuation {
            (continuation: CheckedContinuation<OfflineStoreError?, Never>) in
            queue.async { [self] in
                do throws(OfflineStoreError) {
                    try database.withConnection { connection throws(OfflineStoreError) in
                        try syncCounts(connection)
                    }
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }
        }
        return await withCheckedContinuation {
            (continuation: CheckedContinuation<OutboxReplayReport, Never>) in
            let start = state.withLock { state -> ReplayStart in
                if state.running {
                    state.waiters.append(continuation)
                    return .joined
                }
                if state.next == nil, let given { state.next = given }
                if let failure {
                    return .done(
                        OutboxReplayReport(
                            sent: 0, kept: 0, remaining: state.queuedCount, ending: .storeFailed(failure)))
                }
                guard state.queuedCount > 0 else {
                    return .done(OutboxReplayReport(sent: 0, kept: 0, remaining: 0, ending: .finished))
                }
                guard let send = given ?? state.next else {
                    return .done(
                        OutboxReplayReport(
                            sent: 0, kept: 0, remaining: state.queuedCount, ending: .noBackend))
                }
                state.running = true
                state.waiters.append(continuation)
                return .run(send)
            }
            switch start {
            case .joined: break
            case .done(let report): continuation.resume(returning: report)
            case .run(let send): Task { await self.runReplay(through: send) }
            }
        }
    }

    /// Starts a replay in the background when entries are queued (and not all held behind
    /// kept ones), none runs, and a backend is known.
    func replayInBackground() {
        let send = state.withLock { state -> Send? in
            guard !state.running, !state.held, state.queuedCount > 0, let next = state.next else {
                return nil
            }
            state.running = true
            return next
        }
        guard let send else { return }
        Task { await self.runReplay(through: send) }
    }

    /// The replay loop: takes the sender lease, then sends one entry at a time until none can
    /// be sent or one stops it. The caller has set `running`; this clears it, gives the lease
    /// back and answers the waiters.
    private func runReplay(through send: @escaping Send) async {
        var sent = 0
        var kept = 0
        var ending: OutboxReplayReport.Ending
        do {
            try await takeLease()
            ending = .finished
        } catch {
            ending = .storeFailed(error)
        }
        replaying: while case .finished = ending {
            let claim: Claim
            do {
                claim = try claimHead()
            } catch {
                ending = .storeFailed(error)
                break
            }
            let entry: OutboxEntry
            switch claim {
            case .entry(let head): entry = head
            // Nothing can be sent, and `claimHead` already ended the replay.
            case .ended: return
            // Held past its duration, the lease went to another sender, which goes on.
            case .leaseLost:
                ending = .interrupted(.timedOut)
                break replaying
            }
            let result = await Self.$replaying.withValue(ObjectIdentifier(self)) {
                await send(entry.request).result
            }
            do {
                switch result {
                case .success(let response):
                    try recordSent(entry, response: response)
                    sent += 1
                case .failure(let error) where Self.isRefusal(error):
                    try recordKept(entry, error: error)
                    kept += 1
                case .failure(let error):
                    ending = .interrupted(error)
                    break replaying
                }
            } catch {
                ending = .storeFailed(error)
                break
            }
            // Sent and kept so far are reported to whoever waits when the loop ends.
            state.withLock { $0.progress = (sent, kept) }
        }
        // A lease not given back ends with its duration (or its process).
        try? database.withConnection { connection throws(OfflineStoreError) in try lease.release(connection) }
        let waiters = state.withLock { state in
            state.running = false
            state.progress = (0, 0)
            defer { state.waiters = [] }
            return state.waiters
        }
        let report = OutboxReplayReport(sent: sent, kept: kept, remaining: queuedCount, ending: ending)
        for waiter in waiters { waiter.resume(returning: report) }
    }

    /// Takes the sender lease, waiting while another sender (another process, or another
    /// store on the file) holds it: checked again after 5 ms, then after twice as long each
    /// time, up to a quarter of a second between checks.
    private func takeLease() async throws(OfflineStoreError) {
        var pause: UInt64 = 5_000_000
        while try !database.withConnection({ connection throws(OfflineStoreError) in
            try lease.tryTake(connection)
        }) {
            try? await Task.sleep(nanoseconds: pause)
            pause = min(pause * 2, 250_000_000)
        }
    }

    /// What ``claimHead()`` found.
    private enum Claim {
        /// The entry to send next.
        case entry(OutboxEntry)
        /// Nothing can be sent: the replay has ended (the lease given back, the waiters told).
        case ended
        /// The lease is no longer this outbox's.
        case leaseLost
    }

    /// Renews the lease, then finds the first queued entry not held behind a kept `PUT`,
    /// `PATCH` or `DELETE` of its resource; when there is none, ends the replay (under the
    /// store's lock, so a write queued at that moment either is found here or finds no replay
    /// running and starts one).
    private func claimHead() throws(OfflineStoreError) -> Claim {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) -> Claim in
            guard try lease.renew(connection) else { return .leaseLost }
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
            let (waiters, report) = state.withLock { state in
                // What is still queued waits behind kept entries: no use replaying it again
                // until something changes.
                state.held = state.queuedCount > 0
                state.running = false
                let report = OutboxReplayReport(
                    sent: state.progress.sent, kept: state.progress.kept, remaining: state.queuedCount,
                    ending: .finished)
                state.progress = (0, 0)
                defer { state.waiters = [] }
                return (state.waiters, report)
            }
            for waiter in waiters { waiter.resume(returning: report) }
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
    private func recordSent(_ entry: OutboxEntry, response: BackendResponse) throws(OfflineStoreError) {
        try database.withConnection { connection throws(OfflineStoreError) in
            let removed = try connection.transaction { () throws(OfflineStoreError) -> Bool in
                try connection.execute(
                    "DELETE FROM outbox WHERE id = ? AND state = 'queued'", [.text(entry.id)])
                guard connection.changes > 0 else { return false }
                try Self.recordOutcome(
                    of: entry, response: response, policy: state.withLock { $0.policy }, in: connection)
                return true
            }
            if removed { state.withLock { $0.queuedCount -= 1 } }
            hub.emit(.sent(entry, response))
        }
    }

    /// Keeps a refused entry (durably) with its refusal, and reports it.
    private func recordKept(_ entry: OutboxEntry, error: ServiceError) throws(OfflineStoreError) {
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
            }
            var kept = entry
            kept.state = .kept(refusal)
            hub.emit(.kept(kept, error))
        }
    }

    /// Whether `error` is the server's refusal of a write (a 4xx it decided: 400, 403, 404,
    /// 409, 410, 412, 422, …), which keeps the entry for the app; anything else (no answer,
    /// a request that could not be made, 401 and 407 (credentials), 408, 421 (another
    /// connection), 425, 429, 5xx, 1xx, 3xx) stops the replay with the entry still queued.
    static func isRefusal(_ error: ServiceError) -> Bool {
        guard let status = error.statusCode, (400..<500).contains(status) else { return false }
        return !undecidedClientStatuses.contains(status)
    }

    /// The 4xx statuses that are no decision about the write itself.
    static let undecidedClientStatuses: Set<Int> = [401, 407, 408, 421, 425, 429]

    /// Whether `error` means the request got no answer at all: such a write is queued.
    static func failedBeforeAnswer(_ error: ServiceError) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut, .transport: return true
        default: return false
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
        }
    }

    // MARK: - The middleware's side

    /// The rest of the chain as the middleware hands it on: remembered for replays, and, while
    /// entries are queued, wrapped so that a success starts a replay in the background.
    /// Without queued entries it is `next` itself (nothing added to the online path but one
    /// lock).
    func relay(_ next: @escaping Send, policy: OfflinePolicy) -> Send {
        let queued = state.withLock { state -> Bool in
            state.next = next
            state.policy = policy
            return state.queuedCount > 0 && !state.held
        }
        guard queued else { return next }
        return { [self] request in
            let future = next(request)
            return Future { promise in
                future.start { result in
                    promise(result)
                    if case .success = result { self.replayInBackground() }
                }
            }
        }
    }

    /// Sends `request` (a write) through `next` with an `Idempotency-Key`, queuing it when it
    /// fails before any answer or when it must wait behind entries (see ``Outbox``), with the
    /// header fields the policy's redaction names dropped from what is stored, up to the
    /// policy's ``OfflinePolicy/maxQueuedWrites``.
    func send(
        _ request: BackendRequest, through next: @escaping Send, policy: OfflinePolicy
    ) -> Future<BackendResponse, ServiceError> {
        var request = request
        if !request.headers.contains(Self.idempotencyKeyField) {
            request.headers[Self.idempotencyKeyField] = UUID().uuidString.lowercased()
        }
        request.isRetryable = true
        // A replay's own request, sent through a chain that includes the middleware again.
        if Self.replaying == ObjectIdentifier(self) { return next(request) }
        let write = request
        return Future { [self] promise in
            // The usual case, at once on the caller's thread: the file is free and nothing waits.
            if (try? database.withConnectionIfFree({ connection throws(OfflineStoreError) in
                try waitsBehindEntries(write, connection)
            })) == false {
                return attempt(write, through: next, policy: policy, promise: promise)
            }
            let token = CancellationToken()
            // Otherwise on the outbox's queue: the look at the file may wait for another write's
            // sync to disk, which must not hold the caller's thread (a task's, say).
            queue.async { [self] in
                guard !token.isCancelled else { return promise(.failure(.cancelled)) }
                // When the store cannot tell, better sent out of order than not at all.
                let behind = try? database.withConnection { connection throws(OfflineStoreError) in
                    try waitsBehindEntries(write, connection)
                }
                guard behind == true else {
                    let attempt = attempt(
                        write, through: next, policy: policy, promise: promise)
                    token.onCancel { attempt.cancel() }
                    return
                }
                // Behind entries: queue it too, and let a replay send them all in order.
                do {
                    let entry = try enqueue(write, policy: policy)
                    // Started before the caller hears of it: a replay it asks for joins this one.
                    replayInBackground()
                    promise(.failure(.queued(entry.queuedWrite)))
                } catch {
                    // Sent now it would overtake the entries before it; the caller is told.
                    promise(.failure(.invalidRequest("The write was neither sent nor queued: \(error)")))
                }
            }
            return token
        }
    }

    /// Whether `write` must be queued behind entries: any queued one a replay can send, any
    /// entry of its resource that waits (queued, or a kept `PUT`, `PATCH` or `DELETE`).
    /// Writes to other resources pass entries held behind kept ones.
    /// Called under the store's lock.
    private func waitsBehindEntries(_ write: BackendRequest, _ connection: SQLiteConnection)
        throws(OfflineStoreError) -> Bool
    {
        try syncCounts(connection)
        guard state.withLock({ $0.queuedCount > 0 || $0.keptCount > 0 }) else { return false }
        let resource = StoredResponseKey.resource(of: write.path)
        return try connection.integer(
            """
            SELECT EXISTS (
                SELECT 1 FROM outbox WHERE resource = ? AND (state = 'queued' OR method <> 'POST'))
            OR EXISTS (SELECT 1 FROM outbox AS q WHERE state = 'queued' AND NOT EXISTS (\(Self.keptAhead)))
            """, [.text(resource)]) == 1
    }

    /// Sends `write` once; queues it when it fails before any answer (and the outbox has room).
    private func attempt(
        _ write: BackendRequest, through next: Send, policy: OfflinePolicy,
        promise: Future<BackendResponse, ServiceError>.Promise
    ) -> any Cancellable {
        next(write).start { [self] result in
            guard case .failure(let failure) = result, Self.failedBeforeAnswer(failure) else {
                promise(result)
                return
            }
            queue.async { [self] in
                do {
                    promise(
                        .failure(.queued(try enqueue(write, policy: policy).queuedWrite)))
                } catch {
                    // Nothing was queued: the caller gets the transport error itself.
                    promise(.failure(failure))
                }
            }
        }
    }

    /// Commits `write` as the last entry, durably, then counts and reports it.
    ///
    /// - Throws: ``OfflineStoreError/Kind/outboxFull(limit:)`` when the policy's
    ///   ``OfflinePolicy/maxQueuedWrites`` entries (queued or kept) are in the store already.
    func enqueue(_ write: BackendRequest, policy: OfflinePolicy) throws(OfflineStoreError)
        -> OutboxEntry
    {
        var headers = policy.redaction.removingSecrets(from: write.headers)
        let limit = policy.maxQueuedWrites
        let key = headers[Self.idempotencyKeyField] ?? UUID().uuidString.lowercased()
        headers.remove(Self.idempotencyKeyField)
        let body = write.body.flatMap { $0.isEmpty ? nil : $0 }
        let id = UUID().uuidString.lowercased()
        let createdAt = Date()
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) -> OutboxEntry in
            let entry = try connection.transaction(durable: true) {
                () throws(OfflineStoreError) -> OutboxEntry in
                let count = try connection.integer("SELECT count(*) FROM outbox") ?? 0
                guard count < limit else {
                    throw OfflineStoreError(
                        .outboxFull(limit: limit), path: path, message: "\(count) writes wait to be sent")
                }
                let position =
                    try connection.integer("SELECT coalesce(max(position), 0) + 1 FROM outbox") ?? 1
                try connection.execute(
                    """
                    INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                        created_at, state, resource)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)
                    """,
                    [
                        .text(id), .integer(position), .text(write.method.rawValue), .text(write.path),
                        .blob(FieldCoding.encode(write.query)), .blob(FieldCoding.encode(headers)),
                        .blob(body ?? Data()), .text(key), .real(createdAt.timeIntervalSince1970),
                        .text(StoredResponseKey.resource(of: write.path)),
                    ])
                return OutboxEntry(
                    id: id, position: Int(position), method: write.method, path: write.path,
                    query: write.query, headers: headers, body: body, idempotencyKey: key,
                    createdAt: createdAt, state: .queued)
            }
            state.withLock {
                $0.queuedCount += 1
                $0.held = false
            }
            hub.emit(.queued(entry))
            return entry
        }
    }

    /// Forgets the counts after ``OfflineStore/removeAll()`` emptied the table (called under
    /// the store's lock).
    func didRemoveAll() {
        state.withLock {
            $0.queuedCount = 0
            $0.keptCount = 0
            $0.held = false
        }
    }
}
