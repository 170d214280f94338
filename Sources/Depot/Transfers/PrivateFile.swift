import Foundation

/// The files Depot writes for itself: a download's partial file and validator, a multipart
/// form's temporary body. Each is created with `open(2)` and `O_CREAT | O_EXCL | O_NOFOLLOW`,
/// readable and writable by the user only (`0600`), and reopened with `O_NOFOLLOW`; so a
/// symbolic link planted at such a path (in a shared folder, say) is refused, never
/// written, read or removed through.
enum PrivateFile {
    /// Why a file could not be opened or removed.
    enum Failure: Error {
        /// A symbolic link, or anything else but a regular file, stands at the path.
        case notAFile
        /// Something already stands at the path of a file to create.
        case exists
        /// Any other refusal, with its `errno`.
        case system(Int32)

        /// A short phrase for an error message.
        var reason: String {
            switch self {
            case .notAFile: "it is a symbolic link or not a regular file"
            case .exists: "something else is already there"
            case .system(let code): String(cString: strerror(code))
            }
        }
    }

    /// The mode of every file created here: the user's alone.
    static let mode: mode_t = 0o600

    /// Creates the file at `url` for writing, `0600`; fails when anything stands there.
    static func create(_ url: URL) throws(Failure) -> FileHandle {
        FileHandle(
            fileDescriptor: try descriptor(url, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC),
            closeOnDealloc: true)
    }

    /// Opens the regular file at `url` for writing (its mode made `0600`), never through a link.
    static func openForWriting(_ url: URL) throws(Failure) -> FileHandle {
        let handle = FileHandle(
            fileDescriptor: try descriptor(url, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
            closeOnDealloc: true)
        _ = fchmod(handle.fileDescriptor, mode)
        return handle
    }

    /// At most `limit` bytes of the regular file at `url`, read never through a link; `nil`
    /// when there is none or it cannot be read.
    static func read(_ url: URL, upTo limit: Int) -> Data? {
        guard let fd = try? descriptor(url, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) else {
            return nil
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        return try? handle.read(upToCount: limit) ?? Data()
    }

    /// The size of the regular file at `url` (without following a link); `nil` when nothing
    /// is there.
    ///
    /// - Throws: ``Failure/notAFile`` when a link or anything but a regular file is there.
    static func size(at url: URL) throws(Failure) -> Int64? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw .system(code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notAFile }
        return Int64(info.st_size)
    }

    /// Removes the regular file at `url`; a link or anything else stays (and is reported).
    /// Nothing there is no failure.
    static func remove(_ url: URL) throws(Failure) {
        guard try size(at: url) != nil else { return }
        if unlink(url.path) != 0, errno != ENOENT { throw .system(errno) }
    }

    /// Copies `source` into a new file at `url`, in slices of a megabyte.
    static func copy(_ source: URL, to url: URL) throws {
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        let output = try create(url)
        defer { try? output.close() }
        while let slice = try input.read(upToCount: 1 << 20), !slice.isEmpty {
            try output.write(contentsOf: slice)
        }
    }

    /// Opens `url` with `flags` (mode `0600` when it creates): a regular file only.
    private static func descriptor(_ url: URL, _ flags: Int32) throws(Failure) -> Int32 {
        let fd = open(url.path, flags, mode)
        guard fd >= 0 else {
            let code = errno
            // `O_NOFOLLOW` on a link: `ELOOP` (Linux, Apple), `EMLINK` (FreeBSD).
            if code == ELOOP || code == EMLINK { throw .notAFile }
            throw code == EEXIST ? .exists : .system(code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notAFile
        }
        return fd
    }
}
