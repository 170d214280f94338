import AsyncHTTPClient
@_spi(BackendSupport) import Depot
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

extension ServiceError {
    /// `URLError.Code.unknown`: a failure without a code of its own.
    static let unknownCode = -1
    /// `URLError.Code.networkConnectionLost`: the server closed the connection before its
    /// answer ended.
    static let networkConnectionLostCode = -1005
    /// `URLError.Code.badServerResponse`: the answer is not HTTP.
    static let badServerResponseCode = -1011

    /// The case for an error an AsyncHTTPClient request ended with, as
    /// `URLSessionBackend` maps the same failure:
    ///
    /// - a body over the limit → ``responseTooLarge(limit:declared:)``
    /// - `HTTPClientError.cancelled` → ``cancelled``
    /// - a deadline or any timeout of the client → ``timedOut``
    /// - a connection that could not be made (refused, host unreachable, no such host) →
    ///   ``cannotConnect``
    /// - the connection closed or reset before the answer ended (before or in the middle of
    ///   it) → ``transport(code:description:)`` -1005 (`networkConnectionLost`)
    /// - an answer that is not HTTP → -1011 (`badServerResponse`)
    /// - anything else → ``transport(code:description:)`` with -1 (`unknown`)
    init(asyncHTTPClientError error: any Error, receivedHead: Bool) {
        let description = String(describing: error)
        switch error {
        case let error as ServiceError: self = error
        case let error as ResponseTooLarge:
            self = .responseTooLarge(limit: error.limit, declared: error.declared)
        case let error as HTTPClientError:
            switch error {
            case .cancelled: self = .cancelled
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout,
                .getConnectionFromPoolTimeout,
                .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                self = .timedOut
            case .remoteConnectionClosed, .bodyLengthMismatch:
                self = .transport(
                    code: Self.networkConnectionLostCode,
                    description: receivedHead
                        ? "The server closed the connection before the answer ended (\(description))."
                        : "The server closed the connection without answering (\(description)).")
            case .alreadyShutdown:
                self = .transport(
                    code: Self.unknownCode, description: "The HTTPClient was shut down (\(description)).")
            default: self = .transport(code: Self.unknownCode, description: description)
            }
        case is NIOConnectionError: self = .cannotConnect
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL: self = .cannotConnect
            case ECONNRESET, EPIPE:
                self = .transport(code: Self.networkConnectionLostCode, description: description)
            case ETIMEDOUT: self = .timedOut
            default: self = .transport(code: Self.unknownCode, description: description)
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout: self = .timedOut
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                self = .transport(code: Self.networkConnectionLostCode, description: description)
            default: self = .transport(code: Self.unknownCode, description: description)
            }
        case HTTPParserError.invalidEOFState:
            // The connection ended in the middle of a message: cut short, not malformed.
            self = .transport(
                code: Self.networkConnectionLostCode,
                description: "The server closed the connection before the answer ended (\(description)).")
        case is HTTPParserError:
            self = .transport(
                code: Self.badServerResponseCode,
                description: "The server's answer was not an HTTP response (\(description)).")
        default: self = .transport(code: Self.unknownCode, description: description)
        }
    }
}
