import Foundation

@testable import Depot

/// What `count` started requests reported (for the load tests): how often each one's completion ran, and
/// which of them were right.
final class Tally: Sendable {
    private let state: Locked<(calls: [Int], right: [Bool], finished: Int)>
    private let done: Locked<CheckedContinuation<Void, Never>?> = Locked(nil)
    let count: Int

    init(count: Int) {
        self.count = count
        state = Locked((Array(repeating: 0, count: count), Array(repeating: false, count: count), 0))
    }

    /// Records a completion of request `index`; `right` says whether its answer was.
    func record(_ index: Int, right: Bool) {
        let allFinished = state.withLock { state in
            state.calls[index] += 1
            guard state.calls[index] == 1 else { return false }
            state.right[index] = right
            state.finished += 1
            return state.finished == count
        }
        if allFinished { done.withLock { $0.take() }?.resume() }
    }

    /// Waits until every request reported once, or `seconds` passed.
    func wait(atMost seconds: TimeInterval) async {
        await withCheckedContinuation { continuation in
            let finished = state.withLock { $0.finished == count }
            if finished {
                continuation.resume()
                return
            }
            done.withLock { $0 = continuation }
            // The completion may have come between the two locks.
            if state.withLock({ $0.finished == count }) { done.withLock { $0.take() }?.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [done] in
                done.withLock { $0.take() }?.resume()
            }
        }
    }

    /// Requests whose completion ran exactly once / more than once, and those that were right.
    var summary: (once: Int, more: Int, right: Int) {
        state.withLock { state in
            (
                state.calls.filter { $0 == 1 }.count, state.calls.filter { $0 > 1 }.count,
                state.right.filter { $0 }.count
            )
        }
    }
}
