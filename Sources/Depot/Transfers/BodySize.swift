import Foundation

extension BackendRequest {
    /// The bytes of the body: ``body``'s, or the size of ``bodyFile`` (0 when it cannot
    /// be read). What a log reports.
    var bodySize: Int {
        guard let bodyFile else { return body?.count ?? 0 }
        return Int(clamping: FileSize.of(bodyFile) ?? 0)
    }
}

extension BackendResponse {
    /// The bytes of the body: ``body``'s, or the size of ``file`` for a download.
    var bodySize: Int {
        guard let file else { return body.count }
        return Int(clamping: FileSize.of(file) ?? 0)
    }
}

/// The one reader of a file's size on disk, for logs, progress and body files.
enum FileSize {
    /// The attributes of the file at `url`: the file a symbolic link points at, not the link.
    static func attributes(of url: URL) throws -> [FileAttributeKey: Any] {
        try FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
    }

    /// The size of the file at `url`, or `nil` when there is none to read.
    static func of(_ url: URL) -> Int64? {
        guard let size = (try? attributes(of: url))?[.size] as? NSNumber else { return nil }
        return size.int64Value
    }
}
