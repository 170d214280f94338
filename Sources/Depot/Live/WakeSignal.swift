import Foundation

/// What wakes an iteration of a watch: a change to what it read, or a refresh.
///
/// A signal given while nobody waits is kept (one: a second says nothing more), so the next
/// ``wait()`` returns at once, even in a cancelled task, as a buffered element of an
/// `AsyncStream` is. Once ``finish()`` is called, or a task is cancelled while it waits, every
/// wait returns `false`. Copies share one state in one allocation, where an `AsyncStream` of
/// `Void` (which a watch used before) takes several, for every watch, including one read once.
/// One iteration waits at a time (a watch's `next()` is `mutating`).
struct WakeSignal: Sendable {
    private enum State {
        /// Nothing to tell, nobody waiting.
        case idle
        /// Signalled while nobody waited.
        case pending
        /// An iteration waits.
        case waiting(UnsafeContinuation<Bool, Never>)
        /// Ended: waits return `false`.
        case finished
    }

    private let state = Locked(State.idle)

    /// Wakes the iteration that waits, or the next one to wait.
    func signal() {
        let waiter = state.withLock { state -> UnsafeContinuation<Bool, Never>? in
            switch state {
            case .idle:
                state = .pending
                return nil
            case .waiting(let continuation):
                state = .idle
                return continuation
            case .pending, .finished:
                return nil
            }
        }
        waiter?.resume(returning: true)
    }

    /// Ends the signal: the iteration that waits, and every later wait, get `false`.
    func finish() {
        let waiter = state.withLock { state -> UnsafeContinuation<Bool, Never>? in
            defer { state = .finished }
            guard case .waiting(let continuation) = state else { return nil }
            return continuation
        }
        waiter?.resume(returning: false)
    }

    /// Waits for a signal: `true` when one came (or had come), `false` once finished or when the
    /// waiting task is cancelled (which finishes the signal).
    func wait() async -> Bool {
        if let now = state.withLock({ state in Self.take(&state) }) { return now }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if let now = Self.take(&state) { return now }
                    state = .waiting(continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            finish()
        }
    }

    /// Whether an iteration waits now (for tests, which wait for it before they signal).
    var isWaiting: Bool {
        state.withLock { state in
            if case .waiting = state { return true }
            return false
        }
    }

    /// Whether a signal is kept for the next wait (for tests).
    var isPending: Bool {
        state.withLock { state in
            if case .pending = state { return true }
            return false
        }
    }

    /// What a wait gets without waiting: the pending signal (taken), `false` when finished or
    /// when another iteration already waits; `nil` to wait.
    private static func take(_ state: inout State) -> Bool? {
        switch state {
        case .pending:
            state = .idle
            return true
        case .finished, .waiting:
            return false
        case .idle:
            return nil
        }
    }
}
