import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one-sender rule across processes and stores: a lease in the store's file (table
/// `outbox_sender`), held by one outbox at a time for the whole of a replay.
///
/// An app and its extension may open one store file at once; without the lease both could
/// send the same queued entry. It is a row, not a file lock, so a process suspended while it
/// replays holds no lock on a shared file (iOS ends such a process), and a lease is taken and
/// given back in short transactions. A lease ends when its holder gives it back, when its
/// process is gone (a crash, `kill -9`: the next sender sees that at once), or ``duration``
/// after it was last renewed (a holder that hangs or is suspended): a replay renews it before
/// each entry it sends.
final class SenderLease: Sendable {
    /// How long a lease lasts without renewal: longer than any one request of a replay,
    /// retries included, should take.
    static let duration: TimeInterval = 300

    /// This outbox's name in the lease: unique per open store.
    let owner = UUID.random().uuidString
    private let pid = Int64(getpid())

    /// Takes the lease if nobody holds it (or its holder's process is gone, or it expired):
    /// `true` when this outbox holds it now. Call under the store's lock.
    func tryTake(_ connection: SQLiteConnection) throws(OfflineStoreError) -> Bool {
        try connection.transaction(durable: false) { () throws(OfflineStoreError) -> Bool in
            let now = Date().timeIntervalSince1970
            let holder = try connection.query("SELECT owner, pid, expires_at FROM outbox_sender WHERE id = 1")
            {
                row throws(OfflineStoreError) in
                (owner: row.text(0), pid: row.integer(1), expiresAt: row.real(2))
            }.first
            if let holder, holder.owner != owner, holder.expiresAt > now, Self.isAlive(holder.pid) {
                return false
            }
            try connection.execute(
                "INSERT OR REPLACE INTO outbox_sender (id, owner, pid, expires_at) VALUES (1, ?, ?, ?)",
                [.text(owner), .integer(pid), .real(now + Self.duration)])
            return true
        }
    }

    /// Renews the lease: `false` when this outbox no longer holds it (it expired and another
    /// sender took it). Call under the store's lock.
    func renew(_ connection: SQLiteConnection) throws(OfflineStoreError) -> Bool {
        try connection.transaction(durable: false) { () throws(OfflineStoreError) -> Bool in
            try connection.execute(
                "UPDATE outbox_sender SET expires_at = ? WHERE id = 1 AND owner = ?",
                [.real(Date().timeIntervalSince1970 + Self.duration), .text(owner)])
            return connection.changes > 0
        }
    }

    /// Whether this outbox holds the lease now (``OfflineStore/removeAll()`` ends any).
    /// Call under the store's lock.
    func isHeld(_ connection: SQLiteConnection) throws(OfflineStoreError) -> Bool {
        try connection.integer(
            "SELECT EXISTS (SELECT 1 FROM outbox_sender WHERE id = 1 AND owner = ?)", [.text(owner)]) == 1
    }

    /// Gives the lease back, if this outbox holds it. Call under the store's lock.
    func release(_ connection: SQLiteConnection) throws(OfflineStoreError) {
        try connection.transaction(durable: false) { () throws(OfflineStoreError) in
            try connection.execute("DELETE FROM outbox_sender WHERE id = 1 AND owner = ?", [.text(owner)])
        }
    }

    /// Whether the process `pid` runs (or may: a process this one may not signal counts as
    /// running). This process always does.
    private static func isAlive(_ pid: Int64) -> Bool {
        guard pid != Int64(getpid()) else { return true }
        guard pid > 0, pid <= Int64(Int32.max) else { return false }
        return kill(pid_t(pid), 0) == 0 || errno != ESRCH
    }
}
