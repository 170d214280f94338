import Depot
import Foundation

/// What one replay of an ``Outbox`` did: returned by ``Outbox/replay()``.
///
/// The details of each entry arrive as ``OutboxEvent``s on ``Outbox/events``; this is the
/// summary, for code that awaits the replay.
public struct OutboxReplayReport: Sendable, Hashable {
    /// Why a replay ended.
    public enum Ending: Sendable, Hashable {
        /// Every queued entry that could be sent was sent or kept; those still queued
        /// (``OutboxReplayReport/remaining``) wait behind a kept `PUT`, `PATCH` or `DELETE` of
        /// their path for the app's ``Outbox/retry(_:)`` or ``Outbox/discard(_:)``.
        case finished
        /// An entry met an outcome the server did not decide: no answer (`.cannotConnect`,
        /// `.noConnection`, `.timedOut`, `.transport`, `.cancelled`), a request that could not
        /// be made (`.invalidRequest`, such as a token provider that failed), a `401`, `407`,
        /// `408`, `421`, `425`, `429`, `5xx`, `1xx` or `3xx`: it and the entries behind it stay
        /// queued for a later replay. (`.timedOut` also when the replay lost the outbox's
        /// sender lease: ``OfflineStore/removeAll()`` ended it, or the replay held it past its
        /// duration, 5 minutes without a renewal, and another sender took it over.)
        case interrupted(ServiceError)
        /// Entries are queued but no request has gone through the `.offline` middleware since
        /// the store was opened, so there is nothing to send them through: call
        /// ``Outbox/replay(through:)`` with the backend behind the middleware. (Also when the
        /// ``OfflineStore`` was released while its outbox lives on: the store sends its
        /// outbox's writes, so keep the store.)
        case noBackend
        /// The store failed to read or update an entry; what was sent stays sent (and an
        /// entry whose 2xx could not be recorded is sent again later with its key, which a
        /// server honouring `Idempotency-Key` answers without applying it twice).
        case storeFailed(OfflineStoreError)
    }

    /// How many entries the server accepted (now removed from the store).
    public var sent: Int
    /// How many entries the server refused, or that met a conflict kept for the app (see
    /// ``ConflictPolicy/keepForApp``): kept for the app to resolve.
    public var kept: Int
    /// How many entries a conflict dropped unsent (``ConflictPolicy/serverWins``, or a
    /// ``ConflictPolicy/merge(_:)`` function that returned `nil`).
    public var dropped: Int
    /// How many entries are still queued after the replay.
    public var remaining: Int
    /// Why the replay ended.
    public var ending: Ending

    /// Creates a report.
    public init(sent: Int, kept: Int, dropped: Int = 0, remaining: Int, ending: Ending) {
        self.sent = sent
        self.kept = kept
        self.dropped = dropped
        self.remaining = remaining
        self.ending = ending
    }
}
