import Foundation
import Testing

@testable import DepotOffline

/// A fresh folder under the temporary directory, removed with everything in it when the
/// value is released.
final class TemporaryFolder: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appending(path: "depot-offline-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A file in the folder.
    func file(_ name: String) -> URL {
        url.appending(path: name, directoryHint: .notDirectory)
    }
}

extension URL {
    /// The file-system path, as the store's errors name it.
    var filePath: String { path(percentEncoded: false) }

    /// Whether a file exists at this URL.
    var exists: Bool { FileManager.default.fileExists(atPath: filePath) }

    /// The companion file SQLite keeps beside this one (`-wal`, `-shm`).
    func companion(_ suffix: String) -> URL {
        URL(filePath: filePath + suffix)
    }
}

extension OfflineStore {
    /// Runs raw SQL on the store's connection (for tests that look under the API).
    func sql(_ sql: String, _ values: [SQLiteValue] = []) throws {
        try database.withConnection { connection throws(OfflineStoreError) in
            try connection.execute(sql, values)
        }
    }

    /// The first column of the first row of a query.
    func integer(_ sql: String) throws -> Int64? {
        try database.withConnection { connection throws(OfflineStoreError) in
            try connection.integer(sql)
        }
    }

    /// Adds one outbox row with a body of `bytes` bytes.
    func addOutboxRow(id: String, position: Int, bytes: Int = 16) throws {
        try sql(
            """
            INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                created_at, state)
            VALUES (?, ?, 'POST', '/posts', x'', x'', ?, ?, 0, 'queued')
            """,
            [.text(id), .integer(Int64(position)), .blob(Data(repeating: 7, count: bytes)), .text(id)]
        )
    }
}

/// Runs `sql` on the SQLite file at `url` with a bare connection, outside any store.
func rawSQLite(_ url: URL, _ sql: String) throws {
    let connection = try SQLiteConnection(path: url.filePath, create: true)
    try connection.executeScript(sql)
}

/// The error `body` throws, when it is an ``OfflineStoreError``.
func offlineStoreError(_ body: () throws -> Void) -> OfflineStoreError? {
    do {
        try body()
        return nil
    } catch let error as OfflineStoreError {
        return error
    } catch {
        Issue.record("expected an OfflineStoreError, got \(error)")
        return nil
    }
}

extension Result {
    /// The value, or `nil` for a failure.
    var value: Success? { try? get() }

    /// The failure, or `nil` for a success.
    var failure: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }
}

extension OfflineStore {
    /// The schema version of the file (`PRAGMA user_version`).
    var fileVersion: Int {
        get throws(OfflineStoreError) {
            try database.withConnection { connection throws(OfflineStoreError) in
                Int(try connection.integer("PRAGMA user_version") ?? 0)
            }
        }
    }

    /// The result of SQLite's full `PRAGMA integrity_check`: `["ok"]` for a sound file.
    func integrityCheck() throws(OfflineStoreError) -> [String] {
        try database.withConnection { connection throws(OfflineStoreError) in
            try connection.texts("PRAGMA integrity_check")
        }
    }
}
