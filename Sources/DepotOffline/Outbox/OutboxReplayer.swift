import Depot
import Dispatch
import Foundation

/// The sending side of a store's ``Outbox``: sends writes through the rest of the
/// `.offline(store)` middleware's chain, queues the ones that fail before any answer, and
/// replays the queued entries, one at a time, in order.
///
/// One per ``OfflineStore``, whichever middleware uses it: a replay holds the store's sender
/// lease, so two replayers on one outbox could both believe they hold it. The middleware
/// fixes the rest of its chain here when the chain is made (``bind(_:policy:)``); the outbox
/// keeps the rows and their state, and asks its replayer when the app calls
/// ``Outbox/replay()``, ``Outbox/retry(_:)`` or ``Outbox/discard(_:)``.
///
/// Locks: this replayer's own lock may be taken under the store's lock and may take the
/// outbox's state lock; never the other way round.
final class OutboxReplayer: @unchecked Sendable {
    /// The rest of a middleware chain: what writes and replays are sent through.
    typealias Send = @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>

    private struct Fields {
        /// The chain behind the `.offline` middleware made last (or the backend a replay was
        /// first given).
        var next: Send?
        /// Whether a replay runs in this process.
        var running = false
        /// Sent, kept and dropped by the running replay so far.
        var progress: (sent: Int, kept: Int, dropped: Int) = (0, 0, 0)
        /// The store whose outbox this sends (weak: the store holds this replayer): where the
        /// records a replay reads are stored.
        weak var store: OfflineStore?
        /// Callers of `replay()` waiting for the running one.
        var waiters: [CheckedContinuation<OutboxReplayReport, Never>] = []
    }

    /// The outbox whose entries this sends.
    let outbox: Outbox
    /// Read and changed only through `withFields`.
    private let state = Locked(Fields())
    /// Where failed writes are committed, off the thread that delivered the failure.
    private let queue = DispatchQueue(label: "depot.offline.outbox")

    /// The replayer of `outbox`, registered with it.
    init(outbox: Outbox) {
        self.outbox = outbox
        outbox.register(self)
    }

    /// Names the store whose outbox this sends, once it is made.
    func attach(to store: OfflineStore) {
        withFields { $0.store = store }
    }

    /// The store whose outbox this sends; `nil` once it is released.
    var store: OfflineStore? {
        withFields { $0.store }
    }

    // MARK: - The middleware's side

    /// Fixes `next`, the chain behind a `.offline` middleware of this store, as the one replays
    /// go through, and `policy` as the outbox's: called when the chain is made.
    func bind(_ next: @escaping Send, policy: OfflinePolicy) {
        withFields { $0.next = next }
        outbox.state.withLock { $0.policy = policy }
    }

    /// Whether `request` is one this replayer's replay sends: the `.offline` middleware lets it
    /// through (a replay given the whole chain, `.offline` included).
    func sends(_ request: BackendRequest) -> Bool {
        request.context.replay == ObjectIdentifier(self)
    }

    /// The rest of the chain as the middleware hands it on, while entries are queued wrapped so
    /// that a success starts a replay in the background; the chain replays go through when no
    /// chain was made with `with(...)` (a middleware called by hand). Without queued entries it
    /// is `next` itself (nothing added to the online path but two locks).
    func relay(_ next: @escaping Send, policy: OfflinePolicy) -> Send {
        // A middleware called without `with(...)` made its chain: its first request tells it.
        withFields { if $0.next == nil { $0.next = next } }
        let queued = outbox.state.withLock { state -> Bool in
            state.policy = policy
            return state.queuedCount > 0 && !state.held
        }
        guard queued else { return next }
        return { [self] request in
            let future = next(request)
            return Future { promise in
                future.start { result in
                    promise(result)
                    if case .success = result { self.replayInBackground() }
                }
            }
        }
    }

    /// Sends `request` (a write) through `next` with an `Idempotency-Key`, queuing it when it
    /// fails before any answer or when it must wait behind entries (see ``Outbox``), with the
    /// header fields the policy's redaction names dropped from what is stored, up to the
    /// policy's ``OfflinePolicy/maxQueuedWrites``.
    ///
    /// `base` reads what the write is made on (see ``WriteBase``): called only when the write
    /// is queued, on this replayer's queue, before the write is committed.
    func send(
        _ request: BackendRequest, through next: @escaping Send, policy: OfflinePolicy,
        base: @escaping @Sendable () -> WriteBase?
    ) -> Future<BackendResponse, ServiceError> {
        var request = request
        if !request.headers.contains(Outbox.idempotencyKeyField) {
            request.headers[Outbox.idempotencyKeyField] = UUID.randomText()
        }
        request.isRetryable = true
        let write = request
        let outbox = outbox
        return Future { [self] promise in
            // The usual case, at once on the caller's thread: the file is free and nothing waits.
            // While entries a replay can send are queued (as this process last counted), the
            // write waits behind them: no look here, the one on the replayer's queue decides.
            if !outbox.hasSendableEntries,
                (try? outbox.database.withConnectionIfFree({ connection throws(OfflineStoreError) in
                    try outbox.waitsBehindEntries(write, connection)
                })) == false
            {
                return attempt(write, through: next, policy: policy, base: base, promise: promise)
            }
            let token = CancellationToken()
            // Otherwise on the replayer's queue: the look at the file may wait for another
            // write's sync to disk, which must not hold the caller's thread (a task's, say).
            queue.async { [self] in
                guard !token.isCancelled else { return promise(.failure(.cancelled)) }
                // The look and, behind entries, the queuing, under one hold of the store's lock.
                switch outbox.queueIfBehindEntries(write, policy: policy, base: base()) {
                case .notBehind, .unknown:
                    // When the store cannot tell, better sent out of order than not at all.
                    let attempt = attempt(write, through: next, policy: policy, base: base, promise: promise)
                    token.onCancel { attempt.cancel() }
                case .queued(let entry):
                    // Behind entries: queued too; a replay sends them all in order. It starts
                    // once the caller has its answer, still on this serial queue: a `replay()`
                    // the caller asks for next looks at the file on this queue first, so it
                    // finds this one running and joins it.
                    promise(.failure(.queued(entry.queuedWrite)))
                    replayInBackground()
                case .notQueued(let error):
                    // Sent now it would overtake the entries before it; the caller is told.
                    promise(.failure(.invalidRequest("The write was neither sent nor queued: \(error)")))
                }
            }
            return token
        }
    }

    /// Sends `write` once; queues it when it fails before any answer (and the outbox has room).
    private func attempt(
        _ write: BackendRequest, through next: Send, policy: OfflinePolicy,
        base: @escaping @Sendable () -> WriteBase?, promise: Future<BackendResponse, ServiceError>.Promise
    ) -> any Cancellable {
        next(write).start { [self] result in
            guard case .failure(let failure) = result, Self.failedBeforeAnswer(failure) else {
                promise(result)
                return
            }
            queue.async { [self] in
                do {
                    promise(
                        .failure(.queued(try outbox.enqueue(write, policy: policy, base: base()).queuedWrite))
                    )
                } catch {
                    // Nothing was queued: the caller gets the transport error itself.
                    promise(.failure(failure))
                }
            }
        }
    }

    /// Whether `error` means the request got no answer at all: such a write is queued.
    static func failedBeforeAnswer(_ error: ServiceError) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut, .transport: return true
        default: return false
        }
    }

    // MARK: - Replay

    private enum ReplayStart {
        case run(Send)
        case joined
        case done(OutboxReplayReport)
    }

    /// Sends the queued entries through `given`, or through the chain the middleware last
    /// handed on; joins the replay that runs, if one does. See ``Outbox/replay()``.
    func replay(using given: Send?) async -> OutboxReplayReport {
        // Entries another process queued count too; read on the replayer's queue, not the
        // caller's thread (the look may wait for another write's sync to disk).
        let outbox = outbox
        let failure = await withCheckedContinuation {
            (continuation: CheckedContinuation<OfflineStoreError?, Never>) in
            queue.async {
                do throws(OfflineStoreError) {
                    try outbox.syncCounts()
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }
        }
        return await withCheckedContinuation {
            (continuation: CheckedContinuation<OutboxReplayReport, Never>) in
            let start = withFields { fields -> ReplayStart in
                if fields.running {
                    fields.waiters.append(continuation)
                    return .joined
                }
                if fields.next == nil, let given { fields.next = given }
                let queued = outbox.queuedCount
                if let failure {
                    return .done(
                        OutboxReplayReport(sent: 0, kept: 0, remaining: queued, ending: .storeFailed(failure))
                    )
                }
                guard queued > 0 else {
                    return .done(OutboxReplayReport(sent: 0, kept: 0, remaining: 0, ending: .finished))
                }
                guard let send = given ?? fields.next else {
                    return .done(OutboxReplayReport(sent: 0, kept: 0, remaining: queued, ending: .noBackend))
                }
                fields.running = true
                fields.waiters.append(continuation)
                return .run(send)
            }
            switch start {
            case .joined: break
            case .done(let report): continuation.resume(returning: report)
            case .run(let send): Task { await self.runReplay(through: send) }
            }
        }
    }

    /// Starts a replay in the background when entries are queued (and not all held behind
    /// kept ones), none runs, and a backend is known.
    func replayInBackground() {
        let outbox = outbox
        let send = withFields { fields -> Send? in
            guard !fields.running, let next = fields.next,
                outbox.state.withLock({ !$0.held && $0.queuedCount > 0 })
            else { return nil }
            fields.running = true
            return next
        }
        guard let send else { return }
        Task { await self.runReplay(through: send) }
    }

    /// The replay loop: takes the sender lease, then sends one entry at a time until none can
    /// be sent or one stops it. The caller has set `running`; this clears it, gives the lease
    /// back and answers the waiters.
    private func runReplay(through send: @escaping Send) async {
        var sent = 0
        var kept = 0
        var dropped = 0
        var ending: OutboxReplayReport.Ending
        do {
            try await takeLease()
            ending = .finished
        } catch {
            ending = .storeFailed(error)
        }
        // The lease was just taken with its whole duration: the first claim only checks it holds
        // it still.
        var renewing = false
        replaying: while case .finished = ending {
            let claim: Outbox.Claim
            do {
                // Ending the replay when nothing can be sent happens under the store's lock,
                // so a write queued at that moment either is found here or finds no replay
                // running and starts one.
                defer { renewing = true }
                claim = try outbox.claimHead(renewing: renewing) { remaining in
                    let (waiters, report) = withFields { fields in
                        fields.running = false
                        let report = OutboxReplayReport(
                            sent: fields.progress.sent, kept: fields.progress.kept,
                            dropped: fields.progress.dropped, remaining: remaining, ending: .finished)
                        fields.progress = (0, 0, 0)
                        defer { fields.waiters = [] }
                        return (fields.waiters, report)
                    }
                    for waiter in waiters { waiter.resume(returning: report) }
                }
            } catch {
                ending = .storeFailed(error)
                break
            }
            let entry: OutboxEntry
            switch claim {
            case .entry(let head): entry = head
            // Nothing can be sent, and `claimHead` already ended the replay.
            case .ended: return
            // Held past its duration, the lease went to another sender, which goes on.
            case .leaseLost:
                ending = .interrupted(.timedOut)
                break replaying
            }
            // Sent as made, or checked against the server's record first (see `deliver`).
            let delivery = await deliver(entry, through: send)
            do {
                switch delivery.outcome {
                case .sent(let response):
                    let recorded = try outbox.recordSent(
                        entry, response: response, conflict: delivery.conflict,
                        sentMethod: delivery.sentMethod)
                    if recorded { sent += 1 }
                case .refused(let error):
                    if try outbox.recordKept(entry, error: error, conflict: delivery.conflict) { kept += 1 }
                case .keep(let conflict):
                    if try outbox.recordKept(entry, error: nil, conflict: conflict) { kept += 1 }
                case .drop(let conflict):
                    if try outbox.recordDropped(entry, conflict: conflict) { dropped += 1 }
                case .interrupted(let error):
                    ending = .interrupted(error)
                    break replaying
                }
            } catch {
                ending = .storeFailed(error)
                break
            }
            // Sent, kept and dropped so far are reported to whoever waits when the loop ends.
            withFields { $0.progress = (sent, kept, dropped) }
        }
        // A lease not given back ends with its duration (or its process).
        outbox.releaseLease()
        let waiters = withFields { fields in
            fields.running = false
            fields.progress = (0, 0, 0)
            defer { fields.waiters = [] }
            return fields.waiters
        }
        let report = OutboxReplayReport(
            sent: sent, kept: kept, dropped: dropped, remaining: outbox.queuedCount, ending: ending)
        for waiter in waiters { waiter.resume(returning: report) }
    }

    /// Takes the sender lease, waiting while another sender (another process, or another
    /// store on the file) holds it: checked again after 5 ms, then after twice as long each
    /// time, up to a quarter of a second between checks.
    private func takeLease() async throws(OfflineStoreError) {
        var pause: UInt64 = 5_000_000
        while try !outbox.tryTakeLease() {
            try? await Task.sleep(nanoseconds: pause)
            pause = min(pause * 2, 250_000_000)
        }
    }

    /// Whether `error` is the server's refusal of a write (a 4xx it decided: 400, 403, 404,
    /// 409, 410, 412, 422, …), which keeps the entry for the app; anything else (no answer,
    /// a request that could not be made, 401 and 407 (credentials), 408, 421 (another
    /// connection), 425, 429, 5xx, 1xx, 3xx) stops the replay with the entry still queued.
    static func isRefusal(_ error: ServiceError) -> Bool {
        guard let status = error.statusCode, (400..<500).contains(status) else { return false }
        return !undecidedClientStatuses.contains(status)
    }

    /// The 4xx statuses that are no decision about the write itself.
    static let undecidedClientStatuses: Set<Int> = [401, 407, 408, 421, 425, 429]

    private func withFields<T>(_ body: (inout Fields) -> T) -> T {
        state.withLock(body)
    }
}
