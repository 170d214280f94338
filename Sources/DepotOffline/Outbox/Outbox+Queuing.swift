import Depot
import Foundation
import JSONServerEngine

/// Queuing a write: whether it must wait behind entries, and committing it durably.
extension Outbox {
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
    /// it must, commits it as the last entry (``enqueue(_:policy:base:)``) with the base it was
    /// made on, both under one hold of the store's lock: no replay sends the entries ahead of
    /// it between the look and the queuing. The base is read first, outside the lock.
    func queueIfBehindEntries(_ write: BackendRequest, policy: OfflinePolicy, base: WriteBase?)
        -> BehindEntries
    {
        defer { publishChanges() }
        let outcome = try? database.withConnection { connection -> BehindEntries in
            guard let behind = try? waitsBehindEntries(write, connection) else { return .unknown }
            guard behind else { return .notBehind }
            do throws(OfflineStoreError) {
                return .queued(try enqueue(write, policy: policy, base: base, in: connection))
            } catch {
                return .notQueued(error)
            }
        }
        return outcome ?? .unknown
    }

    /// Commits `write` as the last entry, durably, with `base`, the record it was made on (see
    /// ``WriteBase``), then counts and reports it.
    ///
    /// - Throws: ``OfflineStoreError/Kind/outboxFull(limit:)`` when the policy's
    ///   ``OfflinePolicy/maxQueuedWrites`` entries (queued or kept) are in the store already.
    func enqueue(_ write: BackendRequest, policy: OfflinePolicy, base: WriteBase? = nil)
        throws(OfflineStoreError)
        -> OutboxEntry
    {
        defer { publishChanges() }
        return try database.withConnection { connection throws(OfflineStoreError) -> OutboxEntry in
            try enqueue(write, policy: policy, base: base, in: connection)
        }
    }

    /// ``enqueue(_:policy:base:)`` for a caller that holds the store's lock (and publishes the
    /// changes once it is released).
    private func enqueue(
        _ write: BackendRequest, policy: OfflinePolicy, base: WriteBase?, in connection: SQLiteConnection
    ) throws(OfflineStoreError) -> OutboxEntry {
        // A create has no base: the record is the one it makes.
        let base = write.method == .post ? nil : base
        var headers = policy.redaction.removingSecrets(from: write.headers)
        let limit = policy.maxQueuedWrites
        let key = headers[Self.idempotencyKeyField] ?? UUID.randomText()
        headers.remove(Self.idempotencyKeyField)
        let body = write.body.flatMap { $0.isEmpty ? nil : $0 }
        let id = UUID.randomText()
        let queuedAt = Date()
        let resource = write.resource
        // The body, read once: for a create's local id and for the overlay.
        let sent = body.flatMap { JSONServerRules.parse($0)?.objectValue }
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
            let localID = try LocalIDs.newLocalID(for: write, resource: resource, sent: sent, in: connection)
            try connection.execute(
                """
                INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                    created_at, state, resource, local_id, addressed, base, base_etag, base_last_modified)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(id), .integer(position), .text(write.method.rawValue), .text(write.path),
                    .blob(FieldCoding.encode(write.query)), .blob(FieldCoding.encode(headers)),
                    .blob(body ?? Data()), .text(key), .real(queuedAt.timeIntervalSince1970),
                    .text(resource.path), localID.map { .text(LocalIDs.json($0)) } ?? .null,
                    Self.text(of: resource),
                ] + Self.values(of: base))
            return OutboxEntry(
                id: id, position: Int(position), method: write.method, path: write.path,
                resource: resource, query: write.query, headers: headers, body: body, idempotencyKey: key,
                queuedAt: queuedAt, state: .queued, localID: localID, writeBase: base)
        }
        state.withLock {
            $0.queuedCount += 1
            $0.held = false
            $0.pending.add(entry, sent: sent, localIDs: $0.localIDs)
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
