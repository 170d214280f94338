import Foundation
import Observation

/// A watched read as an observable model, for SwiftUI: its latest ``value``, ``error``,
/// ``source`` and whether it ``isRefreshing``, updated on the main actor as snapshots arrive.
///
/// ```swift
/// @State private var posts = LiveQuery(repository.watch { try await $0.findAll().value })
/// ```
///
/// The watch runs until the model is released or cancelled (``cancel()``); a test awaits
/// ``snapshot(where:)``. See the article *Live Queries*.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
@MainActor
@Observable
public final class LiveQuery<Value: Sendable> {
    /// The latest value; kept when a later read fails.
    public private(set) var value: Value?
    /// The error of the latest read, `nil` once one succeeds again.
    public private(set) var error: (any Error)?
    /// Whether a fresher answer is on its way: while the stored answer is shown, and after
    /// ``refresh()`` or ``requestRefresh()`` until its answer comes.
    public private(set) var isRefreshing = true
    /// Where the latest answers came from.
    public private(set) var source: AnswerSource = .network
    /// How many writes not yet sent the latest answers include.
    public private(set) var pendingWrites = 0

    @ObservationIgnored private let watch: LiveWatch<Value>
    @ObservationIgnored private let task = Locked<Task<Void, Never>?>(nil)
    /// The latest snapshot applied, for ``snapshot(where:)``.
    @ObservationIgnored private var latest: Snapshot<Value>?
    /// The number of the latest refresh asked for through this model, and of the latest one
    /// answered by a snapshot applied.
    @ObservationIgnored private var refreshes = (asked: 0, answered: 0)
    /// Whether the watch has ended (``cancel()``): nothing more will be applied.
    @ObservationIgnored private var ended = false
    /// Callers of ``snapshot(where:)`` and ``refresh()`` waiting, by number.
    @ObservationIgnored private var waiters = Registry<Waiter>()

    /// A caller waiting for a snapshot that passes `test`.
    private struct Waiter {
        let test: (Snapshot<Value>) -> Bool
        let continuation: CheckedContinuation<Snapshot<Value>?, Never>
    }

    /// Starts watching `watch`.
    public init(_ watch: LiveWatch<Value>) {
        self.watch = watch
        let started = Task { [weak self] in
            for await snapshot in watch {
                guard let self else { return }
                self.apply(snapshot)
            }
            self?.end()
        }
        task.withLock { $0 = started }
    }

    deinit {
        task.withLock { $0 }?.cancel()
    }

    /// Reads again now, and returns once the answer is shown: ``value``, ``error`` and the
    /// other properties updated with it (a failed read's answer is its ``error``). For
    /// SwiftUI's `.refreshable { await posts.refresh() }`, whose spinner turns until then.
    ///
    /// ``isRefreshing`` is `true` until the answer comes. The answer is shown even when it is
    /// the same as the last. It returns at once when the model is cancelled, or when the task
    /// that awaits is: the read goes on, and its answer is shown when it comes.
    public func refresh() async {
        let number = requestRefreshNumbered()
        _ = await snapshot { $0.refreshesAnswered >= number }
    }

    /// Asks to read again now and returns at once, for a caller that cannot wait (a button's
    /// action): ``isRefreshing`` until the answer comes. ``refresh()`` waits for it.
    public func requestRefresh() {
        _ = requestRefreshNumbered()
    }

    /// Waits until the model shows a snapshot that `condition` accepts, and returns it: the
    /// latest snapshot, when it does already; otherwise the first later one that does (a later
    /// one may have arrived by the time the caller resumes). `nil` when the model is
    /// ``cancel()``ed, or the task that awaits is cancelled, first.
    ///
    /// For tests, and code that must wait for a state of the read (a tool that prints the first
    /// answer); a view reads the properties instead, and Observation redraws it:
    ///
    /// ```swift
    /// let posts = LiveQuery(repository.watch { try await $0.findAll().value })
    /// await posts.snapshot { !$0.isRefreshing }                      // the network's answer
    /// _ = try await repository.create(draft).value
    /// await posts.snapshot { $0.value?.contains { $0.title == draft.title } == true }
    /// ```
    ///
    /// Because the latest snapshot is looked at first, a change that came while the caller was
    /// busy is not missed. The snapshot's ``Snapshot/value`` is `nil` when that read failed,
    /// while ``value`` keeps the last one that succeeded.
    @discardableResult
    public func snapshot(where condition: @escaping (Snapshot<Value>) -> Bool) async -> Snapshot<Value>? {
        if let latest, condition(latest) { return latest }
        if ended || Task.isCancelled { return nil }
        let number = waiters.reserveID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters[number] = Waiter(test: condition, continuation: continuation)
            }
        } onCancel: {
            Task { @MainActor [weak self] in self?.resume(number, with: nil) }
        }
    }

    /// Ends the watch now, as releasing the model does: the properties keep what they show,
    /// ``isRefreshing`` becomes `false`, and callers waiting in ``refresh()`` or
    /// ``snapshot(where:)`` return. A later ``refresh()`` returns at once.
    public func cancel() {
        task.withLock { $0 }?.cancel()
        end()
    }

    private func requestRefreshNumbered() -> Int {
        guard !ended else { return 0 }
        isRefreshing = true
        let number = watch.requestRefresh()
        refreshes.asked = max(refreshes.asked, number)
        return number
    }

    private func apply(_ snapshot: Snapshot<Value>) {
        guard !ended else { return }
        switch snapshot.result {
        case .success(let value):
            self.value = value
            error = nil
        case .failure(let failure):
            error = failure
        }
        source = snapshot.source
        pendingWrites = snapshot.pendingWrites
        refreshes.answered = max(refreshes.answered, snapshot.refreshesAnswered)
        // An answer to a read begun before the latest refresh asked for is not its answer.
        isRefreshing = snapshot.isRefreshing || refreshes.answered < refreshes.asked
        latest = snapshot
        for number in waiters.ids where waiters[number]?.test(snapshot) == true {
            resume(number, with: snapshot)
        }
    }

    /// Nothing more will be applied: every waiter returns.
    private func end() {
        guard !ended else { return }
        ended = true
        isRefreshing = false
        for number in waiters.ids {
            resume(number, with: nil)
        }
    }

    private func resume(_ number: Int, with snapshot: Snapshot<Value>?) {
        waiters.remove(number)?.continuation.resume(returning: snapshot)
    }
}
