import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What ended a started request: its task finishing by itself, or one of the reasons
/// Depot stopped it. The first reason wins and decides the outcome.
enum RequestEnding: Sendable, Equatable {
    /// Still running: nothing ended it yet.
    case running
    /// The task finished by itself; its own result is the outcome.
    case finished
    /// The caller cancelled: ``ServiceError/cancelled``.
    case cancelled
    /// The whole-request deadline passed: ``ServiceError/timedOut``.
    case timedOut
    /// The body passed `limit` bytes; `declared` is the `Content-Length` that did, when
    /// the headers already told: ``ServiceError/transport(code:description:)`` with
    /// `URLError.Code.dataLengthExceedsMaximum`.
    case tooLarge(limit: Int, declared: Int64?)
    /// Depot stopped the transfer for this reason (a download that cannot be written to
    /// disk, or whose range does not continue the file): the error is the outcome.
    case failed(ServiceError)
}

/// The end of one request of a ``URLSessionBackend``: who ended it first (the task, the
/// caller's cancel, the deadline or the size limit), and the timer of its deadline.
///
/// Copies share one state (one allocation, the same as the cancel flag it replaces), so
/// the task's completion, the ``DataTaskCancellable``, the deadline timer and the data
/// delegate all see the same ending.
struct RequestControl: Sendable {
    private let state: Locked<(ending: RequestEnding, timer: (any DispatchSourceTimer)?)>

    /// A control for a request that has not ended.
    init() {
        state = Locked((.running, nil))
    }

    /// Ends the request for `reason` if nothing ended it yet; returns whether this call
    /// did (so that only the first reason stops the task).
    func end(_ reason: RequestEnding) -> Bool {
        state.withLock { state in
            guard state.ending == .running else { return false }
            state.ending = reason
            return true
        }
    }

    /// Marks the request ended by its task (unless a reason came first), stops the
    /// deadline timer and lets it go; returns the ending that decides the outcome. Called
    /// once, when the task completes.
    func complete() -> RequestEnding {
        let (ending, timer) = state.withLock { state in
            if state.ending == .running { state.ending = .finished }
            defer { state.timer = nil }
            return (state.ending, state.timer)
        }
        timer?.cancel()
        return ending
    }

    /// Starts the whole-request deadline: `seconds` from now, unless the request ended
    /// before, it is ended as ``RequestEnding/timedOut`` and `task` is cancelled.
    ///
    /// The timer is one dispatch source, released by ``complete()``; until then it and
    /// the task keep each other (the task always completes, at the latest when the timer
    /// cancels it).
    func startDeadline(after seconds: TimeInterval, cancelling task: URLSessionTask) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(
            deadline: .now() + seconds, leeway: .milliseconds(Int(min(50, max(1, seconds * 10)))))
        let control = self
        timer.setEventHandler {
            if control.end(.timedOut) { task.cancel() }
        }
        let completed = state.withLock { state in
            guard state.ending != .finished else { return true }
            state.timer = timer
            return false
        }
        // A dispatch source must be activated before it is released, even one never needed.
        timer.activate()
        if completed { timer.cancel() }
    }
}

/// Cancels one data task: marks it ended by the caller (so that its outcome is
/// ``ServiceError/cancelled`` whatever the platform reports, unless its deadline or size
/// limit ended it first) and stops it.
struct DataTaskCancellable: Cancellable {
    let task: URLSessionTask
    let control: RequestControl

    func cancel() {
        _ = control.end(.cancelled)
        task.cancel()
    }
}
