import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ServiceError {
    /// The case for an error a `URLSessionTask` ended with.
    ///
    /// - `cancelled` (-999) → ``cancelled``
    /// - `timedOut` (-1001) → ``timedOut``
    /// - `cannotConnectToHost` (-1004, connection refused or host unreachable) and
    ///   `cannotFindHost` (-1003, no such host) → ``cannotConnect``
    /// - `notConnectedToInternet` (-1009) and `dataNotAllowed` (-1020) → ``noConnection``
    /// - anything else → ``transport(code:description:)`` with the error's code
    init(transportError error: any Error) {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            self = .transport(code: nsError.code, description: nsError.localizedDescription)
            return
        }
        switch URLError.Code(rawValue: nsError.code) {
        case .cancelled: self = .cancelled
        case .timedOut: self = .timedOut
        case .cannotConnectToHost, .cannotFindHost: self = .cannotConnect
        case .notConnectedToInternet, .dataNotAllowed: self = .noConnection
        default: self = .transport(code: nsError.code, description: nsError.localizedDescription)
        }
    }
}
