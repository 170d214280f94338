import Depot
import Foundation
import JSONServerEngine

/// Reading and writing the rows of the `outbox` and `outbox_outcomes` tables.
extension Outbox {
    static let columns = """
        id, position, method, path, query, headers, body, idempotency_key, created_at, state,
            refused_status, refused_message, refused_body, refused_at, local_id, addressed, base, base_etag,
            base_last_modified, conflict
        """

    static let outcomeColumns = """
        entry_id, method, path, idempotency_key, created_at, outcome, status, headers, body, decided_at
        """

    static func entry(
        id: String, in connection: SQLiteConnection, path: String
    ) throws(OfflineStoreError) -> OutboxEntry? {
        try connection.query("SELECT \(columns) FROM outbox WHERE id = ?", [.text(id)]) {
            row throws(OfflineStoreError) in try entry(from: row, path: path)
        }.first
    }

    static func entry(from row: SQLiteStatement, path: String) throws(OfflineStoreError) -> OutboxEntry {
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
                    refusedAt: Date(timeIntervalSince1970: row.real(13)),
                    conflict: row.isNull(19) ? nil : OutboxConflict(stored: Data(row.text(19).utf8))))
        default:
            throw OfflineStoreError(
                .corrupt, path: path, message: "an outbox entry has state '\(row.text(9))'")
        }
        let body = row.blob(6)
        return OutboxEntry(
            id: row.text(0), position: Int(row.integer(1)), method: method, path: row.text(3),
            resource: resource(row, 15), query: query, headers: headers, body: body.isEmpty ? nil : body,
            idempotencyKey: row.text(7), queuedAt: Date(timeIntervalSince1970: row.real(8)), state: state,
            localID: row.isNull(14) ? nil : JSONServerRules.parse(Data(row.text(14).utf8)),
            writeBase: base(row, 16))
    }

    /// The base in columns `column` (`base`), `column + 1` (`base_etag`) and `column + 2`
    /// (`base_last_modified`) (see ``StoreSchema/version7``); `nil` for none.
    static func base(_ row: SQLiteStatement, _ column: Int32) -> WriteBase? {
        guard !row.isNull(column),
            case .object(let record)? = JSONServerRules.parse(Data(row.text(column).utf8))
        else { return nil }
        return WriteBase(
            record: record, entityTag: row.isNull(column + 1) ? nil : row.text(column + 1),
            lastModified: row.isNull(column + 2) ? nil : row.text(column + 2))
    }

    /// The values of the `base`, `base_etag` and `base_last_modified` columns for `base`.
    static func values(of base: WriteBase?) -> [SQLiteValue] {
        guard let base else { return [.null, .null, .null] }
        return [
            .text(String(decoding: JSONServerRules.encode(base.record), as: UTF8.self)),
            base.entityTag.map { .text($0) } ?? .null, base.lastModified.map { .text($0) } ?? .null,
        ]
    }

    /// The typed resource in column `column` (see ``StoreSchema/version6``); `nil` for a row
    /// written before it kept one, or one that does not read as one (the path is read then).
    static func resource(_ row: SQLiteStatement, _ column: Int32) -> RequestResource? {
        guard !row.isNull(column), let stored = JSONServerRules.parse(Data(row.text(column).utf8)) else {
            return nil
        }
        return RequestResource(stored: stored)
    }

    /// `resource` as the text the `addressed` columns keep.
    static func text(of resource: RequestResource) -> SQLiteValue {
        .text(String(decoding: JSONServerRules.encode(value: resource.stored), as: UTF8.self))
    }

    /// Records what became of `entry` (sent with `response`, or discarded without one) at
    /// `decidedAt` among the recent outcomes, in the transaction that removes it, keeping the
    /// latest ``maxRecentOutcomes``. The stored response has no header field the policy's redaction names,
    /// and its body only when neither `Cache-Control: no-store` nor the policy's
    /// ``OfflinePolicy/storesResponse`` keeps it out: then its first ``maxStoredBodyBytes`` bytes.
    /// Returns the outcome's `sequence`: its place among the outcomes, which only grows (until
    /// ``OfflineStore/removeAll()``), unlike the positions of entries, which start again at 1
    /// once the outbox is empty.
    @discardableResult
    static func recordOutcome(
        of entry: OutboxEntry, response: BackendResponse?, decidedAt: Date, policy: OfflinePolicy,
        in connection: SQLiteConnection
    ) throws(OfflineStoreError) -> Int {
        let headers = response.map { policy.redaction.removingSecrets(from: $0.headers) } ?? HTTPHeaders()
        var body = Data()
        if let response, !CacheControl(response.headers).noStore,
            policy.storesResponse(entry.request, response)
        {
            body = response.body.prefix(maxStoredBodyBytes)
        }
        try connection.execute(
            """
            INSERT INTO outbox_outcomes (entry_id, method, path, idempotency_key, created_at, outcome,
                status, headers, body, decided_at, addressed)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(entry.id), .text(entry.method.rawValue), .text(entry.path), .text(entry.idempotencyKey),
                .real(entry.queuedAt.timeIntervalSince1970), .text(response == nil ? "discarded" : "sent"),
                response.map { .integer(Int64($0.status)) } ?? .null, .blob(FieldCoding.encode(headers)),
                .blob(body),
                .real(decidedAt.timeIntervalSince1970), text(of: entry.resource),
            ])
        let sequence = Int(try connection.integer("SELECT last_insert_rowid()") ?? 0)
        try connection.execute(
            """
            DELETE FROM outbox_outcomes
            WHERE sequence <= (SELECT max(sequence) FROM outbox_outcomes) - ?
            """, [.integer(Int64(maxRecentOutcomes))])
        return sequence
    }

    static func outcome(from row: SQLiteStatement, path: String) throws(OfflineStoreError) -> OutboxOutcome {
        guard let method = HTTPMethod(rawValue: row.text(1)),
            let headers = FieldCoding.decodeHeaders(row.blob(7))
        else {
            throw OfflineStoreError(.corrupt, path: path, message: "an outbox outcome cannot be read")
        }
        let write = QueuedWrite(
            id: row.text(0), method: method, path: row.text(2), idempotencyKey: row.text(3),
            queuedAt: Date(timeIntervalSince1970: row.real(4)))
        let decision: OutboxOutcome.Decision
        switch row.text(5) {
        case "sent":
            decision = .sent(
                BackendResponse(status: Int(row.integer(6)), headers: headers, body: row.blob(8)))
        case "discarded": decision = .discarded
        default:
            throw OfflineStoreError(
                .corrupt, path: path, message: "an outbox outcome reads '\(row.text(5))'")
        }
        return OutboxOutcome(
            write: write, decision: decision, decidedAt: Date(timeIntervalSince1970: row.real(9)))
    }
}
