import Foundation

/// Where a multipart form with file parts is written before it is sent
/// (``RequestBody/multipart(_:)``): a folder of the user's own under the temporary
/// directory, `depot-multipart-<uid>` (`0700`), holding one file per call,
/// `form-<pid>-<random>` (`0600`), which the call removes when it ends.
///
/// The first file a process asks for sweeps the folder first: it removes the files of processes
/// that are gone (`kill(pid, 0)` answers `ESRCH`) and those named with this process's own pid,
/// which an earlier process with the same pid wrote. A live process's file is never removed
/// (pid namespaces that share the folder: see the article *Transfers*).
final class MultipartTemporaries: Sendable {
    /// The folder every multipart call of this process uses.
    static let shared = MultipartTemporaries(
        folder: FileManager.default.temporaryDirectory.appendingPathComponent("depot-multipart-\(getuid())"))

    /// The prefix of every file in the folder.
    static let prefix = "form-"

    let folder: URL
    private let swept = Locked(false)

    init(folder: URL) {
        self.folder = folder
    }

    /// The path of a new temporary file (not created yet), in the folder made ready (and
    /// swept, the first time).
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when the folder cannot be created, or
    ///   what stands at its path is not a folder of this user's.
    func newFile() throws(ServiceError) -> URL {
        try prepareFolder()
        swept.withLock { swept in
            if !swept { sweep() }
            swept = true
        }
        let name = Self.prefix + "\(getpid())-" + UUID().uuidString
        return folder.appendingPathComponent(name)
    }

    /// Creates the folder `0700`, or checks that the one there is a folder (not a link) of
    /// this user's, and makes it `0700`.
    private func prepareFolder() throws(ServiceError) {
        if mkdir(folder.path, 0o700) == 0 { return }
        let code = errno
        var info = stat()
        guard code == EEXIST, lstat(folder.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
            info.st_uid == getuid()
        else {
            let reason =
                code == EEXIST ? "it is not a folder of this user's" : String(cString: strerror(code))
            throw .invalidRequest("cannot use the folder \(folder.path) for multipart bodies: \(reason)")
        }
        if info.st_mode & 0o077 != 0 { _ = chmod(folder.path, 0o700) }
    }

    /// Removes the files of processes that are gone, and those of an earlier process with
    /// this one's pid.
    private func sweep() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let own = getpid()
        for name in names where name.hasPrefix(Self.prefix) {
            guard let pid = pid_t(name.dropFirst(Self.prefix.count).prefix { $0 != "-" }), pid > 0 else {
                continue
            }
            if pid == own || (kill(pid, 0) != 0 && errno == ESRCH) {
                try? PrivateFile.remove(folder.appendingPathComponent(name))
            }
        }
    }
}
