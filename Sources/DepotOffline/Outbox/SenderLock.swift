import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one-sender rule across processes: an exclusive `flock(2)` on a file beside the store
/// (`<store>-sender.lock`), held for the whole of a replay.
///
/// An app and its extension may open one store file at once; without this, both could send
/// the same queued entry. The lock belongs to the open file, so the kernel releases it when
/// the process ends in any way, `kill -9` included: a crashed sender never blocks the next
/// one. Two ``OfflineStore``s on one file in one process exclude each other the same way,
/// since each opens the lock file for itself.
final class SenderLock: @unchecked Sendable {
    /// The lock file's path.
    let path: String
    // Guarded by `lock`: the descriptor, open while the lock is held.
    private var descriptor: Int32 = -1
    private let lock = NSLock()

    /// The lock of the store whose file is at `storePath`.
    init(storePath: String) {
        path = storePath + Self.suffix
    }

    /// What the lock file's name adds to the store's.
    static let suffix = "-sender.lock"

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Takes the lock if no other sender holds it: `true` when taken (call ``release()``
    /// after), `false` when another one holds it.
    ///
    /// - Throws: ``OfflineStoreError/Kind/fileSystem`` when the lock file cannot be opened
    ///   (created 0600; a symbolic link in its place is refused).
    func tryAcquire() throws(OfflineStoreError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        // Held through this value already: a second taker waits like any other.
        guard descriptor < 0 else { return false }
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard opened >= 0 else {
            let code = errno
            throw OfflineStoreError(
                .fileSystem, path: path,
                message: "cannot open the sender lock: \(String(cString: strerror(code)))")
        }
        while true {
            if flock(opened, LOCK_EX | LOCK_NB) == 0 {
                descriptor = opened
                return true
            }
            let code = errno
            if code == EINTR { continue }
            close(opened)
            if code == EWOULDBLOCK { return false }
            throw OfflineStoreError(
                .fileSystem, path: path,
                message: "cannot lock the sender lock: \(String(cString: strerror(code)))")
        }
    }

    /// Takes the lock, waiting while another process (or another store on the file) holds
    /// it: checked again after 5 ms, then after twice as long each time, up to a quarter of
    /// a second between checks.
    func acquire() async throws(OfflineStoreError) {
        var pause: UInt64 = 5_000_000
        while try !tryAcquire() {
            try? await Task.sleep(nanoseconds: pause)
            pause = min(pause * 2, 250_000_000)
        }
    }

    /// Releases the lock taken by ``tryAcquire()`` or ``acquire()``.
    func release() {
        lock.lock()
        defer { lock.unlock() }
        guard descriptor >= 0 else { return }
        // Closing the descriptor releases the lock; the file stays for the next sender.
        close(descriptor)
        descriptor = -1
    }
}
