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
/// write. The same key goes
/// with every replay, so a server that honours the header applies the write once even when an
/// earlier attempt reached it and only the answer was lost. Since the key makes sending it
/// again safe, the request is also marked ``Depot/BackendRequest/isRetryable`` for a retry
/// middleware behind this one.
///
/// **A write that fails before any answer arrives** (`.cannotConnect`, `.noConnection`,
/// `.timedOut` or `.transport`; not `.cancelled`) is committed to the store in one durable
/// transaction (synced to disk: it survives the app being killed and a power loss), and only
/// then does its caller's future fail with ``Depot/ServiceError/queued(_:)``, whose
/// ``Depot/QueuedWrite/id`` is the entry's ``OutboxEntry/id``. It is never reported as a
/// success. If that commit fails, the caller gets the original transport error: nothing was
/// queued. A write that got any HTTP answer is returned as it is: a 4xx or 5xx is the server's
/// answer, not queued.
///
/// **What is stored**: method, path, query, header fields, body, the key and when it was
/// queued. Never a credential: `Authorization`, `Proxy-Authorization` and `Cookie` are
/// dropped before writing. List `.offline(store)` **first**, in front of authentication, so
/// that requests carry none when they reach it anyway, and each replay gets a fresh token
/// from the auth middleware behind it.
///
/// **Order.** Writes are replayed in the order they were queued. While entries are queued, a
/// new write does not overtake them: it is queued behind them (its caller gets `.queued`
/// too) and a replay starts, which sends the earlier entries first and then this one. So a
/// `PATCH` never reaches the server before the queued `POST` that created its record.
/// (Writes started at the same time, from different tasks, have no order between them.)
///
/// **Replay** (``replay()``): the queued entries are sent one at a time, in order, through
/// the rest of the chain (what follows the middleware: auth, retry, the backend), each with
/// its own stored key. Outcomes, reported on ``events``:
/// - a 2xx: the entry is removed from the store, ``OutboxEvent/sent(_:_:)``;
/// - a failure before any answer, a 5xx, a 503 or a 429: the replay stops and the entries
///   stay queued, in order, for a later replay (so a write the server keeps answering with a
///   5xx holds back those behind it: ``entries()`` shows it, and ``discard(_:)`` lets the
///   rest go);
/// - a refusal (409, 412, any other 4xx) or a request that cannot be sent: the entry is
///   **kept** (state ``OutboxEntry/State/kept(_:)``, with the status and the server's
///   message), ``OutboxEvent/kept(_:_:)``, and **the replay goes on with the entries behind
///   it**: one refused to-do must not hold back the others. A later entry that depended on
///   the refused one gets its own refusal (a 404, say) and is kept too, so nothing is lost
///   and the app sees both. The app resolves kept entries with ``retry(_:)`` (back in the
///   queue at its place) or ``discard(_:)``.
///
/// Nothing queued is ever dropped silently: an entry leaves the store only when the server
/// accepted it, when the app discards it, or with ``OfflineStore/removeAll()``.
///
/// A replay starts on its own after any later request through the middleware succeeds (a 2xx
/// to a read or a write), in the background, when entries are queued; checking costs one
/// lock, so the online path stays fast. Only one replay runs at a time: calling ``replay()``
/// while one runs waits for that one and returns its report.
///
/// Open one ``OfflineStore`` per file in a process: the outbox keeps a count of queued entries
/// in memory, and a second store on the same file would not see the first one's changes.
public final class Outbox: Sendable {
    /// The rest of a middleware chain: what a replay sends entries through.
    typealias Send = @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>

    /// The header field of draft-ietf-httpapi-idempotency-key-header.
    static let idempotencyKeyField = "Idempotency-Key"
    /// Header fields never stored: credentials.
    static let credentialFields = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// The outbox a replay is sending for, so that a request a replay sends through a backend
    /// that includes the `.offline` middleware again passes through instead of being queued.
    @TaskLocal static var replaying: ObjectIdentifier?

    let database: SQLiteDatabase
    private let state: OutboxState
    private let hub = OutboxEventHub()
    /// Where failed writes are committed, off the thread that delivered the failure.
    private let queue = DispatchQueue(label: "depot.offline.outbox")

    /// The outbox of the store whose connection is `database`.
    init(database: SQLiteDatabase) throws(OfflineStoreError) {
        self.database = database
        let queued = try database.withConnection { connection throws(OfflineStoreError) in
            try connection.integer("SELECT count(*) FROM outbox WHERE state = 'queued'") ?? 0
        }
        state = OutboxState(queuedCount: Int(queued))
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

    /// How many entries wait for a replay (kept entries not counted); read from memory.
    public var queuedCount: Int {
        state.withLock { $0.queuedCount }
    }

    /// A stream of what happens to entries from now on: each access returns a new stream, fed
    /// with every event after it was created, in the order the store changed; events wait in
    /// the stream until read. Stop iterating (or cancel the task) to unsubscribe; the stream
    /// ends when the store is released.
    public var events: AsyncStream<OutboxEvent> {
        hub.subscribe()
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
            state.withLock { $0.queuedCount += 1 }
            hub.emit(.queued(entry))
            return true
        }
        if requeued { replayInBackground() }
        return requeued
    }

    /// Removes an entry, queued or kept, so that it is never sent, and reports
    /// ``OutboxEvent/discarded(_:)``.
    ///
    /// For a refusal the app will not resolve, or a pending change the user cancelled. An
    /// entry a replay is sending at that moment may still reach the server (its
    /// ``OutboxEvent/sent(_:_:)`` then follows).
    ///
    /// - Returns: `false` when no entry has that id.
    @discardableResult
    public func discard(_ id: String) throws(OfflineStoreError) -> Bool {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) -> Bool in
            let removed = try connection.transaction { () throws(OfflineStoreError) -> OutboxEntry? in
                guard let entry = try Self.entry(id: id, in: connection, path: path) else { return nil }
                try connection.execute("DELETE FROM outbox WHERE id = ?", [.text(id)])
                return entry
            }
            guard let removed else { return false }
            if removed.isQueued { state.withLock { $0.queuedCount -= 1 } }
            hub.emit(.discarded(removed))
            return true
        }
    }

    // MARK: - Replay

    /// Sends the queued entries, in order, through the rest of the chain of the `.offline`
    /// middleware that last handled a request, and returns what happened.
    ///
    /// See ``Outbox`` for the outcomes; each entry's arrives on ``events`` as it happens. Only
    /// one replay runs at a time: while one runs (started by another call or automatically),
    /// this waits for it and returns its report. Without queued entries it returns at once
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
        await withCheckedContinuation { (continuation: CheckedContinuation<OutboxReplayReport, Never>) in
            let start = state.withLock { state -> ReplayStart in
                if state.running {
                    state.waiters.append(continuation)
                    return .joined
                }
                if state.next == nil, let given { state.next = given }
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

    /// Starts a replay in the background when entries are queued, none runs, and a backend
    /// is known.
    func replayInBackground() {
        let send = state.withLock { state -> Send? in
            guard !state.running, state.queuedCount > 0, let next = state.next else { return nil }
            state.running = true
            return next
        }
        guard let send else { return }
        Task { await self.runReplay(through: send) }
    }

    /// The replay loop: one entry at a time until none is queued or one interrupts it. The
    /// caller has set `running`; this clears it and answers the waiters.
    private func runReplay(through send: @escaping Send) async {
        var sent = 0
        var kept = 0
        let ending: OutboxReplayReport.Ending
        replaying: while true {
            let head: OutboxEntry?
            do {
                head = try claimHead()
            } catch {
                ending = .storeFailed(error)
                break
            }
            // `nil`: nothing was queued, and `claimHead` already ended the replay.
            guard let entry = head else { return }
            let result = await Self.$replaying.withValue(ObjectIdentifier(self)) {
                await send(entry.request).result
            }
            do {
                switch result {
                case .success(let response):
                    try recordSent(entry, response: response)
                    sent += 1
                case .failure(let error) where Self.interruptsReplay(error):
                    ending = .interrupted(error)
                    break replaying
                case .failure(let error):
                    try recordKept(entry, error: error)
                    kept += 1
                }
            } catch {
                ending = .storeFailed(error)
                break
            }
            // Sent and kept so far are reported to whoever waits when the loop ends.
            state.withLock { $0.progress = (sent, kept) }
        }
        let waiters = state.withLock { state in
            state.running = false
            state.progress = (0, 0)
            defer { state.waiters = [] }
            return state.waiters
        }
        let report = OutboxReplayReport(sent: sent, kept: kept, remaining: queuedCount, ending: ending)
        for waiter in waiters { waiter.resume(returning: report) }
    }

    /// The first queued entry; when there is none, ends the replay (under the store's lock, so
    /// a write queued at that moment either is found here or finds no replay running and
    /// starts one) and returns `nil`.
    private func claimHead() throws(OfflineStoreError) -> OutboxEntry? {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) -> OutboxEntry? in
            let head = try connection.query(
                "SELECT \(Self.columns) FROM outbox WHERE state = 'queued' ORDER BY position LIMIT 1"
            ) { row throws(OfflineStoreError) in try Self.entry(from: row, path: path) }.first
            if let head { return head }
            let (waiters, report) = state.withLock { state in
                state.queuedCount = 0
                state.running = false
                let report = OutboxReplayReport(
                    sent: state.progress.sent, kept: state.progress.kept, remaining: 0, ending: .finished)
                state.progress = (0, 0)
                defer { state.waiters = [] }
                return (state.waiters, report)
            }
            for waiter in waiters { waiter.resume(returning: report) }
            return nil
        }
    }

    /// Removes a sent entry (durably) and reports it.
    private func recordSent(_ entry: OutboxEntry, response: BackendResponse) throws(OfflineStoreError) {
        try database.withConnection { connection throws(OfflineStoreError) in
            let removed = try connection.transaction { () throws(OfflineStoreError) -> Bool in
                try connection.execute(
                    "DELETE FROM outbox WHERE id = ? AND state = 'queued'", [.text(entry.id)])
                return connection.changes > 0
            }
            if removed { state.withLock { $0.queuedCount -= 1 } }
            hub.emit(.sent(entry, response))
        }
    }

    /// Keeps a refused entry (durably) with its refusal, and reports it.
    private func recordKept(_ entry: OutboxEntry, error: ServiceError) throws(OfflineStoreError) {
        let refusal = OutboxRefusal(
            status: error.statusCode, message: error.message ?? error.errorDescription,
            body: error.response?.body ?? Data(), refusedAt: Date())
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
            state.withLock { $0.queuedCount -= 1 }
            var kept = entry
            kept.state = .kept(refusal)
            hub.emit(.kept(kept, error))
        }
    }

    /// Whether `error` ends a replay with the entry still queued (no answer, or the server
    /// asks to come back later) rather than keeping the entry as refused.
    static func interruptsReplay(_ error: ServiceError) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut, .transport, .cancelled, .serviceUnavailable,
            .serverError, .queued:
            return true
        case .invalidRequest, .unauthorized, .forbidden, .notFound, .conflict, .clientError,
            .unexpectedStatus, .decoding:
            return false
        }
    }

    /// Whether `error` means the request got no answer at all: such a write is queued.
    static func failedBeforeAnswer(_ error: ServiceError) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut, .transport: return true
        default: return false
        }
    }

    // MARK: - The middleware's side

    /// The rest of the chain as the middleware hands it on: remembered for replays, and, while
    /// entries are queued, wrapped so that a success starts a replay in the background.
    /// Without queued entries it is `next` itself (nothing added to the online path but one
    /// lock).
    func relay(_ next: @escaping Send) -> Send {
        let queued = state.withLock { state -> Bool in
            state.next = next
            return state.queuedCount > 0
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
    /// fails before any answer or when entries are queued ahead of it (see ``Outbox``).
    func send(_ request: BackendRequest, through next: @escaping Send) -> Future<
        BackendResponse, ServiceError
    > {
        var request = request
        if !request.headers.contains(Self.idempotencyKeyField) {
            request.headers[Self.idempotencyKeyField] = UUID().uuidString.lowercased()
        }
        request.isRetryable = true
        // A replay's own request, sent through a chain that includes the middleware again.
        if Self.replaying == ObjectIdentifier(self) { return next(request) }
        let write = request
        return Future { [self] promise in
            guard state.withLock({ $0.queuedCount > 0 }) else {
                return attempt(write, through: next, promise: promise)
            }
            // Behind queued entries: queue it too, and let a replay send them all in order.
            let token = CancellationToken()
            queue.async { [self] in
                do {
                    let entry = try enqueue(write)
                    // Started before the caller hears of it: a replay it asks for joins this one.
                    replayInBackground()
                    promise(.failure(.queued(entry.queuedWrite)))
                } catch {
                    // The store cannot take it: better sent out of order than not at all.
                    let attempt = attempt(write, through: next, promise: promise)
                    token.onCancel { attempt.cancel() }
                }
            }
            return token
        }
    }

    /// Sends `write` once; queues it when it fails before any answer.
    private func attempt(
        _ write: BackendRequest, through next: Send,
        promise: Future<BackendResponse, ServiceError>.Promise
    ) -> any Cancellable {
        next(write).start { [self] result in
            guard case .failure(let failure) = result, Self.failedBeforeAnswer(failure) else {
                promise(result)
                return
            }
            queue.async { [self] in
                do {
                    promise(.failure(.queued(try enqueue(write).queuedWrite)))
                } catch {
                    // Nothing was queued: the caller gets the transport error itself.
                    promise(.failure(failure))
                }
            }
        }
    }

    /// Commits `write` as the last entry, durably, then counts and reports it.
    func enqueue(_ write: BackendRequest) throws(OfflineStoreError) -> OutboxEntry {
        var headers = write.headers
        for name in Self.credentialFields { headers.remove(name) }
        let key = headers[Self.idempotencyKeyField] ?? UUID().uuidString.lowercased()
        headers.remove(Self.idempotencyKeyField)
        let body = write.body.flatMap { $0.isEmpty ? nil : $0 }
        let id = UUID().uuidString.lowercased()
        let createdAt = Date()
        return try database.withConnection { connection throws(OfflineStoreError) -> OutboxEntry in
            let entry = try connection.transaction(durable: true) {
                () throws(OfflineStoreError) -> OutboxEntry in
                let position =
                    try connection.integer("SELECT coalesce(max(position), 0) + 1 FROM outbox") ?? 1
                try connection.execute(
                    """
                    INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                        created_at, state)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued')
                    """,
                    [
                        .text(id), .integer(position), .text(write.method.rawValue), .text(write.path),
                        .blob(FieldCoding.encode(write.query)), .blob(FieldCoding.encode(headers)),
                        .blob(body ?? Data()), .text(key), .real(createdAt.timeIntervalSince1970),
                    ])
                return OutboxEntry(
                    id: id, position: Int(position), method: write.method, path: write.path,
                    query: write.query, headers: headers, body: body, idempotencyKey: key,
                    createdAt: createdAt, state: .queued)
            }
            state.withLock { $0.queuedCount += 1 }
            hub.emit(.queued(entry))
            return entry
        }
    }

    /// Forgets the count after ``OfflineStore/removeAll()`` emptied the table (called under
    /// the store's lock).
    func didRemoveAll() {
        state.withLock { $0.queuedCount = 0 }
    }

    // MARK: - Rows

    private static let columns = """
        id, position, method, path, query, headers, body, idempotency_key, created_at, state,
            refused_status, refused_message, refused_body, refused_at
        """

    private static func entry(
        id: String, in connection: SQLiteConnection, path: String
    ) throws(OfflineStoreError) -> OutboxEntry? {
        try connection.query("SELECT \(columns) FROM outbox WHERE id = ?", [.text(id)]) {
            row throws(OfflineStoreError) in try entry(from: row, path: path)
        }.first
    }

    private static func entry(from row: SQLiteStatement, path: String) throws(OfflineStoreError)
        -> OutboxEntry
    {
        guard let method = HTTPMethod(rawValue: row.text(2)),
            let query = FieldCoding.decodeQuery(row.blob(4)),
            let headers = FieldCoding.decodeHeaders(row.blob(5))
        else {
            throw OfflineStoreError(.corrupt, path: path, message: "an outbox entry cannot be read")
        }
        let state: OutboxEntry.State
        switch row.text(9) {
        case "queued": state = .queued
        case "kept":
            state = .kept(
                OutboxRefusal(
                    status: row.isNull(10) ? nil : Int(row.integer(10)),
                    message: row.isNull(11) ? nil : row.text(11),
                    body: row.blob(12),
                    refusedAt: Date(timeIntervalSince1970: row.real(13))))
        default:
            throw OfflineStoreError(
                .corrupt, path: path, message: "an outbox entry has state '\(row.text(9))'")
        }
        let body = row.blob(6)
        return OutboxEntry(
            id: row.text(0), position: Int(row.integer(1)), method: method, path: row.text(3),
            query: query, headers: headers, body: body.isEmpty ? nil : body,
            idempotencyKey: row.text(7), createdAt: Date(timeIntervalSince1970: row.real(8)), state: state)
    }
}

/// The outbox's state in memory, under one lock: taken inside the store's lock at times,
/// never the other way round.
private final class OutboxState: @unchecked Sendable {
    struct Fields {
        /// How many entries are in state `queued` (changed only under the store's lock too).
        var queuedCount: Int
        /// The rest of the chain the middleware last handed on.
        var next: Outbox.Send?
        /// Whether a replay runs.
        var running = false
        /// Sent and kept by the running replay so far.
        var progress: (sent: Int, kept: Int) = (0, 0)
        /// Callers of `replay()` waiting for the running one.
        var waiters: [CheckedContinuation<OutboxReplayReport, Never>] = []
    }

    private var fields: Fields
    private let lock = NSLock()

    init(queuedCount: Int) {
        fields = Fields(queuedCount: queuedCount)
    }

    func withLock<T>(_ body: (inout Fields) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&fields)
    }
}
