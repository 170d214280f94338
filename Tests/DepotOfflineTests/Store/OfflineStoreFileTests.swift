import Foundation
import Testing

@testable import DepotOffline

@Suite("OfflineStore: files that are not stores are refused")
struct OfflineStoreFileTests {
    /// Opens `url` expecting a refusal of `kind` whose description names the file, and
    /// checks the file was left byte for byte as it was.
    private func expectRefused(_ url: URL, as kind: OfflineStoreError.Kind) throws {
        let before = try Data(contentsOf: url)
        let error = offlineStoreError { _ = try OfflineStore(at: url) }
        #expect(error?.kind == kind, "\(String(describing: error))")
        #expect(error?.path == url.filePath)
        #expect(error?.description.contains(url.filePath) == true)
        #expect(try Data(contentsOf: url) == before)
    }

    /// A store at `url` holding about `bytes` bytes of answers, closed cleanly (so the log
    /// has been checkpointed into the file and removed).
    private func makeFilledStore(at url: URL, bytes: Int) throws {
        let store = try OfflineStore(at: url)
        for index in 0..<(bytes / 4_000) {
            try store.sql(
                """
                INSERT INTO answers (method, path, query, account, status, headers, body, varying,
                    stored_at, last_used, bytes)
                VALUES ('GET', ?, x'', '', 200, x'', randomblob(4000), x'', 0, ?, 4000)
                """,
                [.text("/photos/\(index)"), .integer(Int64(index))]
            )
        }
    }

    @Test("a text file is not a database")
    func textFile() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("notes.sqlite")
        try Data(String(repeating: "Not a database, just some notes.\n", count: 200).utf8).write(to: url)
        try expectRefused(url, as: .notADatabase)
    }

    @Test("random bytes are not a database")
    func randomBytes() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("random.sqlite")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<16_384).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: url)
        try expectRefused(url, as: .notADatabase)
    }

    @Test("a zeroed file is not a database")
    func zeroedFile() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("zeros.sqlite")
        try Data(repeating: 0, count: 32_768).write(to: url)
        try expectRefused(url, as: .notADatabase)
    }

    @Test("a store cut inside its header (the magic string kept) is corrupt")
    func truncatedHeader() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        try makeFilledStore(at: url, bytes: 40_000)
        try Data(try Data(contentsOf: url).prefix(60)).write(to: url)
        try expectRefused(url, as: .corrupt)
    }

    @Test("a store truncated to half its pages is corrupt")
    func truncatedStore() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        try makeFilledStore(at: url, bytes: 400_000)
        #expect(!url.companion("-wal").exists)
        let data = try Data(contentsOf: url)
        #expect(data.count > 400_000)
        try Data(data.prefix(data.count / 2)).write(to: url)
        try expectRefused(url, as: .corrupt)
    }

    @Test("another app's SQLite database is foreign, and stays as it was")
    func foreignDatabase() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("other.sqlite")
        try rawSQLite(
            url, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes VALUES (1, 'hi')")
        try expectRefused(url, as: .foreignDatabase)
    }

    @Test("another app's database with its own user_version and no tables is foreign")
    func foreignVersionedDatabase() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("other.sqlite")
        try rawSQLite(url, "PRAGMA user_version = 7")
        try expectRefused(url, as: .foreignDatabase)
    }

    @Test("a store from a newer DepotOffline is refused with both versions, and stays as it was")
    func newerVersion() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        _ = try OfflineStore(at: url, migrations: StoreSchema.migrations + [SchemaMigrationTests.version2])
        let supported = OfflineStore.schemaVersion
        try expectRefused(url, as: .newerVersion(found: supported + 1, supported: supported))
    }

    @Test("random bytes in a -wal file beside a sound store are ignored: the store opens with its data")
    func garbageLog() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        try makeFilledStore(at: url, bytes: 40_000)
        var generator = SystemRandomNumberGenerator()
        let garbage = Data((0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try garbage.write(to: url.companion("-wal"))
        let store = try OfflineStore(at: url)
        #expect(try store.integer("SELECT count(*) FROM answers") == 10)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test("an empty file becomes a store")
    func emptyFile() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("empty.sqlite")
        try Data().write(to: url)
        let store = try OfflineStore(at: url)
        #expect(try store.fileVersion == OfflineStore.schemaVersion)
    }
}
