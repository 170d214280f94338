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
        guard let base = entry.writeBase, entry.method != .post else {
            return Delivery(await send(request).result)
        }
        if base.hasValidator {
            let result = await send(base.conditional(request)).result
            // A `412`, or a record gone (`404`, `410`): read what the server holds.
            guard case .failure(let error) = result, error.isPreconditionFailed || Self.isGone(error) else {
                return Delivery(result)
            }
        }
        let policy = outbox.state.withLock { $0.policy }
        var conflict: OutboxConflict?
        var lastResult: Result<BackendResponse, ServiceError>?
        for _ in 0..<Self.conditionalRounds {
            let theirs: Theirs
            switch await read(request, through: send) {
            case .found(let found): theirs = found
            case .undecided: return Delivery(await send(request).result)
            case .failed(let error): return Delivery(.interrupted(error), conflict: nil)
            }
            let mine: [String: JSONValue]?
            switch Self.mine(entry, on: base.record) {
            case .record(let record): mine = record
            case .deletes: mine = nil
            // A body that is not a JSON object cannot be compared: the server decides.
            case .unreadable: return Delivery(await send(request).result)
            }
            var outgoing: BackendRequest
            switch ThreeWayMerge.merge(base: base.record, mine: mine, theirs: theirs.record) {
            case .unchanged:
                outgoing = theirs.conditional(request)
            case .merged(let record, let changes):
                outgoing = theirs.conditional(
                    Self.replacingBody(
                        of: request, with: entry.method == .patch ? changes : record,
                        method: entry.method == .patch ? .patch : .put))
            case .alreadyGone:
                // Deleted on both sides: nothing is left to send.
                return Delivery(.sent(theirs.response), conflict: nil)
            case .conflict(let kind, let fields):
                let found = OutboxConflict(
                    kind: kind, fields: fields, base: .object(base.record), mine: mine.map { .object($0) },
                    theirs: theirs.record.map { .object($0) })
                conflict = found
                switch policy.onConflict.rule {
                case .keepForApp:
                    return Delivery(.keep(found), conflict: found)
                case .serverWins:
                    storeRecord(theirs.response, read: Self.readRequest(for: request), policy: policy)
                    return Delivery(.drop(found), conflict: found)
                case .clientWins:
                    outgoing = request
                case .merge(let resolve):
                    guard case .object(let record)? = resolve(found) else {
                        storeRecord(theirs.response, read: Self.readRequest(for: request), policy: policy)
                        return Delivery(.drop(found), conflict: found)
                    }
                    outgoing = Self.replacingBody(of: request, with: record, method: .put)
                }
            }
            let result = await send(outgoing).result
            // Changed again between the read and the conditional write: read again.
            if case .failure(let error) = result, error.isPreconditionFailed,
                outgoing.headers.contains("If-Match") || outgoing.headers.contains("If-Unmodified-Since")
            {
                lastResult = result
                continue
            }
            return Delivery(result, conflict: conflict)
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
        /// 410): the write is sent as made, and the server decides.
        case undecided
        /// No decision of the server's: the replay stops.
        case failed(ServiceError)
    }

    /// Reads the record `write` changes, through `send`, with the write's context.
    func read(_ write: BackendRequest, through send: Send) async -> Read {
        switch await send(Self.readRequest(for: write)).result {
        case .success(let response):
            guard case .object(let record)? = JSONServerRules.parse(response.body) else { return .undecided }
            return .found(Theirs(record: record, response: response))
        case .failure(let error) where Self.isGone(error):
            let failure = error.response
            let response = BackendResponse(
                status: failure?.status ?? 404, headers: failure?.headers ?? HTTPHeaders(),
                body: failure?.body ?? Data())
            return .found(Theirs(record: nil, response: response))
        case .failure(let error) where Self.isRefusal(error):
            return .undecided
        case .failure(let error):
            return .failed(error)
        }
    }

    /// Whether `error` says the record is gone: `404` or `410`.
    static func isGone(_ error: ServiceError) -> Bool {
        error.statusCode == 404 || error.statusCode == 410
    }

    /// The `GET` of the record `write` changes: its path, resource and context, no body, and
    /// `Cache-Control: no-cache`, so that no cache behind the middleware answers it with a
    /// copy (the comparison needs the server's record).
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

    /// The record as `entry` leaves `base`: a `PUT`'s record, `base` with a `PATCH` merged in.
    static func mine(_ entry: OutboxEntry, on base: [String: JSONValue]) -> Mine {
        if entry.method == .delete { return .deletes }
        guard let body = entry.body, case .object(let members)? = JSONServerRules.parse(body) else {
            return .unreadable
        }
        if entry.method == .patch { return .record(JSONServerRules.merging(members, into: base)) }
        return .record(JSONServerRules.replacing(id: base["id"], with: members))
    }

    /// `request` sending `members` with `method`, under an `Idempotency-Key` of its own made
    /// from the first one and the new body: a server that keeps keys refuses one key reused
    /// with another body, and the same merged body sent again after a crash keeps its key.
    static func replacingBody(
        of request: BackendRequest, with members: [String: JSONValue], method: HTTPMethod
    ) -> BackendRequest {
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

    /// Stores `response`, the server's record as a replay read it, as the answer to `read`, so
    /// reads show it once the write that hid it is dropped.
    func storeRecord(_ response: BackendResponse, read: BackendRequest, policy: OfflinePolicy) {
        guard let store, response.status == 200 else { return }
        let storage = OfflineResponseStorage(
            store: store, maxEntries: policy.maxEntries, maxBytes: policy.maxBytes)
        let key = StoredResponseKey(
            method: .get, path: read.path, query: read.query, account: policy.account())
        store.responseWriter.storeAnswer(
            response, to: read, key: key, policy: policy, in: storage,
            generation: store.responseWriter.generation)
    }
}
