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
    /// Told of each ``refresh()``, with its number (1, 2, …).
    private let refreshes = Listeners<Int>()

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
        refreshes.tellNumbered { $0 }
    }

    /// Asks every iteration to read again, as ``refresh()`` does; returns the refresh's number,
    /// which the snapshots that answer it carry (`Snapshot.refreshesAnswered`).
    func requestRefresh() -> Int {
        refreshes.tellNumbered { $0 }
    }

    /// Starts watching: the first snapshot comes at once (stored) or after the network answers.
    public func makeAsyncIterator() -> Iterator {
        Iterator(read: read, refreshes: refreshes)
    }

    /// One iteration of a watch. Each ``next()`` makes its reads in the task that asks, and
    /// waits there for the next change: between two calls nothing runs but its refresh
    /// listener, once made, noting a ``LiveWatch/refresh()``. It subscribes to what its last
    /// run read when it waits (and to refreshes, at the first wait), and asks the change feeds
    /// what it missed since that run began: a snapshot taken and never followed by another costs
    /// no subscription. Released (the loop left) or cancelled with its task, it ends the watch
    /// and unsubscribes.
    public struct Iterator: AsyncIteratorProtocol {
        private let read: @Sendable () async throws -> Value
        private let refreshes: Listeners<Int>
        /// Signalled by the subscriptions: to changes and to ``LiveWatch/refresh()``.
        private let signal = WakeSignal()
        /// The number of the latest refresh asked for when the last run began (or this
        /// iteration, before its first run: its first read answers those): a later one is
        /// still to be answered.
        private var answered: Int
        /// Made at the first wait.
        private var refreshSubscription: ChangeFeed.Subscription?
        /// What the last run read subscribed to: cancelled when released.
        private var subscriptions: [ChangeFeed.Subscription] = []
        /// What the last run read and the feeds it went through, to subscribe to at the next
        /// wait; `nil` once subscribed.
        private var toSubscribe: (resources: [RequestResource], feeds: [(feed: ChangeFeed, since: Int)])?
        /// What the last snapshot told (not its value: a watch keeps no copy of what it shows).
        private var last: Told?
        /// The stored look has been taken.
        private var started = false
        /// A run made by the stored look that was the network's (no store in the chain).
        private var ready: Run?
        /// Whether the next run reads without waiting for a change.
        private var readsAtOnce = true
        /// The watch has ended: every later call answers `nil`.
        private var finished = false

        init(read: @escaping @Sendable () async throws -> Value, refreshes: Listeners<Int>) {
            self.read = read
            self.refreshes = refreshes
            answered = refreshes.latestNumber
        }

        /// The next snapshot: at first the stored one or the network's, then one after each
        /// change; `nil` once the task is cancelled.
        public mutating func next() async -> Snapshot<Value>? {
            guard !finished, !Task.isCancelled else { return finish() }
            if !started {
                started = true
                let answering = refreshes.latestNumber
                // 1. What the stores hold, without asking the network.
                var stored = await LiveWatch.attempt(read, storedOnly: true)
                guard !Task.isCancelled else { return finish() }
                if !stored.consultedStore {
                    // No store in the chain: that was the network's answer.
                    stored.snapshot.refreshesAnswered = answering
                    answered = answering
                    ready = stored
                } else if case .success = stored.snapshot.result, case .stored = stored.snapshot.source {
                    var snapshot = stored.snapshot
                    snapshot.isRefreshing = true
                    last = Told(stored, isRefreshing: true)
                    return snapshot
                }
            }
            while true {
                if !readsAtOnce {
                    guard await waitForChange() else { return finish() }
                }
                readsAtOnce = false
                // What the last run read is no longer listened to: what changes from here on is
                // asked of the feeds, from this run's start, at the next wait.
                subscriptions = []
                guard !Task.isCancelled else { return finish() }
                // This run answers a refresh asked for before it starts reading (the stored
                // look's run started earlier: a refresh asked for since is still to come).
                var answersRefresh = false
                let run: Run
                if let made = ready.take() {
                    run = made
                } else {
                    let answering = refreshes.latestNumber
                    answersRefresh = answering > answered
                    answered = answering
                    var made = await LiveWatch.attempt(read, storedOnly: false)
                    made.snapshot.refreshesAnswered = answering
                    run = made
                }
                guard !Task.isCancelled else { return finish() }
                // Subscribed to at the next wait, which first asks whether a change touched
                // what this run asked for while its requests were in flight.
                toSubscribe = (Self.resources(of: run.reads), run.feeds)
                // A refresh asked for while this run read is still to come: this answer says so.
                var snapshot = run.snapshot
                snapshot.isRefreshing = refreshes.latestNumber > answered
                // Told unless it repeats the last snapshot: the same answers, from the same
                // source, and nothing shown as refreshing or asked for by hand. Without a
                // `LiveMiddleware` nothing tells two runs apart: each is told.
                let told = Told(run, isRefreshing: snapshot.isRefreshing)
                let repeats =
                    !answersRefresh && !snapshot.isRefreshing && !run.reads.isEmpty && last == told
                last = told
                if !repeats { return snapshot }
            }
        }

        /// Subscribes to what the last run read and to refreshes, then waits for a change to
        /// touch it or a refresh: `false` when the watch ended meanwhile. A change since the
        /// run began, or a refresh asked for since, is answered at once.
        private mutating func waitForChange() async -> Bool {
            let signal = signal
            if refreshSubscription == nil {
                refreshSubscription = refreshes.add { _ in signal.signal() }
            }
            var missed = false
            if let (resources, feeds) = toSubscribe {
                toSubscribe = nil
                subscriptions = feeds.map { feed, _ in feed.subscribe(resources) { signal.signal() } }
                missed = feeds.contains { feed, since in feed.changed(since: since, touching: resources) }
            }
            // One signal, however many told: the waits that follow take it once.
            if missed || refreshes.latestNumber > answered { signal.signal() }
            return await signal.wait()
        }

        /// What `reads` asked for, each once, in their order.
        private static func resources(of reads: [ReadRecorder.Read]) -> [RequestResource] {
            var resources: [RequestResource] = []
            // Most runs make one read or a few: a set only for many.
            var seen = reads.count > 8 ? Set<RequestResource>() : nil
            for read in reads where !read.resource.segments.isEmpty {
                let isNew = seen?.insert(read.resource).inserted ?? !resources.contains(read.resource)
                if isNew { resources.append(read.resource) }
            }
            return resources
        }

        /// Ends the watch: no more subscriptions.
        private mutating func finish() -> Snapshot<Value>? {
            finished = true
            subscriptions = []
            toSubscribe = nil
            ready = nil
            refreshSubscription?.cancel()
            signal.finish()
            return nil
        }
    }

    /// One run of the read: its snapshot, what it asked for, the feeds of the middleware its
    /// requests passed (with their versions when the first was sent), and whether a store
    /// answered without the network.
    fileprivate struct Run {
        var snapshot: Snapshot<Value>
        /// The `GET`s it made, in a fixed order (reads made side by side answer in any order).
        var reads: [ReadRecorder.Read]
        var feeds: [(feed: ChangeFeed, since: Int)]
        var consultedStore: Bool
    }

    /// What a snapshot told, to leave out the next one when it would tell the same: the same
    /// answers from the same source, with the same pending writes, neither refreshing.
    fileprivate struct Told: Equatable {
        var reads: [ReadRecorder.Read]
        var source: AnswerSource
        var pendingWrites: Int
        var isRefreshing: Bool

        init(_ run: Run, isRefreshing: Bool) {
            reads = run.reads
            source = run.snapshot.source
            pendingWrites = run.snapshot.pendingWrites
            self.isRefreshing = isRefreshing
        }
    }

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
        var (reads, feeds, consultedStore) = recorder.contents
        if reads.count > 1 {
            reads.sort { ($0.resource.path, $0.query, $0.answer) < ($1.resource.path, $1.query, $1.answer) }
        }
        return Run(snapshot: snapshot, reads: reads, feeds: feeds, consultedStore: consultedStore)
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
