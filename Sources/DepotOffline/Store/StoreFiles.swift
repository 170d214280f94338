import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The files of a store on disk: created private before SQLite opens them.
enum StoreFiles {
    /// What the store's companions add to its file's name: SQLite's log, shared memory and
    /// rollback journal.
    static let suffixes = ["", "-wal", "-shm", "-journal"]

    /// Makes the folder (`0700`, when missing) and the file (`0600`, when missing) at `path`,
    /// and takes away others' access from an existing file and its companions.
    ///
    /// SQLite creates `-wal` and `-shm` with the main file's mode, so a `0600` file keeps
    /// them private too, whatever the process's umask.
    static func prepare(path: String) throws(OfflineStoreError) {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw OfflineStoreError(
                    .cannotOpen, path: path, message: "cannot create its folder: \(error)")
            }
        }
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if created >= 0 {
            close(created)
            return
        }
        let code = errno
        guard code == EEXIST else {
            if code == ELOOP {
                throw OfflineStoreError(
                    .cannotOpen, path: path, message: "a symbolic link, which the store does not follow")
            }
            throw OfflineStoreError(
                .cannotOpen, path: path, message: "cannot create the file: \(String(cString: strerror(code)))"
            )
        }
        // A store made by an older version, or copied in: readable by its owner only from now
        // (opened without following a link, and changed through that descriptor).
        for suffix in suffixes {
            let file = open(path + suffix, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard file >= 0 else {
                let code = errno
                if code == ENOENT { continue }
                throw OfflineStoreError(
                    .cannotOpen, path: path + suffix,
                    message: code == ELOOP
                        ? "a symbolic link, which the store does not follow"
                        : "cannot open it: \(String(cString: strerror(code)))")
            }
            defer { close(file) }
            var info = stat()
            guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0,
                info.st_uid == getuid()
            else { continue }
            guard fchmod(file, info.st_mode & 0o700) == 0 else {
                let code = errno
                throw OfflineStoreError(
                    .fileSystem, path: path + suffix,
                    message: "cannot make the file private: \(String(cString: strerror(code)))")
            }
        }
    }
}
