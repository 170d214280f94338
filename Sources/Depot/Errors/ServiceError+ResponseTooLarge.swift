import Foundation

extension ServiceError {
    /// The code of ``responseTooLarge(limit:declared:)``:
    /// `URLError.Code.dataLengthExceedsMaximum` (-1103).
    public static let responseTooLargeCode = -1103

    /// The failure of a response whose body passed `limit` bytes (a backend's
    /// `maximumResponseBytes`): ``transport(code:description:)`` with
    /// ``responseTooLargeCode``, whose description names `maximumResponseBytes`.
    ///
    /// Every Depot backend with a response-size limit fails this way, so that callers
    /// can tell an oversized answer from any other transport failure whichever backend
    /// they use.
    ///
    /// - Parameters:
    ///   - limit: the most body bytes the backend accepts.
    ///   - declared: the `Content-Length` that was over the limit before any of the
    ///     body arrived, or `nil` when the body grew past it as it arrived.
    public static func responseTooLarge(limit: Int, declared: Int64?) -> ServiceError {
        let description =
            if let declared {
                "The response declares a body of \(declared) bytes, more than the limit of \(limit) bytes (maximumResponseBytes)."
            } else {
                "The response body grew past the limit of \(limit) bytes (maximumResponseBytes); the rest was not read."
            }
        return .transport(code: responseTooLargeCode, description: description)
    }
}
