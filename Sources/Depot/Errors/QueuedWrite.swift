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

extension QueuedWrite {
    /// ``localID`` as the entity's id type (`write.localID(as: Post.ID.self)` is `-1`); `nil`
    /// for a write that is no create.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` when the local id is no `ID` (a `"local-…"`
    ///   string where the entity's ids are numbers: the collection's ids were strings when
    ///   the write was queued).
    public func localID<ID: Decodable>(as type: ID.Type) throws(ServiceError) -> ID? {
        try localID.map { value throws(ServiceError) in try value.decoded(as: ID.self) }
    }

    /// ``localRecord`` as the entity, decoded by `coding` (the repository's: `posts.coding`);
    /// `nil` for a write that is no create, or whose body was not a JSON object.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` when the record does not decode as `Entity`
    ///   (a create that sent fewer fields than the entity needs).
    public func localRecord<Entity: Decodable>(as type: Entity.Type, coding: JSONCoding = .default)
        throws(ServiceError) -> Entity?
    {
        try localRecord.map { value throws(ServiceError) in try value.decoded(as: Entity.self, coding: coding)
        }
    }
}
