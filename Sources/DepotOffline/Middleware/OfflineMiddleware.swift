import Depot
import Dispatch
import Foundation
import JSONServerEngine

/// Keeps an app working when the network does not: `GET` answers are stored in an
/// ``OfflineStore`` and served when the server cannot be reached, and writes that cannot be
/// sent are queued in the store's ``Outbox`` to be sent later.
///
/// ```swift
/// let store = try OfflineStore(at: appSupport.appending(path: "depot.sqlite"))
/// let backend = URLSessionBackend(baseURL: api).with(.offline(store), auth, .retry())
/// let posts = PostRepository(backend: backend)          // unchanged repository code
/// ```
///
/// Put it first, in front of authentication, and give each API a store of its own. An
/// `AnswerReceipt` tells a call that the store answered it, and how old the answer is;
/// the header fields and query items ``OfflinePolicy/redaction`` names never reach the file;
/// transfers pass through. <doc:WorkingOffline> tells the whole story.
public struct OfflineMiddleware: Middleware {
    /// The store responses and queued writes are kept in.
    public let store: OfflineStore
    /// What is kept and when it is served.
    public let policy: OfflinePolicy
    let responses: OfflineResponseStorage

    /// A middleware that stores responses and queues writes in `store`.
    public init(store: OfflineStore, policy: OfflinePolicy = OfflinePolicy()) {
        self.store = store
        self.policy = policy
        self.responses = OfflineResponseStorage(
            store: store, maxEntries: policy.maxEntries, maxBytes: policy.maxBytes)
    }

    /// Stores and serves `GET` answers, queues writes that cannot be sent, and passes
    /// everything else on.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        // A replay's own request, sent through a chain that includes this middleware again.
        if store.replayer.sends(request) { return next(request) }
        // While writes are queued, a success through it starts a replay.
        let next = store.replayer.relay(next, policy: policy)
        // Files are not stored: a download's answer is on disk already, and an upload's
        // file may be gone by the time a replay would read it.
        if request.bodyFile != nil || request.destination != nil { return next(request) }
        // A record created offline that has reached the server is asked for by the server's id.
        let request = store.outbox.rewritingLocalIDs(request)
        switch request.method {
        case .get: return readApplyingPendingWrites(request, next: next)
        case .post, .put, .patch, .delete:
            guard policy.queuesWrite(request), !policy.redaction.carriesSecretInURL(request) else {
                return next(request)
            }
            return write(request, next: next)
        default: return next(request)
        }
    }

    /// A write, sent or queued by the outbox; with ``OfflinePolicy/answersQueuedWrites``, a
    /// queued one answered as if the server had applied it.
    private func write(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        // What the write is made on, read only if it is queued.
        let base: @Sendable () -> WriteBase? = { [self] in
            request.method == .post ? nil : shownRecord(for: request)?.base
        }
        let sent = refreshingStoredRecord(
            store.replayer.send(request, through: next, policy: policy, base: base), for: request)
        guard policy.answersQueuedWrites else { return sent }
        let receipt = request.context.receipt
        return Future { [self] promise in
            sent.start { result in
                guard case .failure(.queued(let write)) = result else { return promise(result) }
                receipt?.record(pendingWrites: 1)
                promise(.success(localAnswer(to: request, queued: write)))
            }
        }
    }

    /// `sent`, which stores the server's answer to a `PUT` or `PATCH` of a record as the
    /// record's stored answer when it is the whole record (a `200` with a JSON object of the
    /// record's id), so that what the user edits next offline is made on it (its base), not on
    /// the record as it was before this write. The answer is parsed as a full parse parses it,
    /// but only its `id` is kept: the object's own dictionary is not built (every online write
    /// pays for this look).
    private func refreshingStoredRecord(
        _ sent: Future<BackendResponse, ServiceError>, for request: BackendRequest
    ) -> Future<BackendResponse, ServiceError> {
        guard request.method == .put || request.method == .patch else { return sent }
        let resource = request.resource
        guard let id = resource.id, resource.action.isEmpty else { return sent }
        let writer = store.responseWriter
        let responses = responses
        let policy = policy
        return Future { promise in
            // Answers to requests started before a `removeAll()` are not stored after it.
            let generation = writer.generation
            let requestedAt = Date()
            return sent.start { result in
                if case .success(let response) = result, response.status == 200,
                    JSONServerRules.idText(ofObject: response.body) == id
                {
                    var read = BackendRequest(method: .get, path: request.path)
                    read.address(resource)
                    let key = StoredResponseKey(
                        method: .get, path: request.path, query: [], account: policy.account())
                    writer.storeAnswer(
                        response, to: read, key: key, requestedAt: requestedAt, policy: policy,
                        in: responses, generation: generation)
                }
                promise(result)
            }
        }
    }

    /// What a queued write answers in optimistic mode: `201` with the local record and a
    /// `Location` of its local id for a create; `200` with the record as reads now show it
    /// for `PUT` and `PATCH`; `200` with `{}` for `DELETE`.
    private func localAnswer(to request: BackendRequest, queued write: QueuedWrite) -> BackendResponse {
        var headers = BackendResponse.jsonHeaders()
        switch request.method {
        case .post:
            if let id = JSONServerRules.idText(write.localID) {
                headers["Location"] = request.resource.path + "/" + PathSegment.encode(id)
            }
            let record = write.localRecord.map { JSONServerRules.encode(value: $0) } ?? Data("{}".utf8)
            return BackendResponse(status: 201, headers: headers, body: record)
        case .put, .patch:
            if let shown = shownRecord(for: request) {
                return BackendResponse(
                    status: 200, headers: headers, body: JSONServerRules.encode(shown.record))
            }
            return BackendResponse(status: 200, headers: headers, body: request.body ?? Data("{}".utf8))
        default:
            return BackendResponse(status: 200, headers: headers, body: Data("{}".utf8))
        }
    }

    /// A `GET` answered as if the writes waiting in the outbox had been applied (see
    /// ``Overlay``): a record created offline from its create, without asking the server;
    /// anything else as ``read(_:next:)`` answers it, with the pending writes laid over.
    private func readApplyingPendingWrites(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let outbox = store.outbox
        let resource = request.resource.path
        // Nothing waits for this path, nothing was sent to it lately: the read as it is.
        let (pending, _, sent) = outbox.overlay()
        guard
            pending.touches(resource) || sent.touches(resource)
                || Overlay.filtersOnLocalRecord(request.query, pending: pending)
        else { return read(request, next: next) }
        let receipt = request.context.receipt
        let servedFromStore = Locked<Date?>(nil)
        let lay = {
            @Sendable (answer: Result<BackendResponse, ServiceError>?) -> Result<
                BackendResponse, ServiceError
            >? in
            // The writes still waiting when the answer is there (a replay may have sent some).
            let (pending, _, sent) = outbox.overlay()
            var recordWrites = pending.writes(toRecord: resource)
            var listWrites = pending.writes(toCollection: resource)
            // An answer from the store, or none because the server could not be reached,
            // misses what the server accepted since; the server's own answer (a `404` for a
            // record deleted since, too) holds it already.
            let storedAt = servedFromStore.withLock { $0 }
            let unanswered: Bool
            switch answer {
            case nil: unanswered = true
            case .failure(let error)?: unanswered = StoredResponse.mayReplace(error)
            case .success?: unanswered = false
            }
            if storedAt != nil || unanswered {
                let since = sent.sent(after: storedAt ?? .distantPast)
                recordWrites = since.writes(toRecord: resource) + recordWrites
                listWrites = since.writes(toCollection: resource) + listWrites
            }
            var laid: Overlay.Laid?
            if !recordWrites.isEmpty {
                laid = Overlay.record(answer, writes: recordWrites, request: request)
            } else if case .success(let response)? = answer {
                laid = Overlay.listing(response, query: request.query, writes: listWrites)
            } else if case .failure(let error)? = answer, StoredResponse.mayReplace(error),
                Overlay.filtersOnLocalRecord(request.query, pending: pending)
            {
                // Records of a record created offline: the server holds none yet.
                laid = Overlay.listing(Overlay.emptyListing, query: request.query, writes: listWrites)
            }
            guard let laid else { return answer }
            receipt?.record(pendingWrites: laid.applied)
            return laid.result
        }
        // A record created offline: the server has not heard of it.
        if let first = pending.writes(toRecord: resource).first, first.method == .post, let local = lay(nil) {
            return Future(result: local)
        }
        let base = read(request, next: next, servedFromStore: servedFromStore)
        return Future { promise in
            base.start { result in promise(lay(result) ?? result) }
        }
    }

    /// A `GET`: sent on; its response stored, or the stored response served when it fails
    /// (and then when it was stored put in `servedFromStore`).
    private func read(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>,
        servedFromStore: Locked<Date?>? = nil
    ) -> Future<BackendResponse, ServiceError> {
        let responses = responses
        let writer = store.responseWriter
        let policy = policy
        return Future { promise in
            let key = StoredResponseKey(
                method: .get, path: request.path, query: request.query, account: policy.account())
            // The caller's receipt, if it collects one.
            let receipt = request.context.receipt
            // Responses to requests started before a `removeAll()` are not stored after it.
            let generation = writer.generation
            // A watch's first look: the stored response, without asking the network.
            let storedOnly = request.context.storedOnly
            if storedOnly { request.context.reads?.noteStoreConsulted() }
            let requestedAt = Date()
            let sent = storedOnly ? Future(result: .failure(.noConnection)) : next(request)
            return sent.start { result in
                switch result {
                case .success(let response):
                    receipt?.record(.network)
                    // Stored before the caller hears of it, so a read the caller makes next
                    // finds it, written or not.
                    writer.storeAnswer(
                        response, to: request, key: key, requestedAt: requestedAt, policy: policy,
                        in: responses, generation: generation)
                    promise(.success(response))
                case .failure(let error):
                    guard StoredResponse.mayReplace(error) else {
                        promise(.failure(error))
                        return
                    }
                    // A response waiting to be written is found in memory; one that left memory
                    // is already committed. Either way on this thread, not the writer's queue.
                    let now = Date()
                    guard let stored = try? responses.response(for: key),
                        stored.serves(instead: error, policy: policy, now: now)
                    else {
                        promise(.failure(error))
                        return
                    }
                    receipt?.record(.stored(savedAt: stored.storedAt))
                    servedFromStore?.withLock { $0 = stored.storedAt }
                    promise(.success(stored.served(now: now)))
                }
            }
        }
    }
}

extension OfflineMiddleware: ChainAttached, ChangeSource {
    /// Fixes the chain behind as the one the store's replays go through (the chain made last,
    /// when one store is put in several).
    package func attach(to next: any Backend) {
        store.replayer.bind({ next.send($0) }, policy: policy)
    }

    /// The store's: every middleware of one store reports the same changes.
    package var changeSource: AnyObject { store }

    /// What the store's replays send, create and roll back, entries the app retries or
    /// discards, and writes queued through another chain.
    package func subscribeChanges(_ publish: @escaping @Sendable (ChangeFeed.Publication) -> Void)
        -> ChangeFeed.Subscription
    {
        store.outbox.subscribeChanges(publish)
    }
}

extension Middleware where Self == OfflineMiddleware {
    /// Stores `GET` answers in `store` and serves them when the network fails, and queues
    /// writes that cannot be sent in its outbox; see ``DepotOffline/OfflineMiddleware``. List it first.
    public static func offline(_ store: OfflineStore, policy: OfflinePolicy = OfflinePolicy())
        -> OfflineMiddleware
    {
        OfflineMiddleware(store: store, policy: policy)
    }
}
