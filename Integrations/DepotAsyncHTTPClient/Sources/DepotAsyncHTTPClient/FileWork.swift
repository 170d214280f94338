@_spi(BackendSupport) import Depot
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The file work of one request (checking, opening, reading, writing, moving and removing
/// its files), run on SwiftNIO's shared blocking pool (`NIOThreadPool.singleton`, the one
/// Vapor and Hummingbird hand blocking work to), never on an event loop: on a server the
/// event loops serve every connection, and a slow disk must not stall them.
///
/// The calls run one after the other, in the order they were asked for, as
/// ``Depot/DownloadFile`` expects: the end of a download (its file moved into place or
/// removed) never overtakes a write still under way, even when a cancel ends the request
/// in the middle of one.
final class FileWork: Sendable {
    private let pool: NIOThreadPool
    /// The outcome of the last call asked for, as a future that never fails (so that the
    /// next call runs after it, whatever its outcome), or `nil` before the first.
    private let last = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)

    init(pool: NIOThreadPool = .singleton) {
        self.pool = pool
    }

    /// Runs `work` on the pool once every call asked for before has ended; the future
    /// completes on `eventLoop`.
    func run<Value: Sendable>(on eventLoop: any EventLoop, _ work: @escaping @Sendable () throws -> Value)
        -> EventLoopFuture<Value>
    {
        let pool = self.pool
        return last.withLockedValue { last in
            let previous = last ?? eventLoop.makeSucceededVoidFuture()
            let outcome = previous.flatMap { pool.runIfActive(eventLoop: eventLoop, work) }.hop(to: eventLoop)
            last = outcome.map { _ in }.recover { _ in }
            return outcome
        }
    }
}

extension ServiceError {
    /// The case for an error of the file work of a request: a ``ServiceError`` as it is
    /// (``Depot/DownloadFile`` and the body-file checks throw those), anything else (the
    /// pool shut down) a ``transport(code:description:)`` with -1 (`unknown`).
    init(fileWorkError error: any Error) {
        if let error = error as? ServiceError {
            self = error
        } else {
            self = .transport(
                code: Self.unknownCode, description: "The file work of the request failed: \(error)")
        }
    }
}
