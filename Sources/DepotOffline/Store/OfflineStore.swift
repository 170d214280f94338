import Dispatch
import Foundation

/// One SQLite file that keeps what an app needs while the network is down: stored responses to
/// reads and the outbox of queued writes.
///
/// ```swift
/// let store = try OfflineStore(at: appSupport.appending(path: "depot.sqlite"))
/// ```
///
/// Open one store per file and share it: it is safe to use from any thread or task (every
/// call holds the store's lock around its one connection). The file is in WAL mode with
/// `synchronous=FULL`, so a write the store has returned from survives the app being killed
/// and the device losing power. It is private: a folder the store creates is `0700`, the file
/// and its companions `0600` (made so when an older store had them readable by others). On iOS, tvOS, watchOS and visionOS the files are protected
/// until the device is first unlocked after a restart (`completeUntilFirstUserAuthentication`),
/// so background work can still read them.
///
/// The schema is versioned (`PRAGMA user_version`) and upgraded in place, in one transaction,
/// when a newer DepotOffline opens an older file. A file that is not a store (not SQLite,
/// another app's database, corrupt or truncated, or written by a newer DepotOffline) is
/// refused with an ``OfflineStoreError`` naming its path and left untouched; an app usually
/// answers it with ``remove(at:)`` and a fresh store, since the file only held copies and
/// unsent writes.
///
/// It keeps stored responses (``OfflineResponseStorage``, which the `.offline(store)` middleware
/// uses) and queued writes (``outbox``, an ``Outbox``: see there for what is stored, the
/// order and replay rules, and ``Depot/ServiceError/queued(_:)``).
public final class OfflineStore: Sendable {
    /// The store's file.
    public let url: URL
    /// The schema version this code writes (`PRAGMA user_version` of a store it opened).
    public static var schemaVersion: Int { StoreSchema.currentVersion }

    /// The connection, shared under its lock.
    let database: SQLiteDatabase
    /// The writes waiting to be sent: see ``Outbox``.
    public let outbox: Outbox
    /// Sends the outbox's writes through the chain of the `.offline(store)` middleware, and
    /// replays them: one per store, whichever middleware uses it (see ``OutboxReplayer``).
    let replayer: OutboxReplayer
    /// The serial queue stored responses are written on, off their callers' paths (see
    /// ``ResponseWriter``).
    let responseQueue = DispatchQueue(label: "depot.offline.responses")
    /// Writes stored responses in batches on ``responseQueue``.
    let responseWriter: ResponseWriter

    /// Opens the store at `url`, creating the file (and its folder) when missing and
    /// upgrading an older schema.
    ///
    /// - Throws: ``OfflineStoreError`` naming the path: ``OfflineStoreError/Kind/notADatabase``,
    ///   ``OfflineStoreError/Kind/foreignDatabase``, ``OfflineStoreError/Kind/corrupt`` or
    ///   ``OfflineStoreError/Kind/newerVersion(found:supported:)`` for a file that is not a
    ///   store this code can use (it is left unchanged), ``OfflineStoreError/Kind/cannotOpen``
    ///   when the file cannot be created, ``OfflineStoreError/Kind/sqlite`` for other failures.
    public convenience init(at url: URL) throws(OfflineStoreError) {
        try self.init(at: url, migrations: StoreSchema.migrations)
    }

    /// Opens the store at `url` with the schema `migrations` describe (tests pass older or
    /// newer lists to exercise upgrades), writing stored responses `writeDelay` after the
    /// first of a batch.
    init(
        at url: URL, migrations: [SchemaMigration], writeDelay: DispatchTimeInterval = ResponseWriter.delay
    ) throws(OfflineStoreError) {
        self.url = url
        let path = url.path(percentEncoded: false)
        guard url.isFileURL else {
            throw OfflineStoreError(.cannotOpen, path: url.absoluteString, message: "not a file URL")
        }
        try StoreFiles.prepare(path: path)
        let connection = try SQLiteConnection(path: path, create: true)
        try Self.prepare(connection, migrations: migrations)
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            do {
                try FileManager.default.setAttributes(
                    [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
                    ofItemAtPath: path
                )
            } catch {
                throw OfflineStoreError(
                    .fileSystem, path: path, message: "cannot set file protection: \(error)")
            }
        #endif
        database = SQLiteDatabase(connection)
        outbox = try Outbox(database: database)
        replayer = OutboxReplayer(outbox: outbox)
        responseWriter = ResponseWriter(queue: responseQueue, database: database, delay: writeDelay)
        replayer.attach(to: self)
    }

    /// Opens the store at `url` as ``init(at:)`` does, writing the responses `.offline(store)`
    /// receives `writeDelay` after the first of a batch instead of a tenth of a second later:
    /// a test lengthens it to see a response that waits in memory.
    @_spi(Testing)
    public convenience init(at url: URL, writeDelay: DispatchTimeInterval) throws(OfflineStoreError) {
        try self.init(at: url, migrations: StoreSchema.migrations, writeDelay: writeDelay)
    }

    /// Checks that the file is a store (or empty), then sets the connection up and migrates.
    ///
    /// Nothing is written before the checks pass: a foreign or newer file is left as it was.
    private static func prepare(
        _ connection: SQLiteConnection, migrations: [SchemaMigration]
    ) throws(OfflineStoreError) {
        let path = connection.path
        try connection.setBusyTimeout(milliseconds: 5_000)
        // The first statements that read the file: a file that is not SQLite fails here.
        let applicationID = try connection.integer("PRAGMA application_id") ?? 0
        let version = Int(try connection.integer("PRAGMA user_version") ?? 0)
        let tables = try connection.texts("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        let latest = migrations.last?.version ?? 0
        if applicationID != Int64(StoreSchema.applicationID) {
            guard applicationID == 0, version == 0, tables.isEmpty else {
                let listed = tables.prefix(5).joined(separator: ", ")
                throw OfflineStoreError(
                    .foreignDatabase, path: path,
                    message: "application_id \(applicationID), user_version \(version), tables [\(listed)]"
                )
            }
        } else if version > latest {
            throw OfflineStoreError(
                .newerVersion(found: version, supported: latest), path: path,
                message: "written by a newer DepotOffline; left unchanged"
            )
        }
        if !tables.isEmpty {
            let problems = try connection.texts("PRAGMA quick_check")
            guard problems == ["ok"] else {
                throw OfflineStoreError(
                    .corrupt, path: path, message: problems.prefix(3).joined(separator: "; "))
            }
        }
        // WAL: readers do not block the writer, and a commit is one append to the log.
        // synchronous=FULL: the log is synced at every commit, so a committed write survives
        // power loss too (NORMAL in WAL mode may lose the last commits then).
        // secure_delete: deleted rows are overwritten with zeros, so a sent write's body or a
        // removed response leaves no bytes behind in the database file (the log keeps older
        // copies of pages until they are written over, or it is emptied: see removeAll()).
        try connection.executeScript(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON")
        #if canImport(Darwin)
            // On Apple platforms a plain fsync leaves the data in the drive's cache; F_FULLFSYNC
            // flushes it. (Elsewhere the pragma would only trade fdatasync for a slower fsync.)
            try connection.executeScript("PRAGMA fullfsync = ON")
        #endif
        try migrate(connection, from: version, with: migrations)
        if latest >= 4 { try SecretScrub.run(connection, upgradedFrom: version) }
    }

    /// Applies the steps of `migrations` newer than the file's version, in order, in one
    /// transaction with the new version and the application id.
    private static func migrate(
        _ connection: SQLiteConnection, from version: Int, with migrations: [SchemaMigration]
    ) throws(OfflineStoreError) {
        let pending = migrations.filter { $0.version > version }
        guard let latest = pending.last?.version else { return }
        try connection.transaction { () throws(OfflineStoreError) in
            // Another process may have migrated between the check and the write lock.
            let current = Int(try connection.integer("PRAGMA user_version") ?? 0)
            for step in pending where step.version > current {
                try connection.executeScript(step.sql)
            }
            if latest > current {
                try connection.executeScript(
                    "PRAGMA user_version = \(latest); PRAGMA application_id = \(StoreSchema.applicationID)")
            }
        }
    }

    /// Writes the responses `.offline(store)` received in the last tenth of a second, which
    /// wait in memory to be written together, before returning: call it when the app moves
    /// to the background or is about to exit, so that they are in the file too.
    public func flush() {
        responseWriter.flush()
    }

    /// Forgets everything the store keeps, stored responses, queued writes, the outcomes of
    /// sent ones and the ids the server gave records created offline alike, and
    /// compacts the file so the removed data no longer sits in it: for sign-out, or when
    /// another user takes over the device.
    ///
    /// Queued writes not yet sent are dropped with the rest, without ``OutboxEvent``s: replay
    /// them first when they should reach the server. A replay running meanwhile stops, and
    /// the write it was sending, if the server applies it, is recorded nowhere.
    ///
    /// - Throws: ``OfflineStoreError/Kind/sqlite`` with `resultCode` 5 (`SQLITE_BUSY`) when
    ///   another connection to the file (an extension's store, say) kept the write-ahead log
    ///   from being emptied for 5 seconds: everything is removed from the store, but the log
    ///   still holds older copies of the removed pages. Call `removeAll()` again once the other
    ///   connection is done, before the store keeps anything of the next user: it removes
    ///   whatever was stored since as well.
    public func removeAll() throws(OfflineStoreError) {
        // Responses waiting in memory, and those of reads still in flight, go too.
        responseWriter.discardAll()
        try database.withConnection { connection throws(OfflineStoreError) in
            try connection.transaction { () throws(OfflineStoreError) in
                try connection.execute("DELETE FROM answers")
                try connection.execute("DELETE FROM outbox")
                try connection.execute("DELETE FROM id_map")
                try connection.execute("DELETE FROM outbox_outcomes")
                // A replay sending meanwhile records nothing of it and stops (see `recordSent`).
                try connection.execute("DELETE FROM outbox_sender")
            }
            outbox.didRemoveAll()
            // Rewrite the file without the freed pages, then empty the log that held them.
            try connection.executeScript("VACUUM")
            try connection.emptyLog()
        }
    }

    /// Deletes the store's file at `url` and its `-wal`, `-shm` and `-journal` companions;
    /// files already absent are not an error.
    ///
    /// Call it to start afresh after ``init(at:)`` refused a file, or to delete a user's data
    /// entirely. Release every ``OfflineStore`` open on the file first: a store still open
    /// would go on writing to files no longer in the folder.
    ///
    /// - Throws: ``OfflineStoreError/Kind/fileSystem`` naming the file that could not be
    ///   removed.
    public static func remove(at url: URL) throws(OfflineStoreError) {
        let path = url.path(percentEncoded: false)
        for suffix in StoreFiles.suffixes {
            let file = path + suffix
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch let error as CocoaError where error.code == .fileNoSuchFile {
                continue
            } catch {
                guard FileManager.default.fileExists(atPath: file) else { continue }
                throw OfflineStoreError(.fileSystem, path: file, message: "cannot remove it: \(error)")
            }
        }
    }
}
