import Foundation

/// Runs an action after a delay, and can call it off: how ``RetryMiddleware`` waits
/// between attempts.
///
/// The default, ``dispatch``, waits on a global dispatch queue. Tests inject their own to
/// see the delays chosen and go on at once, without sleeping:
///
/// ```swift
/// let scheduler = RetryScheduler { delay, action in
///     print("waiting \(delay) s")   // or record it for an assertion
///     action()
///     return CancellationToken()
/// }
/// let backend = InMemoryBackend().with(RetryMiddleware(scheduler: scheduler))
/// ```
public struct RetryScheduler: Sendable {
    /// The scheduling closure: run the action after the delay in seconds, unless the
    /// returned ``Cancellable`` is cancelled first.
    public typealias Schedule =
        @Sendable (_ delay: TimeInterval, _ action: @escaping @Sendable () -> Void) -> any Cancellable

    private let schedule: Schedule

    /// Creates a scheduler from a closure that runs `action` after `delay` seconds and
    /// returns what calls it off.
    ///
    /// After the returned value is cancelled the action must not run; ``RetryMiddleware``
    /// also guards against one that runs anyway.
    public init(_ schedule: @escaping Schedule) {
        self.schedule = schedule
    }

    /// Runs `action` after `delay` seconds, unless the returned value is cancelled first.
    public func schedule(
        after delay: TimeInterval, _ action: @escaping @Sendable () -> Void
    ) -> any Cancellable {
        schedule(max(0, delay), action)
    }

    /// Waits on a global dispatch queue; the default.
    public static let dispatch = RetryScheduler.dispatch(on: .global())

    /// Waits with `queue.asyncAfter`; cancelling releases the action at once.
    public static func dispatch(on queue: DispatchQueue) -> RetryScheduler {
        RetryScheduler { delay, action in
            let pending = PendingAction(action)
            queue.asyncAfter(deadline: .now() + delay) { pending.take()?() }
            return pending
        }
    }

    /// Runs the action at once, on the calling thread, whatever the delay: retries
    /// without waiting, for tests and previews.
    public static let immediate = RetryScheduler { _, action in
        action()
        return NotCancellable()
    }
}

/// An action that runs at most once, and never after it was cancelled.
private final class PendingAction: Cancellable, Sendable {
    private let action: Locked<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = Locked(action)
    }

    /// The action, once; `nil` after cancellation or a first take.
    func take() -> (@Sendable () -> Void)? {
        action.withLock { action in
            defer { action = nil }
            return action
        }
    }

    func cancel() {
        _ = take()
    }
}
