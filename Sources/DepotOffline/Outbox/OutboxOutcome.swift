import Depot
import Foundation

/// What became of a write that left the ``Outbox``: one of ``Outbox/recentOutcomes()``.
///
/// ```swift
/// for outcome in try store.outbox.recentOutcomes() {
///     if case .sent(let response) = outcome.result, response.status == 201 {
///         reconcile(outcome.write.id, created: response.headers["Location"])
///     }
/// }
/// ```
public struct OutboxOutcome: Sendable, Hashable {
    /// How the write left the outbox.
    public enum Result: Sendable, Hashable {
        /// The server accepted it with this answer: its status, its header fields but those the
        /// policy's redaction names, and its body cut to ``Outbox/maxStoredBodyBytes`` (empty
        /// when the answer said `Cache-Control: no-store` or ``OfflinePolicy/storesResponse``
        /// kept it out).
        case sent(BackendResponse)
        /// The app discarded it with ``Outbox/discard(_:)``: it was never sent by a replay.
        case discarded
    }

    /// The write, as its caller's ``Depot/ServiceError/queued(_:)`` described it.
    public var write: QueuedWrite
    /// How it left the outbox.
    public var result: Result
    /// When it left.
    public var decidedAt: Date

    /// Creates an outcome (the outbox does; tests and previews may too).
    public init(write: QueuedWrite, result: Result, decidedAt: Date) {
        self.write = write
        self.result = result
        self.decidedAt = decidedAt
    }
}
