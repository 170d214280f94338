import Foundation

/// What a stored response answers: the request's method, path and query, and the account it
/// was fetched for.
///
/// Used by ``ResponseStorage``: a response is only ever served again for the same key, so
/// responses stored for one account are never served to another. `account` is an identifier
/// the app chooses (a user id, or a digest of one); never a credential such as a token, since
/// a persistent storage writes its keys to disk.
public struct StoredResponseKey: Sendable, Hashable {
    /// The request's method (a `GET` for stored reads).
    public var method: HTTPMethod
    /// The request's path, as given.
    public var path: String
    /// The request's query items, in order (a different order is a different key).
    public var query: [URLQueryItem]
    /// Whose answer it is: an app-chosen identifier, never a credential; empty for none.
    public var account: String

    /// The key of a request for `path` with `query`, fetched for `account`.
    public init(method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [], account: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.account = account
    }

    /// The resource the key's path names: the path without its query or fragment and without
    /// leading or trailing `/` (`"posts/1"` for `"/posts/1/?x=1"`). A write to a resource
    /// makes the stored responses of that resource stale, whatever their query or account:
    /// ``ResponseStorage/removeResponses(forResource:)``.
    public var resource: String {
        Self.resource(of: path)
    }

    /// `path` without its query or fragment and without leading or trailing `/`: the one
    /// reading of ``resource`` every storage and ``CacheMiddleware`` use.
    package static func resource(of path: String) -> String {
        let end = path.firstIndex { $0 == "?" || $0 == "#" } ?? path.endIndex
        var resource = path[..<end]
        while resource.hasPrefix("/") { resource = resource.dropFirst() }
        while resource.hasSuffix("/") { resource = resource.dropLast() }
        return String(resource)
    }

    /// The bytes the key itself counts against a storage's bound: its path, query and account.
    public var byteCount: Int {
        var count = path.utf8.count + account.utf8.count
        for item in query { count += item.name.utf8.count + (item.value?.utf8.count ?? 0) + 2 }
        return count
    }
}

/// A response as a ``ResponseStorage`` keeps it: the response, when it was stored, and the
/// request's values of the header fields the response varies on.
///
/// `storedAt` is what lets a caller tell how old an answer served from storage is ("saved
/// 10:42"); `varying` is what lets a cache check that a later request may share it (RFC 9111
/// §4.1). A stored response never holds a field that sets or carries a credential
/// (`Set-Cookie`, `Set-Cookie2`, `Authorization`, `Proxy-Authorization`), nor records the
/// request's `Authorization`, `Proxy-Authorization` or `Cookie` among its varying values: they
/// are dropped when it is made, so no storage writes one to disk.
public struct StoredResponse: Sendable, Hashable {
    /// The response: status, header fields, body.
    public var response: BackendResponse
    /// When the response was stored; a storage may date it by when the request that got it
    /// was sent instead, as DepotOffline does, which never makes it look younger than it is
    /// (RFC 9111 §4.2.3).
    public var storedAt: Date
    /// The request's values of each field the response's `Vary` names (lowercased names).
    public var varying: [String: [String]]

    /// A stored `response` (without the fields that set or carry credentials), dated
    /// `storedAt`, with the request's values of the fields it varies on (without the request's
    /// credentials: a storage tells users apart by ``StoredResponseKey/account``).
    public init(_ response: BackendResponse, storedAt: Date = Date(), varying: [String: [String]] = [:]) {
        var response = response
        if response.headers.contains(where: { $0.name.isCaseInsensitivelyIn(Self.credentialFields) }) {
            response.headers = HTTPHeaders(
                response.headers.filter { !$0.name.isCaseInsensitivelyIn(Self.credentialFields) })
        }
        self.response = response
        self.storedAt = storedAt
        // Most answers vary on nothing: no filtered copy of an empty dictionary then.
        self.varying =
            varying.isEmpty
            ? varying : varying.filter { !$0.key.isCaseInsensitivelyIn(Self.requestCredentialFields) }
    }

    /// The header fields a stored response never keeps (lowercased): they set or carry
    /// credentials.
    static let credentialFields: Set<String> = [
        "set-cookie", "set-cookie2", "authorization", "proxy-authorization",
    ]

    /// The request fields whose values a stored response never records (lowercased), even
    /// when it varies on them: they carry credentials.
    static let requestCredentialFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The bytes the response counts against a storage's bound: its body, its header fields
    /// (four bytes more each, as on the wire) and its varying values
    /// (counted the same way).
    public var byteCount: Int {
        var count = response.body.count
        for field in response.headers { count += field.name.utf8.count + field.value.utf8.count + 4 }
        for (name, values) in varying {
            for value in values { count += name.utf8.count + value.utf8.count + 4 }
        }
        return count
    }
}

/// A place that keeps responses by ``StoredResponseKey``, bounded by bytes and entries,
/// evicting the least recently used: the one storage mechanism behind stored responses, in
/// memory (``InMemoryResponseStorage``) or on disk (DepotOffline's SQLite storage).
///
/// Middleware that keeps responses (`.offline(store)`, a cache's validators) talks to this
/// protocol, so the same middleware works with a storage that is forgotten when the app quits
/// and with one that survives a restart. Implementations are safe to call from any thread.
/// Calls throw when the storage itself fails (a disk error); an in-memory storage never throws.
public protocol ResponseStorage: Sendable {
    /// The most bytes kept (as ``StoredResponse/byteCount`` plus ``StoredResponseKey/byteCount``).
    var maxBytes: Int { get }
    /// The most responses kept.
    var maxEntries: Int { get }

    /// The response stored for `key`, which becomes the most recently used; `nil` when none.
    func response(for key: StoredResponseKey) throws -> StoredResponse?

    /// Keeps `response` for `key` as the most recently used, replacing what was there, then
    /// evicts the least recently used responses until both bounds hold. A response larger than
    /// ``maxBytes`` on its own is not kept (and the old one for `key` is removed).
    ///
    /// - Returns: how many other responses were evicted.
    @discardableResult
    func store(_ response: StoredResponse, for key: StoredResponseKey) throws -> Int

    /// Replaces the response stored for `key` with `response` (or removes it, for `nil`), as
    /// the most recently used, but only while what is stored for `key` is still `expected`:
    /// a compare-and-swap, so that a late answer never overwrites a newer one stored meanwhile.
    ///
    /// - Returns: whether `expected` was stored (and so was replaced).
    @discardableResult
    func replaceResponse(
        _ expected: StoredResponse, with response: StoredResponse?, for key: StoredResponseKey
    )
        throws -> Bool

    /// Removes the response stored for `key`; returns whether there was one.
    @discardableResult
    func removeResponse(for key: StoredResponseKey) throws -> Bool

    /// Removes the responses of every key whose ``StoredResponseKey/resource`` is `resource`,
    /// whatever their method, query or account (what a write to `resource` makes stale).
    ///
    /// - Returns: how many were removed.
    @discardableResult
    func removeResponses(forResource resource: String) throws -> Int

    /// Removes every stored response (sign-out).
    func removeAllResponses() throws

    /// How many responses are stored now.
    func count() throws -> Int

    /// How many bytes the stored responses count now against ``maxBytes``.
    func totalBytes() throws -> Int
}

/// A ``ResponseStorage`` in memory: fast, bounded, forgotten when the app quits.
///
/// Use it where stored responses need not survive a restart (tests, previews, a short-lived
/// process); DepotOffline's SQLite storage keeps them on disk behind the same protocol. It
/// never throws. All calls are O(1) except ``removeResponses(forResource:)`` and
/// ``removeAllResponses()``.
public final class InMemoryResponseStorage: ResponseStorage {
    /// The most bytes kept.
    public let maxBytes: Int
    /// The most responses kept.
    public let maxEntries: Int
    private let entries: Locked<LRUStore<StoredResponseKey, StoredResponse>>

    /// An empty storage keeping at most `maxEntries` responses and `maxBytes` bytes (negative
    /// bounds count as zero: a storage that keeps nothing).
    public init(maxEntries: Int = 1_000, maxBytes: Int = 10 << 20) {
        self.maxBytes = max(0, maxBytes)
        self.maxEntries = max(0, maxEntries)
        entries = Locked(LRUStore(maxCount: maxEntries, maxCost: maxBytes))
    }

    /// The response stored for `key`, which becomes the most recently used.
    public func response(for key: StoredResponseKey) -> StoredResponse? {
        entries.withLock { $0.value(for: key) }
    }

    /// Keeps `response` for `key`, evicting the least recently used beyond the bounds.
    @discardableResult
    public func store(_ response: StoredResponse, for key: StoredResponseKey) -> Int {
        let cost = response.byteCount + key.byteCount
        return entries.withLock { $0.insert(response, cost: cost, for: key) }
    }

    /// Replaces the response stored for `key` while it is still `expected`.
    @discardableResult
    public func replaceResponse(
        _ expected: StoredResponse, with response: StoredResponse?, for key: StoredResponseKey
    ) -> Bool {
        entries.withLock { entries in
            guard entries.peek(key) == expected else { return false }
            if let response {
                entries.insert(response, cost: response.byteCount + key.byteCount, for: key)
            } else {
                entries.removeValue(for: key)
            }
            return true
        }
    }

    /// Removes the response stored for `key`.
    @discardableResult
    public func removeResponse(for key: StoredResponseKey) -> Bool {
        entries.withLock { $0.removeValue(for: key) } != nil
    }

    /// Removes the responses stored for `resource`, whatever their query or account (O(n)).
    @discardableResult
    public func removeResponses(forResource resource: String) -> Int {
        entries.withLock { entries in entries.removeAll { $0.resource == resource } }
    }

    /// Removes every stored response.
    public func removeAllResponses() {
        entries.withLock { $0.removeAll() }
    }

    /// How many responses are stored now.
    public func count() -> Int {
        entries.withLock { $0.count }
    }

    /// How many bytes the stored responses count now.
    public func totalBytes() -> Int {
        entries.withLock { $0.totalCost }
    }
}
