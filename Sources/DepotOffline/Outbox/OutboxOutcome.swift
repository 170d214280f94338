import Depot
import Foundation

/// What became of a write that left the ``Outbox``: one of ``Outbox/recentOutcomes()``.
///
/// ```swift
/// for outcome in try store.outbox.recentOutcomes() {
///     if case .sent(let response) = outcome.decision, response.status == 201 {
///         reconcile(outcome.write.id, created: response.headers["Location"])
///     }
/// }
/// ```
public struct OutboxOutcome: Sendable, Hashable {
    /// How the write left the outbox (named so as not to shadow `Swift.Result`).
    public enum Decision: Sendable, Hashable {
        /// The server accepted it with this answer: its status, its header fields but those the
        /// policy's redaction names, and its body cut to ``Outbox/maxStoredBodyBytes`` (empty
        /// when the answer said `Cache-Control: no-store` or ``OfflinePolicy/storesResponse``
        /// kept it out).
        case sent(BackendResponse)
        /// The app discarded it with ``Outbox/discard(_:)``. One a replay was sending at that
        /// moment may still have reached the server: a `.sent` outcome of it follows then.
        case discarded
    }

    /// The write, as its caller's ``Depot/ServiceError/queued(_:)`` described it; for a write
    /// sent as another method (a `DELETE` that ``ConflictPolicy/merge(_:)`` turned into a `PUT`),
    /// the method the server applied.
    public var write: QueuedWrite
    /// How it left the outbox.
    public var decision: Decision
    /// When it left.
    public var decidedAt: Date

    /// Creates an outcome (the outbox does; tests and previews may too).
    public init(write: QueuedWrite, decision: Decision, decidedAt: Date) {
        self.write = write
        self.decision = decision
        self.decidedAt = decidedAt
    }

    /// The former name of ``Decision``, which shadowed `Swift.Result`.
    @available(*, deprecated, renamed: "Decision")
    public typealias Result = Decision

    /// The former name of ``decision``.
    @available(*, deprecated, renamed: "decision")
    public var result: Decision {
        get { decision }
        set { decision = newValue }
    }

    /// The former spelling of ``init(write:decision:decidedAt:)``.
    @available(*, deprecated, renamed: "init(write:decision:decidedAt:)")
    public init(write: QueuedWrite, result: Decision, decidedAt: Date) {
        self.init(write: write, decision: result, decidedAt: decidedAt)
    }
}
