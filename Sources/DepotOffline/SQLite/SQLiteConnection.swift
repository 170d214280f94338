import CSQLite
import Depot
import Foundation

/// A value bound to a statement's parameter.
enum SQLiteValue: Sendable, Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case null
}

/// SQLite's `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the bind call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One open SQLite connection, its prepared statements cached by SQL text.
///
/// Not thread-safe on its own: ``SQLiteDatabase`` hands it out only while holding its lock,
/// so a cached statement is never bound or stepped by two threads at once. Every result code
/// is checked and turned into an ``OfflineStoreError`` that names the file.
final class SQLiteConnection {
    /// The file's path, for errors.
    let path: String
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (`create`: or creates) the file at `path`. SQLite reads nothing yet: a file
    /// that is not a database fails at the first statement, not here.
    init(path: String, create: Bool) throws(OfflineStoreError) {
        self.path = path
        // NOFOLLOW: a symbolic link in the file's place is refused, never written through.
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
        if create { flags |= SQLITE_OPEN_CREATE }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            // SQLITE_OPEN_FILEPROTECTION_COMPLETEUNTILFIRSTUSERAUTHENTICATION (Apple's SQLite):
            // the file and its -wal and -shm companions are readable once the device has been
            // unlocked after a restart, so a background refresh can still use them.
            flags |= 0x0030_0000
        #endif
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else {
            throw OfflineStoreError(
                .cannotOpen, path: path, resultCode: code, message: String(cString: sqlite3_errstr(code)))
        }
        // Checked before `handle` is set: once every property is, a throwing init runs
        // `deinit`, which would close the handle a second time.
        guard code == SQLITE_OK else {
            let error = Self.error(code: code, handle: opened, path: path)
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(handle)
    }

    /// Waits up to `milliseconds` for another connection's lock before failing with
    /// `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) throws(OfflineStoreError) {
        try check(sqlite3_busy_timeout(handle, milliseconds))
    }

    /// Runs `sql` (one or more statements, no parameters, no cached statement): for schema
    /// changes and pragmas run once.
    func executeScript(_ sql: String) throws(OfflineStoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code != SQLITE_OK else { return }
        var error = Self.error(code: code, handle: handle, path: path)
        if let message {
            error.message = String(cString: message)
            sqlite3_free(message)
        }
        throw error
    }

    /// Runs one statement with `values` bound to its parameters, ignoring any rows.
    func execute(_ sql: String, _ values: [SQLiteValue] = []) throws(OfflineStoreError) {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
    }

    /// Runs one query with `values` bound, turning each row into a value with `row`.
    func query<T>(
        _ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws(OfflineStoreError) -> T
    ) throws(OfflineStoreError) -> [T] {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [T] = []
        while try statement.step() { rows.append(try row(statement)) }
        return rows
    }

    /// Runs one query with `values` bound, calling `body` with each row until it returns
    /// `false` or the rows run out.
    func forEachRow(
        _ sql: String, _ values: [SQLiteValue] = [],
        _ body: (SQLiteStatement) throws(OfflineStoreError) -> Bool
    ) throws(OfflineStoreError) {
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {
            guard try body(statement) else { return }
        }
    }

    /// The first column of the first row of a query, as an integer; `nil` without rows.
    func integer(_ sql: String, _ values: [SQLiteValue] = []) throws(OfflineStoreError) -> Int64? {
        try query(sql, values) { statement throws(OfflineStoreError) in statement.integer(0) }.first
    }

    /// The first column of each row of a query, as text.
    func texts(_ sql: String, _ values: [SQLiteValue] = []) throws(OfflineStoreError) -> [String] {
        try query(sql, values) { statement throws(OfflineStoreError) in statement.text(0) }
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`, so the write lock is taken at once
    /// and a busy file fails at the start rather than at the commit); rolls back when `body`
    /// or the commit throws.
    ///
    /// A `durable` transaction (the default) is synced to disk before it returns
    /// (`synchronous=FULL`): it survives a crash and a power loss. One that is not (stored
    /// answers, recency) commits with `synchronous=NORMAL`: it survives the app being killed,
    /// and after a power loss the file is still sound but may have lost it; the next durable
    /// commit syncs it along with its own.
    func transaction<T>(
        durable: Bool = true, _ body: () throws(OfflineStoreError) -> T
    ) throws(OfflineStoreError) -> T {
        if !durable { try execute("PRAGMA synchronous = NORMAL") }
        defer { if !durable { try? execute("PRAGMA synchronous = FULL") } }
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Copies every page of the write-ahead log into the file and truncates the log to
    /// nothing (`PRAGMA wal_checkpoint(TRUNCATE)`), so none of the pages it held, removed
    /// rows' included, stays in it.
    ///
    /// - Throws: ``OfflineStoreError/Kind/sqlite`` with `SQLITE_BUSY` when another connection
    ///   (another process's store) kept it from finishing within the busy timeout, by reading
    ///   from the log or writing to the file, or ran a checkpoint of its own: SQLite reports
    ///   that in the pragma's result row, not as an error, copies back what it can and leaves
    ///   the log's frames in it, removed pages included.
    func emptyLog() throws(OfflineStoreError) {
        guard try integer("PRAGMA wal_checkpoint(TRUNCATE)") == 0 else {
            throw OfflineStoreError(
                .sqlite, path: path, resultCode: SQLITE_BUSY,
                message: "another connection is using the file: its write-ahead log could not be emptied")
        }
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    var changes: Int {
        Int(sqlite3_changes(handle))
    }

    /// The statement for `sql`, prepared once and reused.
    private func prepared(_ sql: String) throws(OfflineStoreError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        try check(code)
        guard let prepared else {
            throw OfflineStoreError(.sqlite, path: path, message: "no statement in \(sql)")
        }
        let statement = SQLiteStatement(handle: prepared, connection: handle, path: path)
        statements[sql] = statement
        return statement
    }

    /// Throws the error for `code` unless it is `SQLITE_OK`.
    func check(_ code: Int32) throws(OfflineStoreError) {
        guard code != SQLITE_OK else { return }
        throw Self.error(code: code, handle: handle, path: path)
    }

    /// The error for a result code: its kind from the primary code, SQLite's message.
    static func error(code: Int32, handle: OpaquePointer?, path: String) -> OfflineStoreError {
        let kind: OfflineStoreError.Kind
        switch code & 0xFF {
        case SQLITE_NOTADB: kind = .notADatabase
        case SQLITE_CORRUPT: kind = .corrupt
        case SQLITE_CANTOPEN: kind = .cannotOpen
        default: kind = .sqlite
        }
        var message = String(cString: sqlite3_errstr(code))
        if let handle, sqlite3_errcode(handle) == code, let text = sqlite3_errmsg(handle) {
            message = String(cString: text)
        }
        return OfflineStoreError(kind, path: path, resultCode: code, message: message)
    }
}

/// A prepared statement: bind, step, read columns, reset.
///
/// Owned by its ``SQLiteConnection`` (which finalizes it) and used only under its lock.
final class SQLiteStatement {
    fileprivate let handle: OpaquePointer
    private let connection: OpaquePointer
    private let path: String

    fileprivate init(handle: OpaquePointer, connection: OpaquePointer, path: String) {
        self.handle = handle
        self.connection = connection
        self.path = path
    }

    /// Binds `values` to parameters 1, 2, …
    func bind(_ values: [SQLiteValue]) throws(OfflineStoreError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let integer): code = sqlite3_bind_int64(handle, index, integer)
            case .real(let real): code = sqlite3_bind_double(handle, index, real)
            case .null: code = sqlite3_bind_null(handle, index)
            case .text(let text):
                var text = text
                code = text.withUTF8 { bytes in
                    // A null pointer would bind SQL NULL: the empty string binds a literal.
                    guard let base = bytes.baseAddress, bytes.count > 0 else {
                        return sqlite3_bind_text(handle, index, "", 0, transient)
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
                        sqlite3_bind_text64(
                            handle, index, chars, sqlite3_uint64(bytes.count), transient, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let data):
                code = data.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress, bytes.count > 0 else {
                        return sqlite3_bind_zeroblob(handle, index, 0)
                    }
                    return sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(bytes.count), transient)
                }
            }
            try check(code)
        }
    }

    /// Steps once: `true` with a row to read, `false` when done.
    func step() throws(OfflineStoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteConnection.error(code: code, handle: connection, path: path)
        }
    }

    /// Makes the statement ready to run again and releases its bound values.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Whether column `index` of the current row is SQL `NULL`.
    func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Column `index` of the current row as an integer.
    func integer(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` of the current row as a floating-point number.
    func real(_ index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    /// Column `index` of the current row as text (empty for `NULL`).
    func text(_ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes (empty for `NULL` or an empty blob).
    func blob(_ index: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        let count = Int(sqlite3_column_bytes(handle, index))
        return Data(bytes: bytes, count: count)
    }

    private func check(_ code: Int32) throws(OfflineStoreError) {
        guard code != SQLITE_OK else { return }
        throw SQLiteConnection.error(code: code, handle: connection, path: path)
    }
}

/// A connection shared between threads: every use holds one lock, so the connection's cached
/// statements are never used by two threads at once (the connection is also opened with
/// `SQLITE_OPEN_FULLMUTEX`, so SQLite's own state is safe either way).
final class SQLiteDatabase: @unchecked Sendable {
    /// The file's path, for errors.
    let path: String
    // Touched only inside `withConnection`, under the lock, and never handed out: that rule,
    // not the compiler, makes sharing the class safe (`Locked` is sendable whatever it guards).
    private let connection: Locked<SQLiteConnection>

    /// Shares `connection`; nothing else may keep a reference to it.
    init(_ connection: SQLiteConnection) {
        self.connection = Locked(connection)
        path = connection.path
    }

    /// Runs `body` with the connection if the lock is free at once, holding it throughout;
    /// `nil` without running `body` when another thread holds it (a commit syncing to disk,
    /// say), for callers that must not wait.
    func withConnectionIfFree<T>(
        _ body: (SQLiteConnection) throws(OfflineStoreError) -> T
    ) throws(OfflineStoreError) -> T? {
        try connection.withLockIfAvailable { connection throws(OfflineStoreError) in try body(connection) }
    }

    /// Runs `body` with the connection, holding the lock throughout.
    func withConnection<T>(
        _ body: (SQLiteConnection) throws(OfflineStoreError) -> T
    ) throws(OfflineStoreError) -> T {
        try connection.withLock { connection throws(OfflineStoreError) in try body(connection) }
    }
}
