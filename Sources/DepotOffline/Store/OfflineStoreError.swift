import Foundation

/// Why an ``OfflineStore`` could not open its file or could not read or write it.
///
/// Thrown by ``OfflineStore/init(at:)`` when the file is not a store (plain text, random
/// bytes, zeros, another app's SQLite database), is corrupt or truncated, or was written by a
/// newer version of DepotOffline; and by the store's other calls when SQLite fails (a full
/// disk, a locked file, an I/O error). It always names the file, so the message alone tells
/// a user or a log reader which file to look at; an app that meets ``Kind/notADatabase``,
/// ``Kind/foreignDatabase`` or ``Kind/corrupt`` typically calls ``OfflineStore/remove(at:)``
/// and opens a fresh store, since what the file held was only a copy of the server's data and
/// writes not yet sent.
public struct OfflineStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, to decide what to do next (start afresh, update the app, retry).
    public enum Kind: Sendable, Hashable {
        /// The file is not an SQLite database at all (text, random bytes, zeros, a header cut
        /// short): start afresh with ``OfflineStore/remove(at:)``.
        case notADatabase
        /// The file is an SQLite database, but not an offline store: another app's schema.
        /// DepotOffline never changes such a file; choose another path, or remove it if it is
        /// yours to remove.
        case foreignDatabase
        /// The file is a store, but damaged or truncated (SQLite or its own check found pages
        /// missing or inconsistent): start afresh with ``OfflineStore/remove(at:)``.
        case corrupt
        /// The store was written by a newer DepotOffline whose schema version (`found`) this
        /// code does not know (it knows up to `supported`); the file is left as it is, so the
        /// newer app can still read it.
        case newerVersion(found: Int, supported: Int)
        /// The file could not be opened or created (a missing folder, no permission).
        case cannotOpen
        /// A file operation outside SQLite failed (removing the files, file protection).
        case fileSystem
        /// The outbox already holds `limit` writes (``OfflinePolicy/maxQueuedWrites``): a write
        /// is not queued until replays or the app's ``Outbox/discard(_:)`` make room.
        case outboxFull(limit: Int)
        /// Any other SQLite failure (I/O error, full disk, a lock held too long): usually
        /// worth a retry later.
        case sqlite
    }

    /// What went wrong.
    public var kind: Kind
    /// The path of the store's file.
    public var path: String
    /// SQLite's extended result code, when SQLite reported the failure; `nil` when the
    /// refusal is DepotOffline's own (a foreign schema, a newer version).
    public var resultCode: Int32?
    /// What SQLite or DepotOffline said about it.
    public var message: String

    /// An error about the file at `path`.
    public init(_ kind: Kind, path: String, resultCode: Int32? = nil, message: String) {
        self.kind = kind
        self.path = path
        self.resultCode = resultCode
        self.message = message
    }

    /// A sentence naming the file, what is wrong with it and SQLite's own words.
    public var description: String {
        var text = "offline store at \(path): \(summary): \(message)"
        if let resultCode { text += " (SQLite result code \(resultCode))" }
        return text
    }

    private var summary: String {
        switch kind {
        case .notADatabase: return "not an SQLite database"
        case .foreignDatabase: return "an SQLite database that is not an offline store"
        case .corrupt: return "the file is corrupt"
        case .newerVersion(let found, let supported):
            return "schema version \(found) is newer than this code knows (\(supported))"
        case .cannotOpen: return "cannot open the file"
        case .fileSystem: return "file operation failed"
        case .outboxFull(let limit): return "the outbox is full (\(limit) writes)"
        case .sqlite: return "SQLite failed"
        }
    }
}
