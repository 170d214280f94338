import Foundation

/// Where a download's answer goes on disk, and whether a transfer that was cut may
/// resume: the value of ``BackendRequest/destination``.
///
/// ``file`` only ever holds a complete answer: the bytes go to a partial file beside it and
/// move into place once they all arrived. A ``resumable`` download keeps the bytes of a cut
/// transfer and asks only for the rest next time (the article *Transfers*).
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
