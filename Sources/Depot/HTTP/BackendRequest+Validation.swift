import Foundation

extension BackendRequest {
    /// Checks what no backend may send or answer, so that the same request fails the
    /// same way whichever backend gets it: a `GET` or `HEAD` with a body, and a header
    /// field whose name is not an RFC 9110 token (empty, or with a space, `:`, a control
    /// or a non-ASCII character) or whose value holds CR, LF or NUL (which could split
    /// the header line and smuggle a second request).
    ///
    /// A ``bodyFile`` must be a readable regular file, and only on a request that may
    /// carry a body and has no ``body`` besides; a ``destination`` must be a `file:` URL
    /// that is not a folder, and not on a `HEAD`.
    ///
    /// ``URLSessionBackend`` and `InMemoryBackend` call it before anything else; a
    /// backend of your own should too.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` saying what is wrong.
    public func validate() throws(ServiceError) {
        if method == .get || method == .head {
            if let body, !body.isEmpty {
                throw .invalidRequest("a \(method.rawValue) request cannot carry a body")
            }
            if bodyFile != nil {
                throw .invalidRequest("a \(method.rawValue) request cannot carry a body file")
            }
        }
        if let unsafe = headers.firstUnsafeField { throw Self.unsafeField(unsafe) }
        if let bodyFile {
            if let body, !body.isEmpty {
                throw .invalidRequest("a request carries either a body or a body file, not both")
            }
            _ = try Self.size(ofBodyFile: bodyFile)
        }
        if destination != nil, method == .head {
            throw .invalidRequest("a HEAD answer has no body to download to a file")
        }
        try destination?.validate()
    }

    /// The size of the file at `url` (the file a symbolic link points at), which must be a
    /// readable regular file: the `Content-Length` of a ``bodyFile``, for a backend that
    /// streams it.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` naming the file otherwise.
    @_spi(BackendSupport)
    public static func size(ofBodyFile url: URL) throws(ServiceError) -> Int64 {
        guard url.isFileURL else {
            throw .invalidRequest("the body file \(url.absoluteString.prefix(200)) is not a file URL")
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileSize.attributes(of: url)
        } catch {
            throw .invalidRequest("the body file \(url.path) cannot be read: \(error.localizedDescription)")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular,
            FileManager.default.isReadableFile(atPath: url.path),
            let size = attributes[.size] as? NSNumber
        else {
            throw .invalidRequest("the body file \(url.path) is not a readable regular file")
        }
        return size.int64Value
    }

    /// The error for a header field that must not be sent.
    static func unsafeField(_ field: HTTPHeaders.Field) -> ServiceError {
        let name = field.name.prefix(40).debugDescription
        return .invalidRequest("the header field \(name) contains CR, LF, NUL or a bad name")
    }
}
