import Foundation
import Testing

@testable import DepotOffline

@Suite("OfflineStore: schema migrations")
struct SchemaMigrationTests {
    /// The first schema as released, frozen here: it must keep opening with the current code
    /// whatever later versions change, so it is not read from `StoreSchema`.
    static let frozenVersion1 = """
        CREATE TABLE answers (
            id INTEGER PRIMARY KEY,
            method TEXT NOT NULL,
            path TEXT NOT NULL,
            query BLOB NOT NULL,
            account TEXT NOT NULL,
            status INTEGER NOT NULL,
            headers BLOB NOT NULL,
            body BLOB NOT NULL,
            varying BLOB NOT NULL,
            stored_at REAL NOT NULL,
            last_used INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            UNIQUE (method, path, query, account)
        );
        CREATE INDEX answers_by_use ON answers (last_used, bytes);
        CREATE TABLE outbox (
            id TEXT PRIMARY KEY NOT NULL,
            position INTEGER NOT NULL UNIQUE,
            method TEXT NOT NULL,
            path TEXT NOT NULL,
            query BLOB NOT NULL,
            headers BLOB NOT NULL,
            body BLOB NOT NULL,
            idempotency_key TEXT NOT NULL,
            created_at REAL NOT NULL,
            state TEXT NOT NULL
        );
        PRAGMA user_version = 1;
        PRAGMA application_id = 1148219252;
        """

    /// A test-only next version (one past the current schema): a column added to the outbox
    /// and an index.
    static let version2 = SchemaMigration(
        version: StoreSchema.currentVersion + 1,
        sql: """
            ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
            CREATE INDEX outbox_by_state ON outbox (state, position);
            """
    )

    /// A version-1 file written the way the first release wrote it, with one answer and one
    /// queued write.
    private func makeVersion1File(at url: URL) throws {
        try rawSQLite(
            url,
            Self.frozenVersion1
                + """
                PRAGMA journal_mode = WAL;
                INSERT INTO answers (method, path, query, account, status, headers, body, varying,
                    stored_at, last_used, bytes)
                VALUES ('GET', '/posts/1', x'', 'alice', 200, x'', x'7b7d', x'', 1000, 1, 2);
                INSERT INTO outbox (id, position, method, path, query, headers, body, idempotency_key,
                    created_at, state)
                VALUES ('e1', 1, 'POST', '/posts', x'', x'', x'7b7d', 'key-1', 1000, 'queued');
                """
        )
    }

    @Test("the frozen first version matches StoreSchema's first step")
    func frozenMatchesSource() {
        #expect(StoreSchema.migrations.first?.version == 1)
        #expect(StoreSchema.applicationID == 1_148_219_252)
        let squeeze = { (sql: String) in sql.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        #expect(squeeze(Self.frozenVersion1).hasPrefix(squeeze(StoreSchema.version1.sql)))
    }

    @Test("migration versions run 1, 2, 3, … without gaps")
    func versionsAreContiguous() {
        #expect(StoreSchema.migrations.map(\.version) == Array(1...StoreSchema.migrations.count))
    }

    @Test("a version-1 file opens with the current code and keeps its data")
    func version1OpensWithCurrentCode() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("v1.sqlite")
        try makeVersion1File(at: url)
        let store = try OfflineStore(at: url)
        #expect(try store.fileVersion == OfflineStore.schemaVersion)
        #expect(try store.integer("SELECT count(*) FROM answers WHERE account = 'alice'") == 1)
        #expect(try store.integer("SELECT count(*) FROM outbox WHERE idempotency_key = 'key-1'") == 1)
        #expect(try store.integrityCheck() == ["ok"])
        // Version 2's refusal columns exist and are empty for the queued write.
        #expect(try store.integer("SELECT count(*) FROM outbox WHERE refused_status IS NULL") == 1)
        #expect(try store.outbox.entries().map(\.idempotencyKey) == ["key-1"])
        // Version 3's totals start from the answers the file had.
        #expect(try store.integer("SELECT count FROM answer_totals") == 1)
        #expect(try store.integer("SELECT bytes FROM answer_totals") == 2)
        // Version 6 keeps no typed resource for the old write: its path is read as one.
        #expect(try store.integer("SELECT count(*) FROM outbox WHERE addressed IS NULL") == 1)
        #expect(try store.outbox.entries().map(\.resource) == [.collection(["posts"])])
    }

    @Test("a version-1 file is upgraded through every version in place, its rows kept")
    func upgradeFromVersion1() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("v1.sqlite")
        try makeVersion1File(at: url)
        let store = try OfflineStore(at: url, migrations: StoreSchema.migrations + [Self.version2])
        #expect(try store.fileVersion == Self.version2.version)
        #expect(try store.integer("SELECT attempts FROM outbox WHERE id = 'e1'") == 0)
        #expect(try store.integer("SELECT count(*) FROM sqlite_master WHERE name = 'outbox_by_state'") == 1)
        #expect(try store.integer("SELECT count(*) FROM answers") == 1)
        // Reopening at version 2 runs nothing again.
        let again = try OfflineStore(at: url, migrations: StoreSchema.migrations + [Self.version2])
        #expect(try again.fileVersion == Self.version2.version)
    }

    @Test("a store the code created at version 1 is upgraded the same way")
    func upgradeFromStoreCreatedAtVersion1() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        do {
            let store = try OfflineStore(at: url, migrations: [StoreSchema.version1])
            try store.addOutboxRow(id: "e1", position: 1)
        }
        let store = try OfflineStore(at: url, migrations: StoreSchema.migrations + [Self.version2])
        #expect(try store.fileVersion == Self.version2.version)
        #expect(try store.integer("SELECT attempts FROM outbox WHERE id = 'e1'") == 0)
    }

    @Test("a failing migration rolls back: the file keeps version 1 and its data, and still opens")
    func failingMigrationRollsBack() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("v1.sqlite")
        try makeVersion1File(at: url)
        let broken = SchemaMigration(
            version: 2,
            sql: "ALTER TABLE outbox ADD COLUMN attempts INTEGER; CREATE TABLE answers (id INTEGER)"
        )
        let error = offlineStoreError {
            _ = try OfflineStore(at: url, migrations: [StoreSchema.version1, broken])
        }
        #expect(error?.kind == .sqlite)
        #expect(error?.description.contains(url.filePath) == true)
        let store = try OfflineStore(at: url, migrations: [StoreSchema.version1])
        #expect(try store.fileVersion == 1)
        #expect(
            try store.integer("SELECT count(*) FROM pragma_table_info('outbox') WHERE name = 'attempts'") == 0
        )
        #expect(try store.integer("SELECT count(*) FROM outbox") == 1)
    }
}
