import Depot
import Foundation

/// Takes the secrets of ``Depot/Redaction/default`` out of a store written before version 4,
/// which dropped only `Authorization`, `Proxy-Authorization` and `Cookie`: header fields of
/// queued writes and of stored responses, the values stored responses recorded of the fields they
/// vary on, and whole answers to requests with a secret in their query. Then the file is
/// rewritten without the freed pages (`VACUUM`), so the removed bytes are gone from it.
enum SecretScrub {
    /// Runs once, when ``OfflineStore`` upgrades a file from `version` (older than 4).
    static func run(_ connection: SQLiteConnection, upgradedFrom version: Int) throws(OfflineStoreError) {
        guard version > 0, version < 4 else { return }
        let redaction = Redaction.default
        try connection.transaction { () throws(OfflineStoreError) in
            let outbox = try connection.query("SELECT id, headers FROM outbox") {
                row throws(OfflineStoreError) in (row.text(0), row.blob(1))
            }
            for (id, bytes) in outbox {
                guard let headers = FieldCoding.decodeHeaders(bytes) else { continue }
                let kept = redaction.removingSecrets(from: headers)
                guard kept != headers else { continue }
                try connection.execute(
                    "UPDATE outbox SET headers = ? WHERE id = ?",
                    [.blob(FieldCoding.encode(kept)), .text(id)])
            }
            let answers = try connection.query("SELECT id, path, query, headers, varying FROM answers") {
                row throws(OfflineStoreError) in
                (row.integer(0), row.text(1), row.blob(2), row.blob(3), row.blob(4))
            }
            for (id, path, query, headers, varying) in answers {
                let items = FieldCoding.decodeQuery(query) ?? []
                if redaction.carriesSecretInURL(BackendRequest(path: path, query: items)) {
                    try connection.execute("DELETE FROM answers WHERE id = ?", [.integer(id)])
                    continue
                }
                guard let fields = FieldCoding.decodeHeaders(headers),
                    let values = FieldCoding.decodeVarying(varying)
                else { continue }
                let keptFields = redaction.removingSecrets(from: fields)
                let keptValues = values.filter { !redaction.redacts(header: $0.key) }
                guard keptFields != fields || keptValues.count != values.count else { continue }
                try connection.execute(
                    "UPDATE answers SET headers = ?, varying = ? WHERE id = ?",
                    [
                        .blob(FieldCoding.encode(keptFields)), .blob(FieldCoding.encode(keptValues)),
                        .integer(id),
                    ])
            }
        }
        // Best effort for the log, unlike removeAll(): this runs once, at the upgrade, so a
        // busy checkpoint (another connection using the file) cannot be retried by failing the
        // open; the log's older copies go as the store writes over them, or when the last
        // connection to the file closes.
        try connection.executeScript("VACUUM; PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
