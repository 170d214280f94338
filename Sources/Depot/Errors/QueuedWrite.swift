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
    /// For a queued create (`POST`), the id its record holds until the server names its own: a
    /// negative number (`-1`, `-2`, …) where the collection's ids are numbers, otherwise a
    /// `"local-"` string; `nil` for other writes. Reads through the same store find the record
    /// by it (`findByID(-1)`), and writes queued after it that carry it are sent with the
    /// server's id once the create has reached the server.
    public var localID: JSONValue?
    /// For a queued create, the record as the app will see it until the server answers: the
    /// JSON object sent, with ``localID`` as its `id`; `nil` for other writes, or when the body
    /// is not a JSON object.
    public var localRecord: JSONValue?

    /// Creates the description of a queued write.
    public init(
        id: String, method: HTTPMethod, path: String, idempotencyKey: String, queuedAt: Date,
        localID: JSONValue? = nil, localRecord: JSONValue? = nil
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.idempotencyKey = idempotencyKey
        self.queuedAt = queuedAt
        self.localID = localID
        self.localRecord = localRecord
    }
}
