import Foundation

/// A read watched over time: an `AsyncSequence` of ``Snapshot``s.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: api).with(.live(), .offline(store), auth)
/// let posts = PostRepository(backend: backend)
/// for await snapshot in posts.watch({ try await $0.findAll(query: ["userId": 1]).value }) {
///     render(snapshot.value, stale: snapshot.isRefreshing)
/// }
/// ```
///
/// Each iteration runs the read and yields:
/// 1. at once, the stored answer, when a store in the chain holds one for every request the
///    read makes (DepotOffline's `.offline(store)`, ``CacheMiddleware``), marked
///    ``Snapshot/isRefreshing``;
/// 2. then the network's answer (or error);
/// 3. then a new snapshot each time a write through the same chain touches what the read asked
///    for (the paths and collections of every `GET` it made; see ``LiveMiddleware``): a write
///    that succeeded or was queued, a replay, a refused write rolled back,
///    ``LiveMiddleware/invalidate(path:)``, or ``refresh()``.
///
/// A snapshot whose answers are the same bytes from the same source as the one before is not
/// repeated. The read may make several requests (a record and its comments): it depends on
/// all of them. Changes are learnt from the ``LiveMiddleware`` the read's requests pass: without
/// one in the chain, only ``refresh()`` reads again.
///
/// Cancelling the task that iterates (or leaving the loop) ends the watch and releases what it
/// holds.
public struct LiveWatch<Value: Sendable>: AsyncSequence, Sendable {
    /// The element: one state of the read.
    public typealias Element = Snapshot<Value>

    private let read: @Sendable () async throws -> Value
    private let refreshes = RefreshSignal()

    /// A watch of `read`, which makes its requests through a chain with a ``LiveMiddleware``.
    public init(_ read: @escaping @Sendable () async throws -> Value) {
        self.read = read
    }

    /// Reads again now, in every iteration of this watch.
    public func refresh() {
        refreshes.fire()
    }

    /// Starts watching: the first snapshot comes at once (stored) or after the network answers.
    /// The watch ends when the consuming task is cancelled or the iterator is released (the
    /// loop left).
    public func makeAsyncIterator() -> AsyncStream<Snapshot<Value>>.Iterator {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Snapshot<Value>.self, bufferingPolicy: .bufferingNewest(1))
        let read = read
        let refreshes = refreshes
        let task = Task {
            await Self.run(read, refreshes: refreshes, into: continuation)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }

    /// The watch's loop: the stored snapshot, the network's, then one per change.
    private static func run(
        _ read: @escaping @Sendable () async throws -> Value, refreshes: RefreshSignal,
        into continuation: AsyncStream<Snapshot<Value>>.Continuation
    ) async {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // A refresh asked for by hand is shown (`isRefreshing`) and always answered.
        let refreshAsked = Locked(false)
        let refreshSubscription = refreshes.subscribe {
            refreshAsked.withLock { $0 = true }
            signal.yield()
        }
        defer { refreshSubscription.cancel() }
        var subscriptions: [ChangeFeed.Subscription] = []
        // Cancelled when the watch ends; the use here also keeps them alive until then (an
        // optimized build may release a value after its last use).
        defer { for subscription in subscriptions { subscription.cancel() } }
        var last: (snapshot: Snapshot<Value>, reads: [ReadRecorder.Read])?

        // 1. What the stores hold, without asking the network.
        var ready: Run?
        let stored = await attempt(read, storedOnly: true)
        if !stored.consultedStore {
            // No store in the chain: that was the network's answer.
            ready = stored
        } else if case .success = stored.snapshot.result, case .stored = stored.snapshot.source {
            var snapshot = stored.snapshot
            snapshot.isRefreshing = true
            continuation.yield(snapshot)
            last = (snapshot, stored.reads)
        }
        var iterator = changes.makeAsyncIterator()
        repeat {
            guard !Task.isCancelled else { return }
            var next = ready
            ready = nil
            var answersRefresh = false
            if next == nil {
                if refreshAsked.withLock({ asked in
                    defer { asked = false }
                    return asked
                }), var shown = last?.snapshot {
                    answersRefresh = true
                    if !shown.isRefreshing {
                        shown.isRefreshing = true
                        continuation.yield(shown)
                    }
                }
                next = await attempt(read, storedOnly: false)
            }
            guard let run = next, !Task.isCancelled else { return }
            // Subscribed before the snapshot goes out, to what this run asked for; a change
            // that touched it while its requests were in flight is read again at once.
            let resources = Set(run.reads.map(\.resource).filter { !$0.isEmpty })
            subscriptions = run.feeds.map { feed, _ in feed.subscribe(resources) { signal.yield() } }
            if run.feeds.contains(where: { feed, since in feed.changed(since: since, touching: resources) }) {
                signal.yield()
            }
            // Told unless it repeats the last snapshot: the same answers, from the same source,
            // and nothing shown as refreshing. Without a `LiveMiddleware` nothing tells two runs
            // apart: each is told.
            if answersRefresh || last?.snapshot.isRefreshing != false || run.reads.count <= 1
                || run.reads != last?.reads
            {
                continuation.yield(run.snapshot)
            }
            last = (run.snapshot, run.reads)
        } while await iterator.next() != nil
    }

    /// One run of the read: its snapshot, what it asked for, the feeds of the middleware its
    /// requests passed (with their versions when the first was sent), and whether a store
    /// answered without the network.
    private typealias Run = (
        snapshot: Snapshot<Value>, reads: [ReadRecorder.Read], feeds: [(feed: ChangeFeed, since: Int)],
        consultedStore: Bool
    )

    /// One run of `read`, collecting where its answers came from and what it asked for.
    private static func attempt(_ read: @escaping @Sendable () async throws -> Value, storedOnly: Bool) async
        -> Run
    {
        let recorder = ReadRecorder()
        let receipt = AnswerReceipt()
        let result: Result<Value, any Error>
        do {
            let value = try await ReadRecorder.$current.withValue(recorder) {
                try await ReadRecorder.$storedOnly.withValue(storedOnly) {
                    try await receipt.collect { try await read() }
                }
            }
            result = .success(value)
        } catch {
            result = .failure(error)
        }
        let snapshot = Snapshot(
            result: result, source: receipt.source, pendingWrites: receipt.pendingWrites, isRefreshing: false)
        // In a fixed order: reads made side by side answer in any order.
        let reads = recorder.reads.sorted {
            ($0.resource, $0.query, $0.answer) < ($1.resource, $1.query, $1.answer)
        }
        return (snapshot, reads + Self.sourceMark(receipt), recorder.feeds, recorder.consultedStore)
    }

    /// Where the answers came from and how many pending writes they hold, so that two runs with
    /// the same bytes from different sources make different snapshots.
    private static func sourceMark(_ receipt: AnswerReceipt) -> [ReadRecorder.Read] {
        var source = "network"
        if case .stored(let savedAt) = receipt.source { source = "stored \(savedAt.timeIntervalSince1970)" }
        return [ReadRecorder.Read(resource: "", query: "", answer: "\(source) \(receipt.pendingWrites)")]
    }
}

/// The ``LiveWatch/refresh()`` of a watch, told to each of its iterations.
final class RefreshSignal: Sendable {
    private let handlers = Locked((byID: [Int: @Sendable () -> Void](), nextID: 0))

    func fire() {
        let all = handlers.withLock { Array($0.byID.values) }
        for handler in all { handler() }
    }

    func subscribe(_ handler: @escaping @Sendable () -> Void) -> ChangeFeed.Subscription {
        let id = handlers.withLock { state in
            defer { state.nextID += 1 }
            state.byID[state.nextID] = handler
            return state.nextID
        }
        return ChangeFeed.Subscription { [weak self] in
            _ = self?.handlers.withLock { $0.byID.removeValue(forKey: id) }
        }
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
