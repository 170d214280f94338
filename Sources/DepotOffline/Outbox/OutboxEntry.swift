import Depot
import Foundation
import JSONServerEngine

/// One write kept in an ``Outbox``: what will be sent again, and where it stands.
///
/// ``Outbox/entries()`` lists them in the order a replay sends them, and every
/// ``OutboxEvent`` carries one. The request is stored without secrets (the header fields
/// ``OfflinePolicy/redaction`` names, `Authorization` and `Cookie` among them, are dropped
/// before it is written), so ``headers`` holds only what the app's own request carried; the
/// authentication behind the middleware signs each replay afresh.
public struct OutboxEntry: Sendable, Hashable, Identifiable {
    /// Where an entry stands.
    public enum State: Sendable, Hashable {
        /// Waiting to be sent by the next replay, in ``OutboxEntry/position`` order.
        case queued
        /// Refused by the server (a 4xx other than 401, 407, 408, 421, 425 and 429, such as a 409 or a
        /// 412): kept, and skipped by replays (with the later writes to its path, unless it is
        /// a `POST`), until the app calls ``Outbox/retry(_:)`` or ``Outbox/discard(_:)``.
        case kept(OutboxRefusal)
    }

    /// The entry's identifier, the same as ``Depot/QueuedWrite/id`` in the
    /// ``Depot/ServiceError/queued(_:)`` its caller received.
    public var id: String
    /// Its place in the replay order: increasing in the order writes were queued.
    public var position: Int
    /// The write's method (`POST`, `PUT`, `PATCH` or `DELETE`).
    public var method: HTTPMethod
    /// The write's path, as the request had it.
    public var path: String
    /// What the write addresses, as the request said it (``Depot/BackendRequest/resource``):
    /// kept with the entry, so that a replay, the overlay and local-id rewriting read the
    /// repository's word (its record id, parent scope and foreign keys), not a guess from
    /// ``path``. An entry queued before Depot 0.3 reads its path by json-server's convention.
    public var resource: RequestResource
    /// The write's query items, in order.
    public var query: [URLQueryItem]
    /// The write's header fields, without credentials and without `Idempotency-Key` (kept in
    /// ``idempotencyKey`` and added back to every replay).
    public var headers: HTTPHeaders
    /// The write's body; `nil` when it had none (or an empty one).
    public var body: Data?
    /// The `Idempotency-Key` sent with the first attempt and with every replay.
    public var idempotencyKey: String
    /// When the write was queued (its caller's ``Depot/QueuedWrite/queuedAt``).
    public var queuedAt: Date
    /// Whether it waits for a replay or was kept after a refusal.
    public var state: State
    /// For a create (`POST`), the id its record holds until the server names its own (see
    /// ``Depot/QueuedWrite/localID``); `nil` for other writes.
    public var localID: JSONValue?
    /// What a `PUT`, `PATCH` or `DELETE` was made on (see ``base``); `nil` for a create, or a
    /// record the store held no answer for when the write was queued.
    var writeBase: WriteBase?

    /// The record as the user saw it when the write was queued (the stored answer it was made
    /// on, with the writes queued before it laid over): what a replay compares the server's
    /// record with to find another device's changes (see ``OutboxConflict``). `nil` for a
    /// create, or a record the store held no answer for: such a write is sent as made.
    public var base: JSONValue? {
        writeBase.map { .object($0.record) }
    }

    /// Creates an entry (the outbox creates them; tests and previews may too). Without a
    /// `resource`, the path is read as one by json-server's convention
    /// (``Depot/RequestResource/init(path:)``).
    public init(
        id: String, position: Int, method: HTTPMethod, path: String, resource: RequestResource? = nil,
        query: [URLQueryItem], headers: HTTPHeaders, body: Data?, idempotencyKey: String, queuedAt: Date,
        state: State, localID: JSONValue? = nil
    ) {
        self.init(
            id: id, position: position, method: method, path: path, resource: resource, query: query,
            headers: headers, body: body, idempotencyKey: idempotencyKey, queuedAt: queuedAt, state: state,
            localID: localID, writeBase: nil)
    }

    /// An entry with the base its write was made on (the outbox's own).
    init(
        id: String, position: Int, method: HTTPMethod, path: String, resource: RequestResource?,
        query: [URLQueryItem], headers: HTTPHeaders, body: Data?, idempotencyKey: String, queuedAt: Date,
        state: State, localID: JSONValue?, writeBase: WriteBase?
    ) {
        self.writeBase = writeBase
        self.localID = localID
        self.id = id
        self.position = position
        self.method = method
        self.path = path
        self.resource = resource ?? RequestResource(path: path)
        self.query = query
        self.headers = headers
        self.body = body
        self.idempotencyKey = idempotencyKey
        self.queuedAt = queuedAt
        self.state = state
    }

    /// The former name of ``queuedAt``.
    @available(*, deprecated, renamed: "queuedAt")
    public var createdAt: Date {
        get { queuedAt }
        set { queuedAt = newValue }
    }

    /// The former spelling of
    /// ``init(id:position:method:path:resource:query:headers:body:idempotencyKey:queuedAt:state:localID:)``.
    @available(
        *, deprecated,
        renamed:
            "init(id:position:method:path:resource:query:headers:body:idempotencyKey:queuedAt:state:localID:)"
    )
    public init(
        id: String, position: Int, method: HTTPMethod, path: String, resource: RequestResource? = nil,
        query: [URLQueryItem], headers: HTTPHeaders, body: Data?, idempotencyKey: String, createdAt: Date,
        state: State, localID: JSONValue? = nil
    ) {
        self.init(
            id: id, position: position, method: method, path: path, resource: resource, query: query,
            headers: headers, body: body, idempotencyKey: idempotencyKey, queuedAt: createdAt, state: state,
            localID: localID)
    }

    /// Whether the entry waits for a replay (not kept after a refusal).
    public var isQueued: Bool {
        state == .queued
    }

    /// The conflict a kept entry waits with; `nil` for a queued entry or a refusal.
    public var conflict: OutboxConflict? {
        if case .kept(let refusal) = state { return refusal.conflict }
        return nil
    }

    /// Whether reads show the write as applied: while it is queued, and while it is kept with
    /// a conflict the app has not resolved (a refusal rolls it back).
    var showsInReads: Bool {
        isQueued || conflict != nil
    }

    /// The request a replay sends through the rest of the chain: the stored one, with its
    /// `Idempotency-Key` and marked retryable (the key makes sending it again safe).
    public var request: BackendRequest {
        var headers = headers
        headers[Outbox.idempotencyKeyField] = idempotencyKey
        var request = BackendRequest(
            method: method, path: path, query: query, headers: headers, body: body)
        request.address(resource)
        request.isRetryable = true
        return request
    }

    /// The description its caller received in ``Depot/ServiceError/queued(_:)``.
    public var queuedWrite: QueuedWrite {
        QueuedWrite(
            id: id, method: method, path: path, idempotencyKey: idempotencyKey, queuedAt: queuedAt,
            localID: localID, localRecord: localRecord)
    }

    /// A create's record as reads show it until the server answers: the JSON object sent, with
    /// ``localID`` as its `id`.
    var localRecord: JSONValue? {
        guard method == .post, let localID else { return nil }
        var members: [String: JSONValue] = [:]
        if let body {
            guard case .object(let sent)? = JSONServerRules.parse(body) else { return nil }
            members = sent
        }
        return .object(PendingWrite.record(sending: members, localID: localID))
    }
}

/// Why the server refused an entry that the outbox then kept: see ``OutboxEntry/State/kept(_:)``.
public struct OutboxRefusal: Sendable, Hashable {
    /// The HTTP status of the refusal (409, 412, 422, …).
    public var status: Int?
    /// The server's message (its body's `detail`, `message`, `error` or RFC 9457 `title`), or
    /// the error's description when the server gave none.
    public var message: String?
    /// The body of the refusal, for details such as a 422's validation errors: its first
    /// ``Outbox/maxStoredBodyBytes`` bytes.
    public var body: Data
    /// When the refusal arrived.
    public var refusedAt: Date
    /// The conflict the entry was kept for (see ``ConflictPolicy/keepForApp``), or `nil` for a
    /// refusal of the server's.
    public var conflict: OutboxConflict?

    /// Creates the description of a refusal, or of a conflict kept for the app.
    public init(status: Int?, message: String?, body: Data, refusedAt: Date, conflict: OutboxConflict? = nil)
    {
        self.status = status
        self.message = message
        self.body = body
        self.refusedAt = refusedAt
        self.conflict = conflict
    }

    /// The refusal as the error a caller would have received.
    public var error: ServiceError {
        guard let status else { return .invalidRequest(message ?? "the request could not be sent") }
        let response = BackendResponse(status: status, body: body)
        return ServiceError(response: response, for: BackendRequest(method: .post, path: ""))
            ?? .unexpectedStatus(FailureResponse(status: status, body: body, message: message))
    }
}
