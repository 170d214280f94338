import Depot
import Foundation

/// The replayer's side: the sender lease, the next entry to send, and what became of it.
extension Outbox {
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

    /// Renews the lease (when `renewing` is `false`, the replay has just taken it: checks it
    /// still holds it, which ``OfflineStore/removeAll()`` may have ended since), then
    /// finds the first queued entry not held behind a kept `PUT`, `PATCH` or `DELETE` of its
    /// resource; when there is none, gives the lease back, marks what is still queued as held,
    /// and runs `whenEmpty` with how many entries remain, all under the store's lock (so a
    /// write queued at that moment either is found here or is queued after `whenEmpty` ran).
    func claimHead(renewing: Bool = true, whenEmpty: (_ remaining: Int) -> Void) throws(OfflineStoreError)
        -> Claim
    {
        let path = database.path
        return try database.withConnection { connection throws(OfflineStoreError) -> Claim in
            guard try renewing ? lease.renew(connection) : lease.isHeld(connection) else { return .leaseLost }
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
    /// follows the ``OutboxEvent/sent(_:_:)``. A `conflict` the replay met on the way (and the
    /// policy sent past) is reported first, with ``OutboxEvent/conflict(_:_:)``. A write sent
    /// with another method than the entry's (`sentMethod`: a `DELETE` that
    /// ``ConflictPolicy/merge(_:)`` turned into a `PUT`) is recorded as what the server applied,
    /// as ``Outbox/resolve(_:with:)`` records its `PUT`: reads show the record, not a deletion.
    /// Returns whether it was recorded (not for an entry gone while the replay lost its lease).
    @discardableResult
    func recordSent(
        _ entry: OutboxEntry, response: BackendResponse, conflict: OutboxConflict? = nil,
        sentMethod: HTTPMethod? = nil
    ) throws(OfflineStoreError) -> Bool {
        defer { publishChanges() }
        var applied = entry
        if let sentMethod { applied.method = sentMethod }
        let serverID = entry.localID == nil ? nil : LocalIDs.serverID(in: response, for: entry)
        let decidedAt = Date()
        return try database.withConnection { connection throws(OfflineStoreError) -> Bool in
            let (removed, sequence) = try connection.transaction {
                () throws(OfflineStoreError) -> (Bool, Int?) in
                let removed = try deleteQueued(entry, in: connection)
                // Not queued any more: one the app discarded while it was being sent reached
                // the server all the same (see `discard(_:)`), and its outcome follows the
                // discarded one, so reads show it after a restart as they do now. Gone while
                // this replay lost its lease (`removeAll()` emptied the store and ended it, or
                // it expired and another sender took over), it leaves no trace.
                if !removed {
                    guard try lease.isHeld(connection) else { return (false, nil) }
                }
                let sequence = try Self.recordOutcome(
                    of: applied, response: response, decidedAt: decidedAt,
                    policy: state.withLock { $0.policy }, in: connection)
                if let localID = entry.localID, let serverID {
                    try LocalIDs.record(
                        localID, serverID, resource: entry.resource.collectionPath, in: connection)
                }
                return (removed, sequence)
            }
            state.withLock {
                if removed { $0.queuedCount -= 1 }
                $0.pending.remove(entry.id)
                guard let sequence else { return }
                if let localID = entry.localID, let serverID {
                    $0.localIDs.map(localID, to: serverID)
                    $0.pending.rewrite(mentioning: localID, by: $0.localIDs)
                }
                // Stored answers older than this write show it from now on (see `sent`), in the
                // order of the outcomes, as when they are read from the file.
                if let write = PendingWrite(
                    sent: entry.id, position: sequence, method: applied.method,
                    resource: $0.localIDs.rewriting(entry.resource), response: response.body,
                    sentAt: decidedAt)
                {
                    $0.sent.add(write)
                    if $0.sent.count > Self.maxRecentOutcomes, let oldest = $0.sent.oldestEntryID {
                        $0.sent.remove(oldest)
                    }
                }
            }
            guard sequence != nil else { return false }
            if removed, let conflict { emit(.conflict(entry, conflict)) }
            emit(.sent(entry, response))
            if let localID = entry.localID, let serverID {
                emit(.created(entry, localID: localID, serverID: serverID))
            }
            return true
        }
    }

    /// `request` with the local ids the server has named replaced by its ids (see
    /// ``LocalIDs``): what a replay sends, and what a read or write through the middleware
    /// asks for.
    func rewritingLocalIDs(_ request: BackendRequest) -> BackendRequest {
        overlay().localIDs.rewriting(request)
    }

    /// Keeps an entry (durably) and reports it: refused by the server with `error`
    /// (``OutboxEvent/kept(_:_:)``, after ``OutboxEvent/conflict(_:_:)`` for a `conflict` met on
    /// the way), or, without an error, kept for the app with `conflict`
    /// (``OutboxEvent/conflict(_:_:)``): reads go on showing it then. Returns whether it was
    /// kept (not for an entry discarded meanwhile).
    @discardableResult
    func recordKept(_ entry: OutboxEntry, error: ServiceError?, conflict: OutboxConflict? = nil)
        throws(OfflineStoreError) -> Bool
    {
        defer { publishChanges() }
        let refusal: OutboxRefusal
        if let error {
            refusal = OutboxRefusal(
                status: error.statusCode, message: error.message ?? error.errorDescription,
                body: (error.response?.body ?? Data()).prefix(Self.maxStoredBodyBytes), refusedAt: Date())
        } else {
            let fields =
                conflict.map { $0.fields.isEmpty ? "" : ": " + $0.fields.joined(separator: ", ") } ?? ""
            refusal = OutboxRefusal(
                status: nil, message: "Changed on the server since the write was made\(fields)", body: Data(),
                refusedAt: Date(), conflict: conflict)
        }
        return try database.withConnection { connection throws(OfflineStoreError) -> Bool in
            try connection.transaction { () throws(OfflineStoreError) in
                try connection.execute(
                    """
                    UPDATE outbox SET state = 'kept', refused_status = ?, refused_message = ?,
                        refused_body = ?, refused_at = ?, conflict = ?
                    WHERE id = ? AND state = 'queued'
                    """,
                    [
                        refusal.status.map { .integer(Int64($0)) } ?? .null,
                        refusal.message.map { .text($0) } ?? .null,
                        .blob(refusal.body), .real(refusal.refusedAt.timeIntervalSince1970),
                        refusal.conflict.map { .text(String(decoding: $0.stored, as: UTF8.self)) } ?? .null,
                        .text(entry.id),
                    ])
            }
            // Discarded while it was being sent: nothing is kept, nothing to report.
            guard connection.changes > 0 else { return false }
            state.withLock {
                $0.queuedCount -= 1
                $0.keptCount += 1
                // Refused: reads no longer show it (rolled back) until the app retries it. Kept
                // with a conflict: reads show it until the app resolves it.
                if refusal.conflict == nil { $0.pending.remove(entry.id) }
            }
            var kept = entry
            kept.state = .kept(refusal)
            if let conflict { emit(.conflict(kept, conflict)) }
            if let error { emit(.kept(kept, error)) }
            return true
        }
    }

    /// Removes `entry` while it is still queued, recording its outcome (sent with `response`,
    /// or discarded for `nil`), inside the caller's transaction: the outcome's sequence, or
    /// `nil` when it was no longer queued (discarded meanwhile).
    private func removeQueued(
        _ entry: OutboxEntry, outcome response: BackendResponse?, in connection: SQLiteConnection
    )
        throws(OfflineStoreError) -> Int?
    {
        guard try deleteQueued(entry, in: connection) else { return nil }
        return try Self.recordOutcome(
            of: entry, response: response, decidedAt: Date(), policy: state.withLock { $0.policy },
            in: connection)
    }

    /// Deletes `entry` if it is still queued; returns whether it was (the app may have
    /// discarded it, or another process settled it, since it was read).
    private func deleteQueued(_ entry: OutboxEntry, in connection: SQLiteConnection) throws(OfflineStoreError)
        -> Bool
    {
        try connection.execute("DELETE FROM outbox WHERE id = ? AND state = 'queued'", [.text(entry.id)])
        return connection.changes > 0
    }

    /// Removes an entry a conflict dropped unsent (durably, as a discarded outcome) and reports
    /// it: ``OutboxEvent/conflict(_:_:)``, then ``OutboxEvent/discarded(_:)``. Returns whether
    /// it was removed (not for an entry discarded meanwhile).
    @discardableResult
    func recordDropped(_ entry: OutboxEntry, conflict: OutboxConflict) throws(OfflineStoreError) -> Bool {
        defer { publishChanges() }
        return try database.withConnection { connection throws(OfflineStoreError) -> Bool in
            let removed = try connection.transaction { () throws(OfflineStoreError) -> Bool in
                try removeQueued(entry, outcome: nil, in: connection) != nil
            }
            // Discarded while it was being read: the app's discard was reported already.
            guard removed else { return false }
            state.withLock {
                $0.queuedCount -= 1
                $0.pending.remove(entry.id)
            }
            emit(.conflict(entry, conflict))
            emit(.discarded(entry))
            return true
        }
    }

    /// Reads the counts of queued and kept entries again when another connection (another
    /// process, or another store on the file) committed a change since the last look: one
    /// `PRAGMA data_version` otherwise. Called under the store's lock.
    func syncCounts(_ connection: SQLiteConnection) throws(OfflineStoreError) {
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
}
