import Foundation

/// A read watched over time: an `AsyncSequence` of ``Snapshot``s, first of what a store in
/// the chain holds, then of the network's answer, then a new one each time a write through the
/// same chain touches what the read asked for.
///
/// ```swift
/// for await snapshot in posts.watch({ try await $0.findAll(query: ["userId": 1]).value }) {
///     render(snapshot.value, stale: snapshot.isRefreshing)
/// }
/// ```
///
/// It hears of changes from a ``LiveMiddleware`` in the chain, and ends with the task that
/// iterates it. What it yields, and when: the article *Live Queries*.
public struct LiveWatch<Value: Sendable>: AsyncSequence, Sendable {
    /// The element: one state of the read.
    public typealias Element = Snapshot<Value>

    private let read: @Sendable () async throws -> Value
    private let refreshes = RefreshSignal()

    /// A watch of `read`, which makes its requests through a chain with a ``LiveMiddleware``.
    public init(_ read: @escaping @Sendable () async throws -> Value) {
        self.read = read
    }

    /// Reads again now, in every iteration of this watch: each delivers the answer, even when
    /// it is the same as the last.
    ///
    /// It returns at once: the answer is the iteration's next snapshot (or a later one, when a
    /// change read before it is told first) whose ``Snapshot/isRefreshing`` is `false`, so the
    /// loop that iterates is where it is awaited. ``LiveQuery/refresh()`` waits for it.
    public func refresh() {
        _ = refreshes.fire()
    }

    /// Asks every iteration to read again, as ``refresh()`` does; returns the refresh's number,
    /// which the snapshots that answer it carry (`Snapshot.refreshesAnswered`).
    func requestRefresh() -> Int {
        refreshes.fire()
    }

    /// Starts watching: the first snapshot comes at once (stored) or after the network answers.
    public func makeAsyncIterator() -> Iterator {
        Iterator(read: read, refreshes: refreshes)
    }

    /// One iteration of a watch. Each ``next()`` makes its reads in the task that asks, and
    /// waits there for the next change: nothing runs between two calls but the subscriptions
    /// that note a change. Released (the loop left) or cancelled with its task, it ends the
    /// watch and unsubscribes.
    public struct Iterator: AsyncIteratorProtocol {
        private let read: @Sendable () async throws -> Value
        /// Signalled by the subscriptions and by ``LiveWatch/refresh()``.
        private let signal = WakeSignal()
        /// Whether ``LiveWatch/refresh()`` was asked for since the last run, and the number of
        /// the latest refresh asked for (or made before this iteration began: its first read
        /// answers those).
        private let refreshAsked: Locked<(asked: Bool, latest: Int)>
        private let refreshSubscription: ChangeFeed.Subscription
        /// What the last run read subscribed to: cancelled when released.
        private var subscriptions: [ChangeFeed.Subscription] = []
        /// What the last snapshot told (not its value: a watch keeps no copy of what it shows).
        private var last: (isRefreshing: Bool, reads: [ReadRecorder.Read])?
        /// The stored look has been taken.
        private var started = false
        /// A run made by the stored look that was the network's (no store in the chain).
        private var ready: Run?
        /// Whether the next run reads without waiting for a change.
        private var readsAtOnce = true
        /// The watch has ended: every later call answers `nil`.
        private var finished = false

        init(read: @escaping @Sendable () async throws -> Value, refreshes: RefreshSignal) {
            self.read = read
            let signal = signal
            let refreshAsked = Locked((asked: false, latest: 0))
            self.refreshAsked = refreshAsked
            refreshSubscription = refreshes.subscribe { number in
                refreshAsked.withLock { state in
                    state.asked = true
                    state.latest = Swift.max(state.latest, number)
                }
                signal.signal()
            }
            // Refreshes asked for before: this iteration's first read answers them.
            let made = refreshes.latest
            refreshAsked.withLock { $0.latest = Swift.max($0.latest, made) }
        }

        /// The next snapshot: at first the stored one or the network's, then one after each
        /// change; `nil` once the task is cancelled.
        public mutating func next() async -> Snapshot<Value>? {
            guard !finished, !Task.isCancelled else { return finish() }
            if !started {
                started = true
                let answering = refreshAsked.withLock { $0.latest }
                // 1. What the stores hold, without asking the network.
                var stored = await LiveWatch.attempt(read, storedOnly: true)
                guard !Task.isCancelled else { return finish() }
                if !stored.consultedStore {
                    // No store in the chain: that was the network's answer.
                    stored.snapshot.refreshesAnswered = answering
                    ready = stored
                } else if case .success = stored.snapshot.result, case .stored = stored.snapshot.source {
                    var snapshot = stored.snapshot
                    snapshot.isRefreshing = true
                    last = (true, stored.reads)
                    return snapshot
                }
            }
            while true {
                if !readsAtOnce {
                    guard await signal.wait() else { return finish() }
                }
                readsAtOnce = false
                guard !Task.isCancelled else { return finish() }
                // This run answers a refresh asked for before it starts reading (the stored
                // look's run started earlier: a refresh asked for since is still to come).
                var next = ready
                ready = nil
                var answersRefresh = false
                if next == nil {
                    let answering: Int
                    (answersRefresh, answering) = refreshAsked.withLock { state in
                        defer { state.asked = false }
                        return (state.asked, state.latest)
                    }
                    next = await LiveWatch.attempt(read, storedOnly: false)
                    next?.snapshot.refreshesAnswered = answering
                }
                guard let run = next, !Task.isCancelled else { return finish() }
                // Subscribed before the snapshot goes out, to what this run asked for; a change
                // that touched it while its requests were in flight is read again at once.
                let resources = Set(run.reads.map(\.resource).filter { !$0.segments.isEmpty })
                let signal = signal
                subscriptions = run.feeds.map { feed, _ in feed.subscribe(resources) { signal.signal() } }
                let missed = run.feeds.contains { feed, since in
                    feed.changed(since: since, touching: resources)
                }
                if missed { signal.signal() }
                // A refresh asked for while this run read is still to come: this answer says so.
                var snapshot = run.snapshot
                snapshot.isRefreshing = refreshAsked.withLock { $0.asked }
                // Told unless it repeats the last snapshot: the same answers, from the same
                // source, and nothing shown as refreshing or asked for by hand. Without a
                // `LiveMiddleware` nothing tells two runs apart: each is told.
                let repeats =
                    !answersRefresh && !snapshot.isRefreshing && last?.isRefreshing == false
                    && run.reads.count > 1 && run.reads == last?.reads
                last = (snapshot.isRefreshing, run.reads)
                if !repeats { return snapshot }
            }
        }

        /// Ends the watch: no more subscriptions.
        private mutating func finish() -> Snapshot<Value>? {
            finished = true
            subscriptions = []
            refreshSubscription.cancel()
            signal.finish()
            return nil
        }
    }

    /// One run of the read: its snapshot, what it asked for, the feeds of the middleware its
    /// requests passed (with their versions when the first was sent), and whether a store
    /// answered without the network.
    fileprivate typealias Run = (
        snapshot: Snapshot<Value>, reads: [ReadRecorder.Read], feeds: [(feed: ChangeFeed, since: Int)],
        consultedStore: Bool
    )

    /// One run of `read`, collecting where its answers came from and what it asked for.
    fileprivate static func attempt(_ read: @escaping @Sendable () async throws -> Value, storedOnly: Bool)
        async
        -> Run
    {
        let recorder = ReadRecorder()
        let receipt = AnswerReceipt()
        let result: Result<Value, any Error>
        do {
            let value = try await RequestContext.entering(
                { context in
                    context = RequestContext(receipt: receipt, storedOnly: storedOnly, reads: recorder)
                }, read)
            result = .success(value)
        } catch {
            result = .failure(error)
        }
        let snapshot = Snapshot(
            result: result, source: receipt.source, pendingWrites: receipt.pendingWrites, isRefreshing: false)
        // In a fixed order: reads made side by side answer in any order.
        let reads = recorder.reads.sorted {
            ($0.resource.path, $0.query, $0.answer) < ($1.resource.path, $1.query, $1.answer)
        }
        return (snapshot, reads + Self.sourceMark(receipt), recorder.feeds, recorder.consultedStore)
    }

    /// Where the answers came from and how many pending writes they hold, so that two runs with
    /// the same bytes from different sources make different snapshots.
    private static func sourceMark(_ receipt: AnswerReceipt) -> [ReadRecorder.Read] {
        var source = "network"
        if case .stored(let savedAt) = receipt.source { source = "stored \(savedAt.timeIntervalSince1970)" }
        return [
            ReadRecorder.Read(
                resource: .collection([]), query: "", answer: "\(source) \(receipt.pendingWrites)")
        ]
    }
}

/// The ``LiveWatch/refresh()`` of a watch, told to each of its iterations with its number
/// (1, 2, …).
final class RefreshSignal: Sendable {
    private let handlers = Listeners<Int>()
    private let count = Locked(0)

    /// The number of the latest refresh asked for; `0` before the first.
    var latest: Int {
        count.withLock { $0 }
    }

    /// Tells every iteration to read again; returns this refresh's number.
    func fire() -> Int {
        let number = count.withLock { count in
            count += 1
            return count
        }
        handlers.tell(number)
        return number
    }

    func subscribe(_ handler: @escaping @Sendable (Int) -> Void) -> ChangeFeed.Subscription {
        handlers.add(handler)
    }
}

extension BackendClient {
    /// Watches a read this client makes: see ``LiveWatch``.
    ///
    /// ```swift
    /// for await snapshot in posts.watch({ try await $0.findAll().value }) { … }
    /// ```
    public func watch<Value: Sendable>(_ read: @escaping @Sendable (Self) async throws -> Value) -> LiveWatch<
        Value
    > {
        let client = self
        return LiveWatch { try await read(client) }
    }
}

extension HypermediaClient {
    /// Watches a read this client makes (following links from the root, say): see
    /// ``LiveWatch``.
    ///
    /// ```swift
    /// for await snapshot in api.watch({ try await $0.follow(movieLink, as: Movie.self).value }) { … }
    /// ```
    public func watch<Value: Sendable>(_ read: @escaping @Sendable (Self) async throws -> Value) -> LiveWatch<
        Value
    > {
        let client = self
        return LiveWatch { try await read(client) }
    }
}
