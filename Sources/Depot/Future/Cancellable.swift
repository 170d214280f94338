import Foundation

/// Something that was started and can be stopped early.
///
/// ``Future/start(_:)`` returns one. Cancelling asks the work to stop; a backend
/// then completes the future with ``ServiceError/cancelled``. Cancelling twice, or
/// after the work finished, does nothing.
public protocol Cancellable: Sendable {
    /// Asks the work to stop. Safe to call from any thread, any number of times.
    func cancel()
}

/// A thread-safe cancellation flag with handlers, for writing your own ``Future``s.
///
/// Register what must happen on cancellation with ``onCancel(_:)``; a handler added
/// after ``cancel()`` runs at once.
///
/// ```swift
/// Future<Data, ServiceError> { promise in
///     let token = CancellationToken()
///     let task = makeTask { promise($0) }
///     token.onCancel { task.cancel() }
///     task.resume()
///     return token
/// }
/// ```
public final class CancellationToken: Cancellable, @unchecked Sendable {
    private let state = Locked<(cancelled: Bool, handlers: [@Sendable () -> Void])>((false, []))

    /// Creates a token that is not cancelled.
    public init() {}

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Runs `handler` once when the token is cancelled, or at once if it already is.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.handlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Marks the token cancelled and runs its handlers, once.
    public func cancel() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            if state.cancelled { return [] }
            state.cancelled = true
            defer { state.handlers = [] }
            return state.handlers
        }
        for handler in handlers { handler() }
    }
}

/// A ``Cancellable`` that forwards to whichever step of a chain is running now.
///
/// `flatMap` starts a second future only after the first finishes; this box lets the
/// one `Cancellable` returned to the caller reach both. Setting a new inner value
/// after cancellation cancels that value at once. Copies share one state (a single
/// allocation), so it costs one heap object per chain step.
@usableFromInline
struct SerialCancellable: Cancellable {
    @usableFromInline
    let state: Locked<(cancelled: Bool, current: (any Cancellable)?, advanced: Bool)>

    @inlinable
    init() {
        state = Locked((false, nil, false))
    }

    /// `true` the first time only: lets a chain take its next step once even when the
    /// step before it reports twice by mistake.
    @inlinable
    func advance() -> Bool {
        state.withLock { state in
            defer { state.advanced = true }
            return !state.advanced
        }
    }

    /// Records the first step, unless a later step already replaced it (which
    /// happens when the first step completed synchronously).
    @inlinable
    func setFirst(_ cancellable: any Cancellable) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled && state.current == nil { state.current = cancellable }
            return state.cancelled
        }
        if cancelled { cancellable.cancel() }
    }

    /// Records the step that runs now.
    @inlinable
    func set(_ cancellable: any Cancellable) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.current = cancellable }
            return state.cancelled
        }
        if cancelled { cancellable.cancel() }
    }

    @inlinable
    func cancel() {
        let current = state.withLock { state -> (any Cancellable)? in
            if state.cancelled { return nil }
            state.cancelled = true
            defer { state.current = nil }
            return state.current
        }
        current?.cancel()
    }
}

/// A ``Cancellable`` for work that cannot be stopped, such as an already known value.
@usableFromInline
package struct NotCancellable: Cancellable {
    @inlinable
    package init() {}

    @inlinable
    package func cancel() {}
}
