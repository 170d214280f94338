import Foundation

extension BackendRequest {
    /// Checks what no backend may send or answer, so that the same request fails the
    /// same way whichever backend gets it: a `GET` or `HEAD` with a body, and a header
    /// field whose name is not an RFC 9110 token (empty, or with a space, `:`, a control
    /// or a non-ASCII character) or whose value holds CR, LF or NUL (which could split
    /// the header line and smuggle a second request).
    ///
    /// ``URLSessionBackend`` and ``InMemoryBackend`` call it before anything else; a
    /// backend of your own should too.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` saying what is wrong.
    public func validate() throws(ServiceError) {
        if let body, !body.isEmpty, method == .get || method == .head {
            throw .invalidRequest("a \(method.rawValue) request cannot carry a body")
        }
        if let unsafe = headers.firstUnsafeField { throw Self.unsafeField(unsafe) }
    }

    /// The error for a header field that must not be sent.
    static func unsafeField(_ field: HTTPHeaders.Field) -> ServiceError {
        let name = field.name.prefix(40).debugDescription
        return .invalidRequest("the header field \(name) contains CR, LF, NUL or a bad name")
    }
}
