import Foundation

/// The heap object behind a ``Locked`` and behind one run of a combinator: parts fixed
/// at creation, a state guarded by a lock, and the lock, in one allocation (the lock is the tail element, at
/// a stable address).
///
/// A closure that captures only this object needs no context of its own, so a step
/// costs one allocation per run. Keep closures in named fields of a struct, never
/// directly as `Fixed` or `State` (a closure, or a tuple or optional of one, stored as
/// a generic parameter is kept in its most general form, and every read then allocates
/// a reabstraction thunk).
@usableFromInline
final class StepStorage<Fixed, State>: ManagedBuffer<StepHeader<Fixed, State>, LockPrimitive> {
    /// A new object holding `fixed` and `state`, with its lock initialized.
    ///
    /// `state` is evaluated in place, inside the object: a state built first and passed in
    /// would be copied, a retain and a release more for each reference it holds.
    @inlinable
    static func make(fixed: Fixed, state: @autoclosure () -> State) -> StepStorage<Fixed, State> {
        let buffer = create(minimumCapacity: 1) { _ in StepHeader(fixed: fixed, state: state()) }
        let storage = unsafeDowncast(buffer, to: StepStorage<Fixed, State>.self)
        storage.withUnsafeMutablePointerToElements { LockPrimitive.initialize($0) }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { LockPrimitive.destroy($0) }
    }
}

/// The header of a ``StepStorage``.
@usableFromInline
struct StepHeader<Fixed, State> {
    @usableFromInline
    let fixed: Fixed
    @usableFromInline
    var state: State

    @inlinable
    init(fixed: Fixed, state: State) {
        self.fixed = fixed
        self.state = state
    }
}

/// A ``StepStorage`` shared between threads: its lock makes it safe to send.
@usableFromInline
struct Shared<Fixed, State>: @unchecked Sendable {
    @usableFromInline
    let storage: StepStorage<Fixed, State>

    /// A new object holding `fixed` and `state` (evaluated in place).
    @inlinable
    init(fixed: Fixed, state: @autoclosure () -> State) {
        storage = .make(fixed: fixed, state: state())
    }

    /// Reads the parts set at creation; they never change, so this needs no lock.
    @inlinable
    func fixed(_ read: (borrowing Fixed) -> Void) {
        storage.withUnsafeMutablePointerToHeader { read($0.pointee.fixed) }
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    func withLock<R>(_ body: (inout State) -> R) -> R {
        storage.withUnsafeMutablePointers { header, lock in
            LockPrimitive.lock(lock)
            defer { LockPrimitive.unlock(lock) }
            return body(&header.pointee.state)
        }
    }
}

/// The state of one ``Future/start(_:)``: the completion, until the first outcome takes it.
@usableFromInline
struct StartState<Value: Sendable, Failure: Error> {
    @usableFromInline
    var completion: Future<Value, Failure>.Completion?

    @inlinable
    init(_ completion: @escaping Future<Value, Failure>.Completion) {
        self.completion = completion
    }
}

/// What one run of `flatMap` has done so far, and what it still needs.
///
/// The transform and the completion are dropped as soon as they are used, so a
/// finished step (which callers may keep as their `Cancellable`, inside a `zip` or a
/// `recover`, say) holds nothing that could hold it back: no retain cycle outlives the
/// chain.
@usableFromInline
struct ChainState<Input: Sendable, Value: Sendable, Failure: Error> {
    /// Makes the second step; taken when the first step reports.
    @usableFromInline
    var transform: (@Sendable (Input) -> Future<Value, Failure>)?
    /// The chain's completion; taken when the chain finishes.
    @usableFromInline
    var completion: Future<Value, Failure>.Completion?
    /// The step that runs now, for cancellation.
    @usableFromInline
    var current: (any Cancellable)?
    /// Whether the first step reported (the chain takes its next step once only).
    @usableFromInline
    var advanced = false
    /// Whether the chain was cancelled.
    @usableFromInline
    var cancelled = false

    @inlinable
    init(
        transform: @escaping @Sendable (Input) -> Future<Value, Failure>,
        completion: @escaping Future<Value, Failure>.Completion
    ) {
        self.transform = transform
        self.completion = completion
    }
}

/// One run of `flatMap`: the first step's value starts, once, the second step;
/// cancelling reaches whichever step runs now. One allocation per run, which is also
/// the context of both steps' completions.
@usableFromInline
struct FlatMapStep<Input: Sendable, Value: Sendable, Failure: Error>: Cancellable {
    @usableFromInline
    let storage: Shared<Void, ChainState<Input, Value, Failure>>

    @inlinable
    init(
        transform: @escaping @Sendable (Input) -> Future<Value, Failure>,
        completion: @escaping Future<Value, Failure>.Completion
    ) {
        storage = Shared(fixed: (), state: ChainState(transform: transform, completion: completion))
    }

    /// Runs `first`, then the future its value makes; returns the chain's cancellable.
    @inlinable
    func start(_ first: Future<Input, Failure>) -> any Cancellable {
        let storage = storage
        let work = first.run { result in
            // Closures are copied out through `Void` closures: returning one through a
            // generic result would wrap it in a reabstraction thunk (an allocation).
            var transform: (@Sendable (Input) -> Future<Value, Failure>)?
            var failed: Future<Value, Failure>.Completion?
            storage.withLock { state in
                // A first step that reports twice by mistake starts the second step once.
                guard !state.advanced else { return }
                state.advanced = true
                state.current = nil
                transform = state.transform
                state.transform = nil
                if case .failure = result {
                    failed = state.completion
                    state.completion = nil
                }
            }
            switch result {
            case .failure(let error):
                failed?(.failure(error))
            case .success(let value):
                guard let transform else { return }
                let running = transform(value).run { result in
                    var completion: Future<Value, Failure>.Completion?
                    storage.withLock { state in
                        completion = state.completion
                        state.completion = nil
                        state.current = nil
                    }
                    completion?(result)
                }
                // Kept for cancellation only while the second step has not finished.
                let cancelled = storage.withLock { state -> Bool in
                    if !state.cancelled && state.completion != nil { state.current = running }
                    return state.cancelled
                }
                if cancelled { running.cancel() }
            }
        }
        // The first step is the running one unless it already handed over.
        let cancelled = storage.withLock { state -> Bool in
            if !state.cancelled && !state.advanced { state.current = work }
            return state.cancelled
        }
        if cancelled { work.cancel() }
        return self
    }

    @inlinable
    func cancel() {
        let current = storage.withLock { state -> (any Cancellable)? in
            if state.cancelled { return nil }
            state.cancelled = true
            defer { state.current = nil }
            return state.current
        }
        current?.cancel()
    }
}
