import Foundation

/// A write that could not reach the server and was stored to be sent later: the payload
/// of ``ServiceError/queued(_:)``.
///
/// DepotOffline's outbox commits such a write durably before its caller hears of it, so
/// the write survives the app being killed and is sent again, in order, when the network
/// returns, with the same `Idempotency-Key`, so that a server honouring the key applies
/// it once. This value identifies the outbox entry: keep ``id`` to match the outcome the
/// outbox reports later, or to discard the entry.
public struct QueuedWrite: Sendable, Hashable, Codable {
    /// The outbox entry's identifier.
    public var id: String
    /// The write's method (`POST`, `PUT`, `PATCH` or `DELETE`).
    public var method: HTTPMethod
    /// The write's path, as the request had it.
    public var path: String
    /// The `Idempotency-Key` the write carries on every attempt.
    public var idempotencyKey: String
    /// When the write was queued.
    public var queuedAt: Date

    /// Creates the description of a queued write.
    public init(id: String, method: HTTPMethod, path: String, idempotencyKey: String, queuedAt: Date) {
        self.id = id
        self.method = method
        self.path = path
        self.idempotencyKey = idempotencyKey
        self.queuedAt = queuedAt
    }
}
