import Foundation
import Testing

@testable import Depot

/// Failures for futures under test.
enum ProbeError: Error, Equatable {
    case boom
    case other
    case cancelled
}

/// A future whose runs the test completes by hand, recording every start and
/// whether each run's `Cancellable` was cancelled.
final class FutureProbe<Value: Sendable, Failure: Error>: Sendable {
    private struct Run: Sendable {
        var promise: Future<Value, Failure>.Promise
        var token: CancellationToken
    }

    private let runs = Locked<[Run]>([])
    private let failureOnCancel: Failure?
    private let started: AsyncStream<Int>.Continuation
    /// Yields the index of each run as it starts.
    let starts: AsyncStream<Int>

    /// A probe; with `failureOnCancel`, cancelling a run completes it with that failure,
    /// as a backend completes a cancelled request with `.cancelled`.
    init(failingOnCancelWith failureOnCancel: Failure? = nil) {
        self.failureOnCancel = failureOnCancel
        (starts, started) = AsyncStream<Int>.makeStream()
    }

    /// The future; each start is one more run.
    var future: Future<Value, Failure> {
        Future { [runs, failureOnCancel, started] promise in
            let token = CancellationToken()
            let index = runs.withLock { runs -> Int in
                runs.append(Run(promise: promise, token: token))
                return runs.count - 1
            }
            if let failureOnCancel { token.onCancel { promise(.failure(failureOnCancel)) } }
            started.yield(index)
            return token
        }
    }

    /// How many times the operation ran.
    var startCount: Int {
        runs.withLock { $0.count }
    }

    /// Completes run `index` (the latest run when `nil`).
    func complete(_ result: Result<Value, Failure>, run index: Int? = nil) {
        let promise = runs.withLock { runs in
            index.map { runs[$0].promise } ?? runs.last?.promise
        }
        promise?(result)
    }

    /// Whether run `index` was cancelled.
    func isCancelled(run index: Int = 0) -> Bool {
        runs.withLock { $0[index].token }.isCancelled
    }

    /// How many runs were started and never cancelled.
    var uncancelledRuns: Int {
        runs.withLock { $0.map(\.token) }.filter { !$0.isCancelled }.count
    }

    /// Waits (bounded) until `count` runs have started in all; `true` when they have.
    /// Only one waiter at a time.
    func waitForStarts(_ count: Int = 1, within seconds: Double = hangBound) async -> Bool {
        if startCount >= count { return true }
        let starts = starts
        let reached = await awaitBounded(within: seconds) {
            for await index in starts where index + 1 >= count { return true }
            return false
        }
        return reached ?? false
    }
}

/// Collects values from any thread.
final class ThreadSafeList<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])

    /// Appends `item`.
    func record(_ item: Element) {
        items.withLock { $0.append(item) }
    }

    /// Everything recorded, in order.
    var all: [Element] {
        items.withLock { $0 }
    }
}

/// Resumes a continuation once, whichever caller comes first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) {
        self.continuation = Locked(continuation)
    }

    func resume(_ value: T?) {
        let continuation = continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }
        continuation?.resume(returning: value)
    }
}

/// How long a test waits for something that should happen promptly before it calls it a
/// hang. Generous on purpose: the tests run in parallel on one shared pool of threads, so a
/// test's own work may wait behind every other test's; the whole suite takes about a minute on
/// a 2-core machine busy with a build (longer under the thread sanitizer), so the bound is
/// several times that. A hang fails the test either way.
let hangBound: Double = 300

/// The first value `register` delivers to the callback it is given, or `nil` when
/// none arrives within `seconds`.
func firstDelivery<T: Sendable>(
    within seconds: Double = hangBound, _ register: (@escaping @Sendable (T) -> Void) -> Void
) async -> T? {
    await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let once = ResumeOnce(continuation)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { once.resume(nil) }
        register { once.resume($0) }
    }
}

/// The outcome of starting `future`, or `nil` when it does not complete within `seconds`.
func firstOutcome<Value, Failure>(
    of future: Future<Value, Failure>, within seconds: Double = hangBound
) async -> Result<Value, Failure>? {
    await firstDelivery(within: seconds) { deliver in future.start(deliver) }
}

/// What `body` returns, or `nil` when it takes longer than `seconds` (the body then
/// keeps running, detached, so that a hang fails the test instead of blocking it).
func awaitBounded<T: Sendable>(
    within seconds: Double = hangBound, _ body: @escaping @Sendable () async -> T
) async -> T? {
    await firstDelivery(within: seconds) { deliver in
        Task { deliver(await body()) }
    }
}

/// The outcome of an immediate future (one that completes inside `start`), and how
/// many times its completion ran.
func immediateOutcomes<Value, Failure>(of future: Future<Value, Failure>) -> [Result<Value, Failure>] {
    let recorder = ThreadSafeList<Result<Value, Failure>>()
    future.start { recorder.record($0) }
    return recorder.all
}

extension ServiceError {
    /// The decoding failure, for `.decoding`.
    var decodingDetails: DecodingFailure? {
        if case .decoding(let failure) = self { return failure }
        return nil
    }
}
