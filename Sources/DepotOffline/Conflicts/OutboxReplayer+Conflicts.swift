import Depot
import Foundation
import JSONServerEngine

/// Sending one entry in a replay: as made, or, for a write made on a record the store had
/// read (its ``WriteBase``), after checking that nobody else changed that record since.
extension OutboxReplayer {
    /// What became of one entry of a replay.
    struct Delivery {
        enum Outcome {
            /// The server accepted the write (as made, merged, or as the policy decided).
            case sent(BackendResponse)
            /// The server refused it (a 4xx it decided).
            case refused(ServiceError)
            /// A conflict the policy keeps for the app.
            case keep(OutboxConflict)
            /// A conflict the policy drops the write for.
            case drop(OutboxConflict)
            /// No decision of the server's: the replay stops, the entry stays queued.
            case interrupted(ServiceError)
        }

        var outcome: Outcome
        /// The conflict found on the way, if one was.
        var conflict: OutboxConflict?
        /// The method of the request sent, when it is not the entry's (a `DELETE` the policy's
        /// ``ConflictPolicy/merge(_:)`` turned into a `PUT`): what the server applied.
        var sentMethod: HTTPMethod?

        /// The outcome of sending the entry's request: `result`.
        init(_ result: Result<BackendResponse, ServiceError>, conflict: OutboxConflict? = nil) {
            switch result {
            case .success(let response): outcome = .sent(response)
            case .failure(let error) where OutboxReplayer.isRefusal(error): outcome = .refused(error)
            case .failure(let error): outcome = .interrupted(error)
            }
            self.conflict = conflict
        }

        init(_ outcome: Outcome, conflict: OutboxConflict?) {
            self.outcome = outcome
            self.conflict = conflict
        }
    }

    /// How many times a replay reads, merges and sends one write when the record changes again
    /// between its read and its conditional write, before it keeps the write with the `412`.
    static let conditionalRounds = 3

    /// Sends `entry` through `send`, with its local ids rewritten and a context of its own (no
    /// caller's receipt or watch; marked as this replay's).
    ///
    /// A `PUT`, `PATCH` or `DELETE` with a base is first checked: sent with `If-Match` (or
    /// `If-Unmodified-Since`) where the base has a validator, and on a `412`, or where it has
    /// none, the record is read and compared with the base (``ThreeWayMerge``): unchanged,
    /// the write goes as made; changed in other fields, the merged record goes; a collision
    /// is decided by the policy's ``OfflinePolicy/onConflict``.
    func deliver(_ entry: OutboxEntry, through send: Send) async -> Delivery {
        var request = outbox.rewritingLocalIDs(entry.request)
        request.context = RequestContext(
            receipt: nil, storedOnly: false, reads: nil, replay: ObjectIdentifier(self))
        // No base, or a precondition of the app's own (its `If-Match`): sent as made.
        guard let written = entry.writeBase, entry.method != .post, !Self.hasPrecondition(request) else {
            return Delivery(await send(request).result)
        }
        // The base as the server knows its ids (local ids it has named since).
        let base = outbox.overlay().localIDs.rewriting(
            members: written.record, keys: request.resource.foreignKeys)
        // The server's refusal of the conditional write, when there was one: what the write
        // gets when the server's record cannot be compared.
        var refusal: Result<BackendResponse, ServiceError>?
        if written.hasValidator {
            let result = await send(written.conditional(request)).result
            // A `412`, or a record gone (`404`, `410`): read what the server holds.
            guard case .failure(let error) = result, error.isPreconditionFailed || Self.isGone(error) else {
                return Delivery(result)
            }
            refusal = result
        }
        let policy = outbox.state.withLock { $0.policy }
        var conflict: OutboxConflict?
        var lastResult: Result<BackendResponse, ServiceError>?
        for _ in 0..<Self.conditionalRounds {
            let theirs: Theirs
            let mine: [String: JSONValue]?
            switch (await read(request, through: send), Self.mine(request, on: base)) {
            case (.failed(let error), _): return Delivery(.interrupted(error), conflict: nil)
            // A record or a body that cannot be compared: the server decides, its refusal of the
            // conditional write standing.
            case (.undecided, _), (_, .unreadable):
                if let refusal { return Delivery(refusal) }
                return Delivery(await send(request).result)
            case (.found(let found), .record(let record)): (theirs, mine) = (found, record)
            case (.found(let found), .deletes): (theirs, mine) = (found, nil)
            }
            var outgoing: BackendRequest
            switch ThreeWayMerge.merge(base: base, mine: mine, theirs: theirs.record) {
            case .unchanged:
                outgoing = theirs.conditional(request)
            case .merged(let record, let changes):
                outgoing = theirs.conditional(
                    Self.replacingBody(
                        of: request, with: request.method == .patch ? changes : record,
                        method: request.method == .patch ? .patch : .put))
            case .alreadyGone:
                // Deleted on both sides, as far as the read tells: the delete is still sent (an
                // API may answer it where it reads no record), and a `404` or `410` is done.
                let result = await send(request).result
                if case .failure(let error) = result, Self.isGone(error) {
                    return Delivery(.sent(Self.response(of: error)), conflict: nil)
                }
                return Delivery(result)
            case .alreadyApplied:
                // The record holds the user's changes already: the read's answer is the write's.
                return Delivery(.sent(theirs.response), conflict: nil)
            case .conflict(let kind, let fields):
                let found = OutboxConflict(
                    kind: kind, fields: fields, base: .object(base), mine: mine.map { .object($0) },
                    theirs: theirs.record.map { .object($0) })
                conflict = found
                switch policy.onConflict.rule {
                case .keepForApp:
                    return Delivery(.keep(found), conflict: found)
                case .serverWins:
                    storeRecord(theirs, read: Self.readRequest(for: request), policy: policy)
                    return Delivery(.drop(found), conflict: found)
                case .clientWins:
                    outgoing = request
                case .merge(let resolve):
                    guard case .object(let record)? = resolve(found) else {
                        storeRecord(theirs, read: Self.readRequest(for: request), policy: policy)
                        return Delivery(.drop(found), conflict: found)
                    }
                    // The app's record may name records by local ids the server has named since.
                    outgoing = outbox.rewritingLocalIDs(
                        Self.replacingBody(of: request, with: record, method: .put))
                }
            }
            let result = await send(outgoing).result
            // Changed again between the read and the conditional write: read again.
            if case .failure(let error) = result, error.isPreconditionFailed, Self.hasPrecondition(outgoing) {
                lastResult = result
                continue
            }
            var delivery = Delivery(result, conflict: conflict)
            if outgoing.method != entry.method { delivery.sentMethod = outgoing.method }
            return delivery
        }
        return Delivery(
            lastResult ?? .failure(.invalidRequest("the record kept changing")), conflict: conflict)
    }

    /// The server's record when a replay read it.
    struct Theirs {
        /// The record; `nil` when the server no longer has it (`404`, `410`).
        var record: [String: JSONValue]?
        /// The read's answer (the `404` for a record gone).
        var response: BackendResponse
        /// When the read was sent.
        var requestedAt: Date

        /// `request` made conditional on the record read, where the answer gave a validator.
        func conditional(_ request: BackendRequest) -> BackendRequest {
            guard let record else { return request }
            return WriteBase(record: record, stored: response, laidOver: false).conditional(request)
        }
    }

    /// What reading the record before a write found.
    enum Read {
        case found(Theirs)
        /// An answer that cannot be compared (not a JSON object, a 4xx other than 404 and
        /// 410): the server decides on the write.
        case undecided
        /// No decision of the server's: the replay stops.
        case failed(ServiceError)
    }

    /// Reads the record `write` changes, through `send`, with the write's context.
    func read(_ write: BackendRequest, through send: Send) async -> Read {
        let requestedAt = Date()
        switch await send(Self.readRequest(for: write)).result {
        case .success(let response):
            guard case .object(let record)? = JSONServerRules.parse(response.body) else { return .undecided }
            return .found(Theirs(record: record, response: response, requestedAt: requestedAt))
        case .failure(let error) where Self.isGone(error):
            return .found(Theirs(record: nil, response: Self.response(of: error), requestedAt: requestedAt))
        case .failure(let error) where Self.isRefusal(error):
            return .undecided
        case .failure(let error):
            return .failed(error)
        }
    }

    /// The answer an HTTP error carries (its status, header fields and body).
    static func response(of error: ServiceError) -> BackendResponse {
        let failure = error.response
        return BackendResponse(
            status: failure?.status ?? error.statusCode ?? 404, headers: failure?.headers ?? HTTPHeaders(),
            body: failure?.body ?? Data())
    }

    /// Whether `request` carries a precondition (`If-Match`, `If-Unmodified-Since`).
    static func hasPrecondition(_ request: BackendRequest) -> Bool {
        request.headers.contains("If-Match") || request.headers.contains("If-Unmodified-Since")
    }

    /// Whether `error` says the record is gone: `404` or `410`.
    static func isGone(_ error: ServiceError) -> Bool {
        error.statusCode == 404 || error.statusCode == 410
    }

    /// The `GET` of the record `write` changes: its path, resource and context, no body, and
    /// `Cache-Control: no-cache`, so that no cache behind the middleware (nor the URL loading
    /// system's) answers it with a copy: the comparison needs the server's record.
    static func readRequest(for write: BackendRequest) -> BackendRequest {
        var read = BackendRequest(method: .get, path: write.path, query: write.query)
        read.headers["Cache-Control"] = "no-cache"
        read.address(write.resource)
        read.context = write.context
        read.isRetryable = true
        return read
    }

    /// What a write makes of the record it was made on.
    enum Mine {
        /// The record as the write leaves it.
        case record([String: JSONValue])
        /// The write deletes it.
        case deletes
        /// The write's body is not a JSON object: it cannot be compared.
        case unreadable
    }

    /// The record as `write` (its local ids rewritten) leaves `base`: a `PUT`'s record, `base`
    /// with a `PATCH` merged in.
    static func mine(_ write: BackendRequest, on base: [String: JSONValue]) -> Mine {
        if write.method == .delete { return .deletes }
        guard let body = write.body, case .object(let members)? = JSONServerRules.parse(body) else {
            return .unreadable
        }
        if write.method == .patch { return .record(JSONServerRules.merging(members, into: base)) }
        return .record(JSONServerRules.replacing(id: base["id"], with: members))
    }

    /// `request` sending `members` with `method`, under an `Idempotency-Key` of its own made
    /// from the first one and the new body: a server that keeps keys refuses one key reused
    /// with another body, and the same merged body sent again after a crash keeps its key. A
    /// body that says what the write's own says (the write reached the server before a crash,
    /// and the merge changed nothing of it) leaves the write as it is, with its first key.
    static func replacingBody(
        of request: BackendRequest, with members: [String: JSONValue], method: HTTPMethod
    ) -> BackendRequest {
        if method == request.method,
            let own = request.body.flatMap({ JSONServerRules.parse($0)?.objectValue }),
            own.filter({ $0.key != "id" }) == members.filter({ $0.key != "id" })
        {
            return request
        }
        var request = request
        let body = JSONServerRules.encode(members)
        request.method = method
        request.body = body
        request.headers["Content-Type"] = "application/json"
        if let key = request.headers[Outbox.idempotencyKeyField] {
            request.headers[Outbox.idempotencyKeyField] = key + "-" + Self.fingerprint(body)
        }
        return request
    }

    /// FNV-1a of `bytes` as 16 hexadecimal digits: the same in every process.
    static func fingerprint(_ bytes: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Stores the server's record as a replay read it as the answer to `read` (or, for a
    /// record gone, removes the stored one), so reads show it once the write that hid it is
    /// dropped.
    func storeRecord(_ theirs: Theirs, read: BackendRequest, policy: OfflinePolicy) {
        guard let store else { return }
        let storage = OfflineResponseStorage(
            store: store, maxEntries: policy.maxEntries, maxBytes: policy.maxBytes)
        let key = StoredResponseKey(
            method: .get, path: read.path, query: read.query, account: policy.account())
        guard theirs.record != nil else {
            _ = try? storage.removeResponse(for: key)
            return
        }
        store.responseWriter.storeAnswer(
            theirs.response, to: read, key: key, requestedAt: theirs.requestedAt, policy: policy,
            in: storage, generation: store.responseWriter.generation)
    }
}
