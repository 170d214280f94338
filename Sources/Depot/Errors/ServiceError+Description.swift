import Foundation

extension ServiceError: LocalizedError {
    /// A sentence for people: what failed, with the status and the server's message.
    public var errorDescription: String? {
        let detail = message.map { ": \($0)" } ?? ""
        switch self {
        case .invalidRequest(let reason): return "The request could not be built: \(reason)"
        case .cannotConnect: return "Could not connect to the server."
        case .noConnection: return "The device is offline."
        case .timedOut: return "The request timed out."
        case .cancelled: return "The request was cancelled."
        case .transport(let code, let description):
            return "The request failed in transit (code \(code)): \(description)"
        case .unauthorized(_, let challenges):
            let schemes = challenges.map(\.scheme).joined(separator: ", ")
            return "Not authorized (401\(schemes.isEmpty ? "" : "; accepts \(schemes)"))\(detail)"
        case .forbidden: return "Forbidden (403)\(detail)"
        case .notFound(let response): return "Not found (\(response.status))\(detail)"
        case .conflict: return "Conflict (409)\(detail)"
        case .clientError(let response) where response.status == 412:
            return "Precondition failed (412): the resource changed since it was read\(detail)"
        case .clientError(let response) where response.status == 428:
            return "Precondition required (428): the server accepts this change only as a "
                + "conditional request (If-Match)\(detail)"
        case .clientError(let response):
            return "The server rejected the request (\(response.status))\(detail)"
        case .serviceUnavailable(let response, let retryAfter):
            let wait = retryAfter.map { "; retry after \(Int($0.rounded(.up))) s" } ?? ""
            return "Service unavailable (\(response.status)\(wait))\(detail)"
        case .serverError(let response): return "Server error (\(response.status))\(detail)"
        case .unexpectedStatus(let response): return "Unexpected status \(response.status)\(detail)"
        case .decoding(let failure):
            return "Could not decode \(failure.type) at \(failure.codingPath): \(failure.description)"
        case .queued(let write):
            let target = QueryString.withoutQuery(write.path)
            return "The server could not be reached; \(write.method.rawValue) \(target) is queued to be sent "
                + "later (outbox entry \(write.id))."
        }
    }
}

extension ServiceError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String {
        errorDescription ?? "ServiceError"
    }
}
