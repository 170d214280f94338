import Depot
import Foundation

/// A ``Depot/ResponseStorage`` in an ``OfflineStore``'s file: stored responses that survive the
/// app quitting and the device restarting, bounded by bytes and entries with LRU eviction.
///
/// ```swift
/// let store = try OfflineStore(at: appSupport.appending(path: "depot.sqlite"))
/// let responses = OfflineResponseStorage(store: store, maxBytes: 50 << 20)
/// ```
///
/// The same protocol as Depot's ``Depot/InMemoryResponseStorage``, so code that stores
/// responses works with either: the `.offline(store)` middleware stores its responses in one,
/// and a `CacheMiddleware(storage:account:)` given one stores its validators in the same file,
/// so revalidation survives a restart. Responses `.offline(store)` has received but not yet
/// written are seen by every call here as stored. Safe from any thread. A look-up only reads;
/// each other call is one SQLite transaction under the store's lock: storing writes the
/// recency of the responses looked up since the last write, replaces the old response and evicts
/// the least recently used in the same transaction, so the bounds hold in the file at every
/// commit. Responses are committed
/// without waiting for the disk to sync (`synchronous=NORMAL`): they survive the app being
/// killed, and a power loss may lose the last ones (they are copies of the server's data)
/// but never leaves the file unsound. A key's `account` must not be a credential;
/// ``Depot/StoredResponse`` itself never holds one.
public final class OfflineResponseStorage: ResponseStorage {
    /// The store whose file keeps the responses.
    public let store: OfflineStore
    /// The most bytes stored (responses' and keys' ``Depot/StoredResponse/byteCount`` and
    /// ``Depot/StoredResponseKey/byteCount``).
    public let maxBytes: Int
    /// The most responses stored.
    public let maxEntries: Int

    /// Responses in `store`'s file, bounded by `maxBytes` and `maxEntries` (negative bounds count
    /// as zero). Several storages may share one store; the file keeps one set of responses, and
    /// each storage enforces its own bounds when it stores.
    public init(store: OfflineStore, maxEntries: Int = 10_000, maxBytes: Int = 50 << 20) {
        self.store = store
        self.maxBytes = max(0, maxBytes)
        self.maxEntries = max(0, maxEntries)
    }

    private static let keyMatch = "method = ? AND path = ? AND query = ? AND account = ?"

    private static func values(of key: StoredResponseKey) -> [SQLiteValue] {
        [
            .text(key.method.rawValue), .text(key.path), .blob(FieldCoding.encode(key.query)),
            .text(key.account),
        ]
    }

    /// The response stored for `key`, which becomes the most recently used; `nil` when none.
    ///
    /// A response `.offline(store)` received but has not written yet is found too. A look-up
    /// only reads the file: its recency is written with the next write (see `ResponseWriter`),
    /// before anything is evicted.
    ///
    /// - Throws: ``OfflineStoreError`` when SQLite fails, or ``OfflineStoreError/Kind/corrupt``
    ///   when the stored row cannot be read back.
    public func response(for key: StoredResponseKey) throws(OfflineStoreError) -> StoredResponse? {
        let writer = store.responseWriter
        if let waiting = writer.waitingResponse(for: key) { return waiting }
        let found = try store.database.withConnection { connection throws(OfflineStoreError) in
            try row(for: key, in: connection)
        }
        guard let (id, stored) = found else { return nil }
        writer.touch(id)
        return stored
    }

    /// The row id and the response stored for `key` in the file.
    private func row(for key: StoredResponseKey, in connection: SQLiteConnection) throws(OfflineStoreError)
        -> (Int64, StoredResponse)?
    {
        let path = store.database.path
        return try connection.query(
            "SELECT id, status, headers, body, varying, stored_at FROM answers WHERE \(Self.keyMatch)",
            Self.values(of: key)
        ) { row throws(OfflineStoreError) -> (Int64, StoredResponse) in
            (row.integer(0), try Self.storedResponse(row, from: 1, path: path))
        }.first
    }

    /// The `GET` answers stored for `path` with any query, for `account`, newest first (at
    /// most `limit` from the file, after those waiting in memory, which replace the file's for
    /// the same query): the listings of a collection a record may be found in. Nothing becomes
    /// more recently used.
    func storedListings(of path: String, account: String, limit: Int) throws(OfflineStoreError)
        -> [StoredResponse]
    {
        let databasePath = store.database.path
        let waiting = store.responseWriter.waitingResponses(forPath: path, account: account)
            .sorted { $0.response.storedAt > $1.response.storedAt }
        let replaced = Set(waiting.map { FieldCoding.encode($0.query) })
        let stored = try store.database.withConnection { connection throws(OfflineStoreError) in
            try connection.query(
                """
                SELECT status, headers, body, varying, stored_at, query FROM answers
                WHERE method = 'GET' AND path = ? AND account = ? ORDER BY stored_at DESC LIMIT ?
                """, [.text(path), .text(account), .integer(Int64(limit))]
            ) { row throws(OfflineStoreError) -> StoredResponse? in
                // A newer answer to the same query waits to be written: this one is replaced.
                guard !replaced.contains(row.blob(5)) else { return nil }
                return try Self.storedResponse(row, from: 0, path: databasePath)
            }
        }
        return waiting.map(\.response) + stored.compactMap { $0 }
    }

    /// The response in a row's columns `status, headers, body, varying, stored_at`, the first
    /// at `column`.
    private static func storedResponse(_ row: SQLiteStatement, from column: Int32, path: String)
        throws(OfflineStoreError) -> StoredResponse
    {
        guard let headers = FieldCoding.decodeHeaders(row.blob(column + 1)),
            let varying = FieldCoding.decodeVarying(row.blob(column + 3))
        else {
            throw OfflineStoreError(.corrupt, path: path, message: "a stored response cannot be read")
        }
        let response = BackendResponse(
            status: Int(row.integer(column)), headers: headers, body: row.blob(column + 2))
        return StoredResponse(
            response, storedAt: Date(timeIntervalSince1970: row.real(column + 4)), varying: varying)
    }

    /// Replaces the response stored for `key` with `response` (or removes it, for `nil`) while
    /// it is still `expected` (a response waiting to be written counts as stored); returns
    /// whether it was. One transaction.
    ///
    /// - Throws: ``OfflineStoreError`` when SQLite fails; nothing is changed then.
    @discardableResult
    public func replaceResponse(
        _ expected: StoredResponse, with response: StoredResponse?, for key: StoredResponseKey
    ) throws(OfflineStoreError) -> Bool {
        let writer = store.responseWriter
        // Under the store's lock, which the writer holds while it writes: what is read here
        // stays what is stored until the transaction ends.
        return try store.database.withConnection { connection throws(OfflineStoreError) in
            let waiting = writer.waitingEntry(for: key)
            let replaced = try connection.transaction(durable: false) {
                () throws(OfflineStoreError) -> Bool in
                if let waiting {
                    guard Self.same(waiting.response, expected) else { return false }
                } else {
                    guard let (_, stored) = try row(for: key, in: connection), Self.same(stored, expected)
                    else { return false }
                }
                if let response {
                    try writer.writeTouches(connection)
                    try insert(response, for: key, into: connection)
                    _ = try evict(connection)
                } else {
                    try connection.execute("DELETE FROM answers WHERE \(Self.keyMatch)", Self.values(of: key))
                }
                return true
            }
            // Once committed: the waiting response it replaced is not written. One that arrived
            // meanwhile is newer than both, stays waiting, and is written over this later.
            if replaced, let waiting { writer.discard(key, ifNumber: waiting.number) }
            return replaced
        }
    }

    /// Whether two responses are the same stored response: equal but for the storage time's last
    /// bits, which the file keeps as seconds in a `REAL`.
    private static func same(_ one: StoredResponse, _ other: StoredResponse) -> Bool {
        one.response == other.response && one.varying == other.varying
            && abs(one.storedAt.timeIntervalSince(other.storedAt)) < 0.001
    }

    /// Keeps `response` for `key` as the most recently used, then evicts the least recently
    /// used until both bounds hold; a response larger than ``maxBytes`` alone is not kept
    /// (and the old one for `key` is removed).
    ///
    /// - Returns: how many other responses were evicted.
    /// - Throws: ``OfflineStoreError`` when SQLite fails; nothing is changed then.
    @discardableResult
    public func store(_ response: StoredResponse, for key: StoredResponseKey) throws(OfflineStoreError) -> Int
    {
        try store([(response, key)])
    }

    /// Stores each of `responses` as ``store(_:for:)`` does, in one transaction, evicting
    /// once at the end: the writer of `.offline(store)` stores bursts of reads this way.
    ///
    /// - Parameter isWanted: asked, with its index in `responses`, for each response once the
    ///   store's lock is held; a response it refuses (discarded or replaced meanwhile) is not
    ///   stored.
    @discardableResult
    func store(
        _ responses: [(response: StoredResponse, key: StoredResponseKey)],
        if isWanted: (Int) -> Bool = { _ in true }
    ) throws(OfflineStoreError) -> Int {
        try store.database.withConnection { connection throws(OfflineStoreError) in
            let wanted = responses.indices.filter(isWanted).map { responses[$0] }
            guard !wanted.isEmpty else { return 0 }
            return try connection.transaction(durable: false) { () throws(OfflineStoreError) -> Int in
                try store.responseWriter.writeTouches(connection)
                for (response, key) in wanted { try insert(response, for: key, into: connection) }
                return try evict(connection)
            }
        }
    }

    /// Replaces the row of `key` with `response` (or only removes it when the response alone
    /// is over the bounds).
    private func insert(
        _ response: StoredResponse, for key: StoredResponseKey, into connection: SQLiteConnection
    )
        throws(OfflineStoreError)
    {
        let bytes = response.byteCount + key.byteCount
        let keyValues = Self.values(of: key)
        try connection.execute("DELETE FROM answers WHERE \(Self.keyMatch)", keyValues)
        guard bytes <= maxBytes, maxEntries > 0 else { return }
        try connection.execute(
            """
            INSERT INTO answers (method, path, query, account, status, headers, body, varying,
                stored_at, last_used, bytes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(last_used), 0) + 1 FROM answers), ?)
            """,
            keyValues + [
                .integer(Int64(response.response.status)),
                .blob(FieldCoding.encode(response.response.headers)),
                .blob(response.response.body),
                .blob(FieldCoding.encode(response.varying)),
                .real(response.storedAt.timeIntervalSince1970),
                .integer(Int64(bytes)),
            ]
        )
    }

    /// Removes the least recently used responses until both bounds hold; the newest (just
    /// stored) is never among them, since it fits alone. Returns how many were removed.
    private func evict(_ connection: SQLiteConnection) throws(OfflineStoreError) -> Int {
        let totals = try connection.query("SELECT count, bytes FROM answer_totals WHERE id = 1") { row in
            (count: Int(row.integer(0)), bytes: Int(row.integer(1)))
        }
        guard var count = totals.first?.count, var total = totals.first?.bytes else { return 0 }
        guard count > maxEntries || total > maxBytes else { return 0 }
        var doomed: [Int64] = []
        try connection.forEachRow("SELECT id, bytes FROM answers ORDER BY last_used") { row in
            guard count > maxEntries || total > maxBytes, count > 1 else { return false }
            doomed.append(row.integer(0))
            count -= 1
            total -= Int(row.integer(1))
            return true
        }
        for id in doomed { try connection.execute("DELETE FROM answers WHERE id = ?", [.integer(id)]) }
        return doomed.count
    }

    /// Removes the response stored for `key`; returns whether there was one.
    @discardableResult
    public func removeResponse(for key: StoredResponseKey) throws(OfflineStoreError) -> Bool {
        let waited = store.responseWriter.discard(key)
        let stored = try store.database.withConnection { connection throws(OfflineStoreError) in
            try connection.transaction(durable: false) { () throws(OfflineStoreError) -> Bool in
                try connection.execute("DELETE FROM answers WHERE \(Self.keyMatch)", Self.values(of: key))
                return connection.changes > 0
            }
        }
        return waited || stored
    }

    /// Removes the responses stored for `resource` (``Depot/StoredResponseKey/resource``),
    /// whatever their method, query or account, in one transaction; returns how many.
    ///
    /// - Throws: ``OfflineStoreError`` when SQLite fails; nothing is changed then.
    @discardableResult
    public func removeResponses(forResource resource: String) throws(OfflineStoreError) -> Int {
        let waiting = store.responseWriter.discard { $0.resource == resource }
        let removed = try store.database.withConnection { connection throws(OfflineStoreError) in
            try connection.transaction(durable: false) { () throws(OfflineStoreError) -> Int in
                // Narrowed by SQLite to the paths that contain the resource, then matched
                // exactly by the one reading of a key's resource.
                let doomed = try connection.query(
                    "SELECT id, path FROM answers WHERE instr(path, ?) > 0", [.text(resource)]
                ) { row in (row.integer(0), row.text(1)) }
                .filter { StoredResponseKey.resource(of: $0.1) == resource }
                for (id, _) in doomed {
                    try connection.execute("DELETE FROM answers WHERE id = ?", [.integer(id)])
                }
                return doomed.count
            }
        }
        return waiting + removed
    }

    /// Removes every stored response (the outbox is left alone; ``OfflineStore/removeAll()``
    /// empties both), synced to disk before it returns.
    public func removeAllResponses() throws(OfflineStoreError) {
        store.responseWriter.discardAll()
        try store.database.withConnection { connection throws(OfflineStoreError) in
            try connection.transaction { () throws(OfflineStoreError) in
                try connection.execute("DELETE FROM answers")
            }
        }
    }

    /// How many responses the file keeps now.
    public func count() throws(OfflineStoreError) -> Int {
        try store.database.withConnection { connection throws(OfflineStoreError) in
            Int(try connection.integer("SELECT count(*) FROM answers") ?? 0)
        }
    }

    /// How many bytes the stored responses count now against ``maxBytes``.
    public func totalBytes() throws(OfflineStoreError) -> Int {
        try store.database.withConnection { connection throws(OfflineStoreError) in
            Int(try connection.integer("SELECT total(bytes) FROM answers") ?? 0)
        }
    }
}
