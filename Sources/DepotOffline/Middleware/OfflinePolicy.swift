import Depot
import Foundation

/// What `.offline(store)` stores and when it answers from the store.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: api).with(
///     .offline(store, policy: OfflinePolicy(maxBytes: 20 << 20, account: { session.userID })),
///     auth, .retry())
/// ```
public struct OfflinePolicy: Sendable {
    /// The most bytes of stored responses; the least recently used go first.
    public var maxBytes: Int
    /// The most stored responses.
    public var maxEntries: Int
    /// Whether a `5xx` answer to a `GET` is replaced by the stored response, as a failure to
    /// connect is (a `429` never is: it is the server's answer to this client). Without it, only a stored response whose `Cache-Control` carried
    /// `stale-if-error` (RFC 5861) is served on a `5xx`, within the seconds it allows.
    public var servesStoredResponsesOnServerError: Bool
    /// Whose responses are being stored and served: an identifier the app chooses (a user
    /// id, say), never a credential. Responses stored for one account are never served to
    /// another; `""` for an app without accounts.
    public var account: @Sendable () -> String
    /// Whether a write that cannot reach the server is queued in the outbox (`true` by
    /// default). Return `false` for writes whose body carries a secret — a sign-in, a token
    /// refresh, a password change — so that it is never written to the file: such a request
    /// passes through and fails as the network failed.
    public var queuesWrite: @Sendable (BackendRequest) -> Bool
    /// Whether the response to a `GET` is stored (`true` by default, for every `2xx` not marked
    /// `no-store`). Return `false` for responses that carry a secret in their body (a token
    /// endpoint read with `GET`, a profile with an API key in it).
    public var storesResponse: @Sendable (BackendRequest, BackendResponse) -> Bool
    /// The secrets never written to the file: header fields dropped from stored responses and
    /// queued writes, and query items whose presence keeps a request out of the file
    /// altogether (a response to `GET me?access_token=…` is not stored, a write to such a URL
    /// not queued). Pass the same value to `.logging(redacting:)`.
    public var redaction: Redaction
    /// The most writes the outbox holds, queued and kept together. A write that fails while
    /// it is full is not queued: its caller gets the network's error, or, when it would have
    /// had to wait behind queued entries, ``Depot/ServiceError/invalidRequest(_:)`` saying
    /// the outbox is full (it is not sent ahead of them).
    public var maxQueuedWrites: Int
    /// Whether a write that is queued answers its caller as if the server had applied it
    /// (`false` by default: the caller's future fails with ``Depot/ServiceError/queued(_:)``).
    ///
    /// With `true`, a queued create succeeds with `201`, its local record (the object sent,
    /// with its ``Depot/QueuedWrite/localID``) and a `Location` of the local id; a `PUT` or
    /// `PATCH` with `200` and the record as reads now show it; a `DELETE` with `200` and `{}`.
    /// The caller's ``Depot/AnswerReceipt/pendingWrites`` counts the write, so a UI can still
    /// mark it unsent; ``Outbox/events`` reports what the server makes of it.
    public var answersQueuedWrites: Bool
    /// What a replay does when a queued `PUT`, `PATCH` or `DELETE` collides with what another
    /// device wrote since the user saw the record (``ConflictPolicy/keepForApp`` by default).
    /// Changes to different fields are merged without asking it; see ``OutboxConflict``.
    public var onConflict: ConflictPolicy

    /// A policy; the defaults store up to 50 MiB in 10,000 responses for one account, queue every
    /// write, up to 10,000, keep ``Depot/Redaction/default``'s secrets out of the file, and keep
    /// a conflicting write for the app to resolve.
    public init(
        maxBytes: Int = 50 << 20,
        maxEntries: Int = 10_000,
        servesStoredResponsesOnServerError: Bool = false,
        account: @escaping @Sendable () -> String = { "" },
        queuesWrite: @escaping @Sendable (BackendRequest) -> Bool = { _ in true },
        storesResponse: @escaping @Sendable (BackendRequest, BackendResponse) -> Bool = { _, _ in true },
        redaction: Redaction = .default,
        maxQueuedWrites: Int = 10_000,
        answersQueuedWrites: Bool = false,
        onConflict: ConflictPolicy = .keepForApp
    ) {
        self.onConflict = onConflict
        self.answersQueuedWrites = answersQueuedWrites
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.servesStoredResponsesOnServerError = servesStoredResponsesOnServerError
        self.account = account
        self.queuesWrite = queuesWrite
        self.storesResponse = storesResponse
        self.redaction = redaction
        self.maxQueuedWrites = maxQueuedWrites
    }
}
