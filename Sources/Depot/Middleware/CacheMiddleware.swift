import Foundation

/// Remembers the validators (`ETag`, `Last-Modified`) of `GET` answers, revalidates
/// with them, and answers a `304 Not Modified` from the stored body: the server sends
/// no body again, and the caller gets the `200` it would have got.
///
/// This is a *validator* cache, not a freshness cache: every `GET` still goes to the
/// server (with `If-None-Match` / `If-Modified-Since` when a response is stored), so an
/// answer is never older than the server says; `Cache-Control: max-age` and `Expires`
/// are not used to skip the request, and nothing is answered offline.
///
/// ```swift
/// let cache = CacheMiddleware(maxEntries: 500, maxBytes: 10_000_000)
/// let backend = URLSessionBackend(baseURL: url).with(.retry(), auth, cache)
/// let post = try await posts.findByID(1).value   // 200, stored with its ETag
/// let again = try await posts.findByID(1).value  // 304: decoded from the stored bytes
/// ```
///
/// - **What is stored**: `200` answers to `GET` that carry an `ETag` or a
///   `Last-Modified`, unless the request or the response says `Cache-Control: no-store`
///   or the response says `Vary: *`. Entries are kept per full target (path and query
///   items, in order) and per `Authorization` value, so an answer fetched with one
///   credential never answers a request with another; put the cache *after* the auth
///   middleware so that it sees the `Authorization` field. Other fields the response
///   names in `Vary` must match too. The store is bounded by `maxEntries` and by
///   `maxBytes` (bodies plus header fields), evicting the least recently used.
/// - **Revalidation**: a `GET` with a stored entry is sent with `If-None-Match` (the
///   `ETag`) and `If-Modified-Since` (the `Last-Modified`). A `304` is answered with the
///   stored status and body, and the stored header fields updated from the `304`'s
///   (RFC 9111 §4.3.4). A request that carries its own `If-None-Match` or
///   `If-Modified-Since` is sent as is and gets the `304` itself. A `404` or `410`
///   drops the entry.
/// - **Writes**: after a successful `POST`, `PUT`, `PATCH` or `DELETE`, the entries of
///   its path and of the collection above it (every query, every credential) are
///   dropped. With `conditionalWrites`, a `PUT`, `PATCH` or `DELETE` of a path whose
///   `GET` is stored is sent with `If-Match` (a strong `ETag`) or `If-Unmodified-Since`
///   (the `Last-Modified`), so the server refuses it with a `412` if the resource
///   changed since it was read: ``ServiceError/isPreconditionFailed``.
/// - `HEAD` and other methods pass through untouched.
///
/// Keep one instance per backend (and per user: call ``removeAll()`` when signing out
/// of an API that authenticates with cookies, which the cache cannot see). It is
/// thread-safe; concurrent requests for the same target each revalidate.
public final class CacheMiddleware: Middleware {
    /// The most responses kept.
    public let maxEntries: Int
    /// The most bytes kept: the bodies, header fields and paths of the stored responses.
    public let maxBytes: Int
    /// Whether `PUT`, `PATCH` and `DELETE` are made conditional on the stored validators
    /// of their path.
    public let conditionalWrites: Bool

    private let store: Locked<(entries: LRUStore<CacheKey, CacheEntry>, serial: UInt64)>

    /// Creates a cache bounded by `maxEntries` responses and `maxBytes` bytes.
    ///
    /// - Parameters:
    ///   - maxEntries: the most responses kept (256 by default); 0 keeps none.
    ///   - maxBytes: the most bytes kept (8 MiB by default); a single larger response is
    ///     not stored.
    ///   - conditionalWrites: send `If-Match` / `If-Unmodified-Since` with `PUT`,
    ///     `PATCH` and `DELETE` from the stored validators of the same path (off by
    ///     default).
    public init(maxEntries: Int = 256, maxBytes: Int = 8 << 20, conditionalWrites: Bool = false) {
        self.maxEntries = max(0, maxEntries)
        self.maxBytes = max(0, maxBytes)
        self.conditionalWrites = conditionalWrites
        store = Locked((LRUStore(maxCount: maxEntries, maxCost: maxBytes), 0))
    }

    /// How many responses are stored now.
    public var count: Int {
        store.withLock { $0.entries.count }
    }

    /// How many bytes the stored responses take now, as counted against ``maxBytes``.
    public var byteCount: Int {
        store.withLock { $0.entries.totalCost }
    }

    /// Forgets every stored response (when the user signs out, say).
    public func removeAll() {
        store.withLock { $0.entries.removeAll() }
    }

    /// Revalidates a `GET` with its stored validators, answers a `304` from the store,
    /// and keeps storage in step with writes; see the type's documentation.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        switch request.method {
        case .get: return read(request, next: next)
        case .post, .put, .patch, .delete: return write(request, next: next)
        default: return next(request)
        }
    }

    // MARK: - Reads

    private func read(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        guard !CachePolicy.forbidsStoring(request) else { return next(request) }
        let key = CacheKey(request)
        // The caller's own validators: the caller wants the 304 itself.
        guard !request.isConditional else {
            return Future { [self] completion in
                next(request).run { result in
                    completion(self.settle(result, of: request, key: key, using: nil))
                }
            }
        }
        // Looked up at each start: futures are cold, and the store changes between starts.
        return Future { [self] completion in
            let stored = store.withLock { store -> CacheEntry? in
                guard let entry = store.entries.value(for: key), entry.matches(request) else { return nil }
                return entry
            }
            let sent = stored?.revalidating(request) ?? request
            let work = SerialCancellable()
            work.setFirst(
                next(sent).run { result in
                    // A 304 naming another entity tag does not validate what is stored:
                    // forget it and ask once more, without validators.
                    if case .success(let response) = result, response.status == 304, let stored,
                        !stored.isValidated(by: response)
                    {
                        self.store.withLock { store in
                            if store.entries.peek(key)?.serial == stored.serial {
                                store.entries.removeValue(for: key)
                            }
                        }
                        work.set(
                            next(request).run {
                                completion(self.settle($0, of: request, key: key, using: nil))
                            })
                        return
                    }
                    completion(self.settle(result, of: request, key: key, using: stored))
                })
            return work
        }
    }

    /// The caller's outcome of a `GET`, storing, refreshing or dropping its entry.
    private func settle(
        _ result: Result<BackendResponse, ServiceError>, of request: BackendRequest, key: CacheKey,
        using stored: CacheEntry?
    ) -> Result<BackendResponse, ServiceError> {
        switch result {
        case .success(let response) where response.status == 304:
            guard let stored else { return result }
            let answer = stored.refreshed(by: response)
            store.withLock { store in
                // Only the entry that was revalidated is refreshed, not a newer one.
                guard store.entries.peek(key)?.serial == stored.serial else { return }
                var refreshed = stored
                refreshed.response = answer
                store.entries.insert(refreshed, cost: CacheEntry.cost(of: answer, key: key), for: key)
            }
            return .success(answer)
        case .success(let response):
            store.withLock { store in
                store.serial &+= 1
                if let entry = CachePolicy.entry(for: response, to: request, serial: store.serial) {
                    store.entries.insert(entry, cost: CacheEntry.cost(of: response, key: key), for: key)
                } else {
                    store.entries.removeValue(for: key)
                }
            }
            return result
        case .failure(.notFound):
            store.withLock { _ = $0.entries.removeValue(for: key) }
            return result
        case .failure:
            return result
        }
    }

    // MARK: - Writes

    private func write(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let conditionalWrites = conditionalWrites
        return Future { [self] completion in
            var sent = request
            if conditionalWrites, request.method != .post {
                sent = withPreconditions(request)
            }
            return next(sent).run { result in
                switch result {
                case .success:
                    self.invalidate(after: request)
                case .failure(let error) where error.isPreconditionFailed:
                    // What was stored is not what the server has any more.
                    self.invalidate(after: request)
                case .failure:
                    break
                }
                completion(result)
            }
        }
    }

    /// `request` with `If-Match` (a strong `ETag`) or else `If-Unmodified-Since` from the
    /// stored `GET` of its target, unless it carries either already.
    private func withPreconditions(_ request: BackendRequest) -> BackendRequest {
        guard !request.headers.contains("If-Match"), !request.headers.contains("If-Unmodified-Since"),
            let stored = store.withLock({ $0.entries.peek(CacheKey(request)) })
        else { return request }
        var request = request
        // RFC 9110 §13.1.1: If-Match compares strongly, so a weak tag would never match.
        if let tag = stored.entityTag, !tag.hasPrefix("W/") {
            request.headers["If-Match"] = tag
        } else if let lastModified = stored.lastModified {
            request.headers["If-Unmodified-Since"] = lastModified
        }
        return request
    }

    /// Drops the entries of the written path and of the collection above it.
    private func invalidate(after request: BackendRequest) {
        let resource = CacheKey.resource(of: request.path)
        let collection = resource.lastIndex(of: "/").map { resource[..<$0] }
        store.withLock { store in
            _ = store.entries.removeAll { key in
                let stale = key.resource
                return stale == resource || (collection.map { stale == $0 } ?? false)
            }
        }
    }
}
