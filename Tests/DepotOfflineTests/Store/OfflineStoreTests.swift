import Foundation
import Testing

@testable import DepotOffline

@Suite("OfflineStore: file, schema, removal")
struct OfflineStoreTests {
    @Test("creates the file with the current schema version, then reopens it with its data")
    func createAndReopen() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("nested/folder/depot.sqlite")
        do {
            let store = try OfflineStore(at: url)
            #expect(url.exists)
            #expect(try store.fileVersion == OfflineStore.schemaVersion)
            #expect(OfflineStore.schemaVersion == 7)
            #expect(try store.integer("PRAGMA application_id") == Int64(StoreSchema.applicationID))
            #expect(try store.integer("PRAGMA synchronous") == 2)  // FULL
            let mode = try store.database.withConnection { connection throws(OfflineStoreError) in
                try connection.texts("PRAGMA journal_mode")
            }
            #expect(mode == ["wal"])
            try store.addOutboxRow(id: "a", position: 1)
        }
        let reopened = try OfflineStore(at: url)
        #expect(try reopened.integer("SELECT count(*) FROM outbox") == 1)
        #expect(try reopened.integrityCheck() == ["ok"])
    }

    @Test("two stores on the same file see each other's writes")
    func twoConnections() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let first = try OfflineStore(at: url)
        let second = try OfflineStore(at: url)
        try first.addOutboxRow(id: "a", position: 1)
        #expect(try second.integer("SELECT count(*) FROM outbox") == 1)
    }

    @Test("a file URL that cannot be created is a cannotOpen error naming it")
    func cannotOpen() throws {
        let folder = try TemporaryFolder()
        let blocker = folder.file("blocker")
        try Data("a file, not a folder".utf8).write(to: blocker)
        let url = blocker.appending(path: "depot.sqlite")
        let error = offlineStoreError { _ = try OfflineStore(at: url) }
        #expect(error?.kind == .cannotOpen)
        #expect(error?.description.contains(folder.url.filePath) == true)
    }

    @Test("remove(at:) deletes the file and its -wal and -shm companions, and absent files are fine")
    func removeAt() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        do {
            let store = try OfflineStore(at: url)
            try store.addOutboxRow(id: "a", position: 1)
            #expect(url.companion("-wal").exists)
            #expect(url.companion("-shm").exists)
        }
        // SQLite removes the log when the last connection closes cleanly; after a crash both
        // companions stay behind, as here.
        try Data().write(to: url.companion("-wal"))
        try Data().write(to: url.companion("-shm"))
        try OfflineStore.remove(at: url)
        #expect(!url.exists)
        #expect(!url.companion("-wal").exists)
        #expect(!url.companion("-shm").exists)
        try OfflineStore.remove(at: url)
        // A fresh store opens where the old one was.
        let fresh = try OfflineStore(at: url)
        #expect(try fresh.integer("SELECT count(*) FROM outbox") == 0)
    }

    @Test("removeAll() empties the stored answers and the outbox and shrinks the file")
    func removeAll() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        for index in 0..<50 { try store.addOutboxRow(id: "\(index)", position: index, bytes: 8_000) }
        try store.sql(
            """
            INSERT INTO answers (method, path, query, account, status, headers, body, varying,
                stored_at, last_used, bytes)
            VALUES ('GET', '/posts', x'', '', 200, x'', zeroblob(100000), x'', 0, 1, 100000)
            """
        )
        try store.sql("PRAGMA wal_checkpoint(TRUNCATE)")
        let before = try FileManager.default.attributesOfItem(atPath: url.filePath)[.size] as? Int ?? 0
        try store.removeAll()
        #expect(try store.integer("SELECT count(*) FROM outbox") == 0)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
        let after = try FileManager.default.attributesOfItem(atPath: url.filePath)[.size] as? Int ?? 0
        #expect(after < before / 4)
        #expect(try store.integrityCheck() == ["ok"])
        // Still usable afterwards.
        try store.addOutboxRow(id: "again", position: 1)
        #expect(try store.integer("SELECT count(*) FROM outbox") == 1)
    }

    @Test("8 tasks writing and reading at once: every write lands, the file stays sound")
    func concurrentUse() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<100 {
                        try store.addOutboxRow(id: "\(task)-\(index)", position: task * 1_000 + index)
                        _ = try store.integer("SELECT count(*) FROM outbox")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.integer("SELECT count(*) FROM outbox") == 800)
        #expect(try store.integrityCheck() == ["ok"])
    }
}

@Suite("OfflineStore: paths SQLite cannot open")
struct OfflineStorePathTests {
    @Test("a folder where the file should be is refused naming the path")
    func folderAtPath() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let error = offlineStoreError { _ = try OfflineStore(at: url) }
        #expect(error?.kind == .cannotOpen, "\(String(describing: error))")
        #expect(error?.description.contains(url.filePath) == true)
    }
}
