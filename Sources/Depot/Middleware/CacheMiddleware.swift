import Foundation

/// Remembers the validators (`ETag`, `Last-Modified`) of `GET` answers, revalidates with
/// them, and answers a `304 Not Modified` from the stored body: the server sends no body
/// again, and the caller gets the `200` it would have got. Every `GET` still goes out.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: url).with(.retry(), auth, CacheMiddleware(maxEntries: 500))
/// ```
///
/// What it stores, and where it goes in the chain: the article *Conditional Requests and Caching*.
public final class CacheMiddleware: Middleware {
    /// Where the responses and their validators are kept.
    public let storage: any ResponseStorage
    /// Whether `PUT`, `PATCH` and `DELETE` are made conditional on the stored validators
    /// of their path.
    public let conditionalWrites: Bool
    /// Whose answer a request gets: the ``StoredResponseKey/account`` of its entry.
    private let partition: @Sendable (BackendRequest) -> String
    /// Counts ``removeAll()`` calls; held while an answer is stored, so that the answer of a
    /// request started before a sign-out is never stored after it.
    private let generation = Locked(0)

    /// Creates a cache in memory, bounded by `maxEntries` responses and `maxBytes` bytes,
    /// with entries kept per `Authorization` value.
    ///
    /// - Parameters:
    ///   - maxEntries: the most responses kept (256 by default); 0 keeps none.
    ///   - maxBytes: the most bytes kept (8 MiB by default); a single larger response is
    ///     not stored.
    ///   - conditionalWrites: send `If-Match` / `If-Unmodified-Since` with `PUT`,
    ///     `PATCH` and `DELETE` from the stored validators of the same path (off by
    ///     default).
    public convenience init(maxEntries: Int = 256, maxBytes: Int = 8 << 20, conditionalWrites: Bool = false) {
        // In memory only: the credential itself tells users apart and never reaches a file.
        self.init(
            storage: InMemoryResponseStorage(maxEntries: maxEntries, maxBytes: maxBytes),
            conditionalWrites: conditionalWrites,
            partition: { $0.headers.values(for: "Authorization").joined(separator: "\n") })
    }

    /// Creates a cache that keeps its responses and validators in `storage`, per `account`.
    ///
    /// ```swift
    /// let store = try OfflineStore(at: appSupport.appending(path: "depot.sqlite"))
    /// let cache = CacheMiddleware(
    ///     storage: OfflineResponseStorage(store: store), account: { session.userID })
    /// let backend = URLSessionBackend(baseURL: api).with(auth, cache)
    /// ```
    ///
    /// - Parameters:
    ///   - storage: where entries are kept; its bounds are the cache's. DepotOffline's
    ///     `OfflineResponseStorage` keeps them across restarts.
    ///   - account: whose answers are being stored and revalidated: an identifier the app
    ///     chooses (a user id), never a credential; `{ "" }` for an API without users.
    ///     Entries stored for one account never revalidate a request of another.
    ///   - conditionalWrites: as in ``init(maxEntries:maxBytes:conditionalWrites:)``.
    public convenience init(
        storage: any ResponseStorage, account: @escaping @Sendable () -> String,
        conditionalWrites: Bool = false
    ) {
        self.init(storage: storage, conditionalWrites: conditionalWrites, partition: { _ in account() })
    }

    private init(
        storage: any ResponseStorage, conditionalWrites: Bool,
        partition: @escaping @Sendable (BackendRequest) -> String
    ) {
        self.storage = storage
        self.conditionalWrites = conditionalWrites
        self.partition = partition
    }

    /// The most responses kept: the storage's bound.
    public var maxEntries: Int {
        storage.maxEntries
    }

    /// The most bytes kept: the bodies, header fields and keys of the stored responses.
    public var maxBytes: Int {
        storage.maxBytes
    }

    /// How many responses are stored now (0 when the storage cannot tell).
    public var count: Int {
        (try? storage.count()) ?? 0
    }

    /// How many bytes the stored responses take now, as counted against ``maxBytes`` (0
    /// when the storage cannot tell).
    public var byteCount: Int {
        (try? storage.totalBytes()) ?? 0
    }

    /// Forgets every stored response (when the user signs out, say): everything in
    /// ``storage``, so also what other middleware keeps there. To learn of a disk failure,
    /// call the storage's own `removeAllResponses()`, which throws.
    public func removeAll() {
        generation.withLock { $0 += 1 }
        try? storage.removeAllResponses()
    }

    /// Runs `change` on the storage unless ``removeAll()`` was called since `started`.
    private func change(since started: Int, _ change: () throws -> Void) {
        generation.withLock { current in
            guard current == started else { return }
            try? change()
        }
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

    /// The key of the stored `GET` for the same target as `request` (whatever its method).
    private func key(for request: BackendRequest) -> StoredResponseKey {
        StoredResponseKey(method: .get, path: request.path, query: request.query, account: partition(request))
    }

    // MARK: - Reads

    private func read(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        guard !CachePolicy.forbidsStoring(request) else { return next(request) }
        // The caller's own validators: the caller wants the 304 itself.
        guard !request.isConditional else {
            return Future { [self] completion in
                let key = key(for: request)
                let started = generation.withLock { $0 }
                return next(request).run { result in
                    completion(self.settle(result, of: request, key: key, using: nil, started: started))
                }
            }
        }
        // Looked up at each start: futures are cold, and the storage changes between starts.
        return Future { [self] completion in
            let key = key(for: request)
            let started = generation.withLock { $0 }
            let stored = (try? storage.response(for: key)).flatMap { $0.matches(request) ? $0 : nil }
            // A watch's first look (``LiveWatch``): what is stored, without asking the network.
            if request.context.storedOnly {
                request.context.reads?.noteStoreConsulted()
                guard let stored else {
                    completion(.failure(.noConnection))
                    return NotCancellable()
                }
                request.context.receipt?.record(.stored(savedAt: stored.storedAt))
                completion(.success(stored.response))
                return NotCancellable()
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
                        _ = try? self.storage.replaceResponse(stored, with: nil, for: key)
                        work.set(
                            next(request).run {
                                completion(
                                    self.settle($0, of: request, key: key, using: nil, started: started))
                            })
                        return
                    }
                    completion(self.settle(result, of: request, key: key, using: stored, started: started))
                })
            return work
        }
    }

    /// The caller's outcome of a `GET`, storing, refreshing or dropping its entry.
    private func settle(
        _ result: Result<BackendResponse, ServiceError>, of request: BackendRequest, key: StoredResponseKey,
        using stored: StoredResponse?, started: Int
    ) -> Result<BackendResponse, ServiceError> {
        switch result {
        case .success(let response) where response.status == 304:
            guard let stored else { return result }
            let answer = stored.refreshed(by: response)
            // Only the entry that was revalidated is refreshed, not a newer one; confirmed
            // by the server now, so stored now.
            change(since: started) {
                try storage.replaceResponse(
                    stored, with: StoredResponse(answer, varying: stored.varying), for: key)
            }
            return .success(answer)
        case .success(let response):
            change(since: started) {
                if let entry = CachePolicy.storable(response, to: request, at: Date()) {
                    try storage.store(entry, for: key)
                } else {
                    try storage.removeResponse(for: key)
                }
            }
            return result
        case .failure(.notFound):
            _ = try? storage.removeResponse(for: key)
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
            let stored = try? storage.response(for: key(for: request))
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

    /// Drops the entries of the written resource, of the record an action was on
    /// (`posts/7` for `posts/7/publish`) and of the collection the record is in, as the
    /// request's resource says them (and, for a resource without a record id, of the path
    /// above it, as before resources were typed).
    private func invalidate(after request: BackendRequest) {
        let resource = request.resource
        // The path as sent too: answers are stored under it (an absolute URL's, say).
        var written = [resource.path, StoredResponseKey.resource(of: request.path)]
        if let record = resource.recordSegments { written.append(PathSegment.join(Array(record))) }
        written.append(resource.collectionPath)
        // A bare path the resource reads no id from (`v2/posts/7`): the path above it too.
        if resource.id == nil, resource.segments.count > 1 {
            written.append(PathSegment.join(Array(resource.segments.dropLast())))
        }
        for path in Set(written) { _ = try? storage.removeResponses(forResource: path) }
    }
}
