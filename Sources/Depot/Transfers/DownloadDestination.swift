import Foundation

/// Where a download's answer goes on disk, and whether a transfer that was cut may
/// resume: the value of ``BackendRequest/destination``.
///
/// The answer is written to a partial file beside ``file`` (so the move into place is
/// a rename on the same volume) and moved there only once every byte arrived, replacing
/// what was there; a missing folder is created. So ``file`` never holds half a download,
/// nor an error page: an error status reaches the caller as its ``ServiceError`` and
/// leaves no file.
///
/// **Cancelling** removes the partial file. **A cut** (the connection lost, a timeout, a
/// 5xx) removes it too, unless the download is ``resumable``: then the bytes received
/// and the answer's validator (a strong `ETag`, else `Last-Modified`) stay on disk
/// beside ``file``, and the next download to the same file, a retry's included, asks
/// only for the rest (`Range: bytes=N-` with `If-Range`). A server that answers `206`
/// for that range continues the file; one that ignores ranges, or whose resource changed
/// since, answers `200` and the download starts over, as it must. An answer without a
/// validator is never resumed (there would be no way to tell that the rest belongs to
/// the same bytes), and a resumable download asks for the answer uncompressed
/// (`Accept-Encoding: identity`) so that byte ranges address the file as stored.
///
/// One resumable download at a time per file: a second one to a file that a resumable
/// download in this process is still writing fails at once with
/// ``ServiceError/invalidRequest(_:)``. Plain downloads each write a partial file of their
/// own, so several may run at once; the last to complete is the file.
///
/// A resumable download sets `Range` itself when it resumes, in place of one the request
/// carries; the backend's `timeout` bounds each attempt as a whole, so give long downloads
/// a backend with a long timeout (or none) rather than relying on retries.
public struct DownloadDestination: Sendable, Hashable {
    /// The file the complete answer is moved to (a `file:` URL).
    public var file: URL
    /// Whether a cut transfer keeps its bytes to resume from.
    public var resumable: Bool

    /// A destination at `file`; see ``resumable``.
    public init(_ file: URL, resumable: Bool = false) {
        self.file = file
        self.resumable = resumable
    }

    /// Checks that ``file`` can be a download's destination: a `file:` URL with a name,
    /// and not a folder.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` saying what is wrong.
    func validate() throws(ServiceError) {
        guard file.isFileURL, !file.lastPathComponent.isEmpty, file.lastPathComponent != "/" else {
            throw .invalidRequest(
                "the download destination \(file.absoluteString.prefix(200)) is not a file URL")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), isFolder.boolValue {
            throw .invalidRequest("the download destination \(file.path) is a folder")
        }
    }
}
