import Depot
import Dispatch
import Foundation

/// Writes stored responses in batches, off their callers' paths.
///
/// A response to store is put in memory and written with the others that arrive within
/// ``delay``, in one transaction on the store's serial queue: one commit for a burst of
/// reads instead of one each (each commit rewrites the table's and its indexes' pages).
/// Until it is written, a look-up finds it in memory. A response received less than
/// ``delay`` before the app is killed may be lost; stored responses are copies, and the next
/// read stores it again. ``discardAll()`` (sign-out) drops what waits and the responses of
/// requests still in flight.
///
/// Look-ups do not write either: the response a look-up finds in the file is marked as used
/// (``touch(_:)``), and its recency is written with the next transaction that stores responses,
/// before that one evicts, so eviction always sees every look-up. A look-up less than
/// ``delay`` before the app is killed may leave its response's recency unwritten.
final class ResponseWriter: @unchecked Sendable {
    /// How long a response waits for others to be written with.
    static let delay: DispatchTimeInterval = .milliseconds(100)
    /// How many waiting responses make the writer write at once, whatever the delay.
    static let batchLimit = 256

    private struct Waiting {
        /// Each with the number it was stored under: a write tells by that number whether the
        /// response it took is still the one waiting (comparing whole responses, headers and
        /// bodies, would cost more than the write's own bookkeeping).
        var responses:
            [StoredResponseKey: (response: StoredResponse, storage: OfflineResponseStorage, number: Int)] =
                [:]
        /// The number of the latest response stored.
        var stored = 0
        var order: [StoredResponseKey] = []
        var scheduled = false
        /// Counts ``discardAll()`` calls: the response to a request started before one is dropped.
        var generation = 0
        /// Whether a write of a full batch is on its way.
        var urgent = false
        /// The rows look-ups found since the last write, least recently used first.
        var touched: [Int64] = []
    }

    /// A waiting response taken for a write.
    private typealias Batched = (
        key: StoredResponseKey, response: StoredResponse, storage: OfflineResponseStorage, number: Int
    )

    private let queue: DispatchQueue
    /// The store's connection, for writing recency when no response waits.
    private let database: SQLiteDatabase
    private let state = Locked(Waiting())

    private let delay: DispatchTimeInterval

    /// A writer that writes to `database` on `queue`, `delay` after the first response of a
    /// batch.
    init(queue: DispatchQueue, database: SQLiteDatabase, delay: DispatchTimeInterval = ResponseWriter.delay) {
        self.queue = queue
        self.database = database
        self.delay = delay
    }

    /// Marks the stored row `id` as the most recently used, in the file with the next write.
    func touch(_ id: Int64) {
        let later = withState { state -> Bool in
            if let last = state.touched.last, last == id { return false }
            state.touched.removeAll { $0 == id }
            state.touched.append(id)
            let later = !state.scheduled
            state.scheduled = true
            return later
        }
        if later { queue.asyncAfter(deadline: .now() + delay) { self.write() } }
    }

    /// Writes the recency of the rows look-ups found since the last write, in the order they
    /// were found; call inside a write transaction, before anything is evicted.
    func writeTouches(_ connection: SQLiteConnection) throws(OfflineStoreError) {
        let touched = withState { state in
            defer { state.touched.removeAll() }
            return state.touched
        }
        for id in touched {
            try connection.execute(
                "UPDATE answers SET last_used = (SELECT coalesce(max(last_used), 0) + 1 FROM answers) WHERE id = ?",
                [.integer(id)])
        }
    }

    /// The current generation: read it when a request starts and pass it to ``store(_:for:in:generation:)``.
    var generation: Int {
        withState { $0.generation }
    }

    /// Stores `response` for `key` in `storage`, soon; unless everything was discarded since
    /// `generation` was read (a sign-out while the request was in flight).
    func store(
        _ response: StoredResponse, for key: StoredResponseKey, in storage: OfflineResponseStorage,
        generation: Int
    ) {
        let (later, now) = withState { state -> (Bool, Bool) in
            guard state.generation == generation else { return (false, false) }
            state.stored += 1
            if state.responses.updateValue((response, storage, state.stored), forKey: key) == nil {
                state.order.append(key)
            }
            let later = !state.scheduled
            state.scheduled = true
            // A full batch is written at once, by one write however many more arrive.
            let now = state.order.count >= Self.batchLimit && !state.urgent
            if now { state.urgent = true }
            return (later, now)
        }
        if now {
            queue.async { self.write() }
        } else if later {
            queue.asyncAfter(deadline: .now() + delay) { self.write() }
        }
    }

    /// Forgets every response waiting to be written, and the responses of requests in flight
    /// (``OfflineStore/removeAll()``, `removeAllResponses()`).
    func discardAll() {
        withState { state in
            state.responses.removeAll()
            state.order.removeAll()
            state.touched.removeAll()
            state.generation += 1
        }
    }

    /// Forgets the response waiting for `key`; returns whether there was one.
    @discardableResult
    func discard(_ key: StoredResponseKey) -> Bool {
        withState { state in
            guard state.responses.removeValue(forKey: key) != nil else { return false }
            state.order.removeAll { $0 == key }
            return true
        }
    }

    /// Forgets the response waiting for `key` if it is still the one stored under `number`
    /// (``waitingEntry(for:)``); returns whether it was.
    @discardableResult
    func discard(_ key: StoredResponseKey, ifNumber number: Int) -> Bool {
        withState { state in
            guard state.responses[key]?.number == number else { return false }
            state.responses[key] = nil
            state.order.removeAll { $0 == key }
            return true
        }
    }

    /// Forgets the responses waiting for the keys `isDoomed` picks; returns how many.
    @discardableResult
    func discard(where isDoomed: (StoredResponseKey) -> Bool) -> Int {
        withState { state in
            let doomed = state.order.filter(isDoomed)
            guard !doomed.isEmpty else { return 0 }
            for key in doomed { state.responses[key] = nil }
            state.order = state.order.filter { state.responses[$0] != nil }
            return doomed.count
        }
    }

    /// The response waiting to be written for `key`, if any.
    func waitingResponse(for key: StoredResponseKey) -> StoredResponse? {
        waitingEntry(for: key)?.response
    }

    /// The response waiting to be written for `key`, if any, with the number it was stored
    /// under (which a newer response for the key does not share, even an equal one).
    func waitingEntry(for key: StoredResponseKey) -> (response: StoredResponse, number: Int)? {
        withState { state in state.responses[key].map { ($0.response, $0.number) } }
    }

    /// The responses waiting to be written for a `GET` of `path` with any query, for `account`,
    /// with their queries.
    func waitingResponses(forPath path: String, account: String) -> [(
        query: [URLQueryItem], response: StoredResponse
    )] {
        withState { state in
            state.responses.compactMap { key, waiting in
                key.method == .get && key.path == path && key.account == account
                    ? (key.query, waiting.response) : nil
            }
        }
    }

    /// Writes the waiting responses, at most ``batchLimit`` in one transaction (a write of the
    /// rest follows at once); call on the writer's queue. Returns whether more are waiting.
    @discardableResult
    func write() -> Bool {
        let (batch, more) = withState { state in
            state.scheduled = false
            state.urgent = false
            let batch = state.order.prefix(Self.batchLimit).compactMap { key -> Batched? in
                state.responses[key].map {
                    (key: key, response: $0.response, storage: $0.storage, number: $0.number)
                }
            }
            let more = state.order.count > Self.batchLimit
            if more { state.scheduled = true }
            return (batch, more)
        }
        if more { queue.async { self.write() } }
        // Recency no stored response carried with it (none waits, or none was stored).
        defer {
            if withState({ !$0.touched.isEmpty }) {
                _ = try? database.withConnection { connection throws(OfflineStoreError) in
                    try connection.transaction(durable: false) { () throws(OfflineStoreError) in
                        try writeTouches(connection)
                    }
                }
            }
        }
        guard !batch.isEmpty else { return more }
        // Grouped by storage (one, unless several middlewares share the store), in order.
        var storages: [ObjectIdentifier: (storage: OfflineResponseStorage, entries: [Batched])] = [:]
        for entry in batch {
            storages[ObjectIdentifier(entry.storage), default: (entry.storage, [])].entries.append(entry)
        }
        for (storage, entries) in storages.values {
            // Checked under the storage's own lock, response by response: one discarded meanwhile
            // (sign-out, `removeResponse`) or replaced by a newer one is not written.
            _ = try? storage.store(entries.map { ($0.response, $0.key) }) { index in
                self.withState { $0.responses[entries[index].key]?.number == entries[index].number }
            }
        }
        // Forgotten only once written, so a look-up in between still finds them in memory.
        withState { state in
            for (key, _, _, number) in batch where state.responses[key]?.number == number {
                state.responses[key] = nil
            }
            state.order = state.order.filter { state.responses[$0] != nil }
        }
        return more
    }

    /// Writes every waiting response before returning (``OfflineStore/flush()``).
    func flush() {
        queue.sync {
            while write() {}
        }
    }

    private func withState<T>(_ body: (inout Waiting) -> T) -> T {
        state.withLock(body)
    }
}

extension ResponseWriter {
    /// Stores `response`, the answer to the `GET` `request`, under `key`, as `.offline(store)`
    /// stores what a read received: unless ``OfflinePolicy/storesResponse`` or the rules of
    /// `StoredResponse.storable(_:for:requestedAt:redaction:)` keep it out.
    ///
    /// The stored answer is dated `requestedAt`, when the request that got it was sent, not
    /// when it arrived: a write a replay sent and had decided while this answer was on its
    /// way may be missing from it, and only a date before the write's decision has reads lay
    /// that write over it (RFC 9111 §4.2.3 likewise ages a response from its request's time).
    func storeAnswer(
        _ response: BackendResponse, to request: BackendRequest, key: StoredResponseKey,
        requestedAt: Date, policy: OfflinePolicy,
        in storage: OfflineResponseStorage, generation: Int
    ) {
        guard policy.storesResponse(request, response),
            let stored = StoredResponse.storable(
                response, for: request, requestedAt: requestedAt, redaction: policy.redaction)
        else { return }
        store(stored, for: key, in: storage, generation: generation)
    }
}
