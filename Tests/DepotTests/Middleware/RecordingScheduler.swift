import Foundation

@testable import Depot

/// A retry scheduler that records the delays asked for and either runs the action at once
/// or keeps it for the test to run.
final class RecordingScheduler: Sendable {
    private struct State {
        var delays: [TimeInterval] = []
        var pending: [(action: @Sendable () -> Void, token: CancellationToken)] = []
    }

    private let runsAtOnce: Bool
    private let state = Locked(State())

    /// - Parameter runsAtOnce: run each action as soon as it is scheduled; otherwise keep
    ///   it until ``runPending()``.
    init(runsAtOnce: Bool = true) {
        self.runsAtOnce = runsAtOnce
    }

    /// The delays asked for, in order.
    var delays: [TimeInterval] {
        state.withLock { $0.delays }
    }

    /// How many kept actions were cancelled.
    var cancelledCount: Int {
        state.withLock { $0.pending.filter { $0.token.isCancelled }.count }
    }

    var scheduler: RetryScheduler {
        RetryScheduler { [self] delay, action in
            let token = CancellationToken()
            state.withLock { state in
                state.delays.append(delay)
                if !runsAtOnce { state.pending.append((action, token)) }
            }
            if runsAtOnce { action() }
            return token
        }
    }

    /// Runs every kept action, cancelled or not, as a late timer would.
    func runPending() {
        let pending = state.withLock { state in
            defer { state.pending = [] }
            return state.pending
        }
        for item in pending { item.action() }
    }
}
