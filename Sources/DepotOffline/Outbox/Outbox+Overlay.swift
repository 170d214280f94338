import Depot
import Foundation
import JSONServerEngine

/// The queued writes as reads see them (see ``PendingWrites``), cached in memory.
extension Outbox {
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
                "SELECT \(Self.columns) FROM outbox WHERE state = 'queued' OR conflict IS NOT NULL ORDER BY position"
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
}
