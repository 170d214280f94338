import Foundation

/// The heap object behind one run of a combinator: parts fixed at creation, a state
/// guarded by a lock, and the lock, in one allocation (the lock is the tail element, at
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
    @inlinable
    static func make(fixed: Fixed, state: State) -> StepStorage<Fixed, State> {
        let buffer = create(minimumCapacity: 1) { _ in StepHeader(fixed: fixed, state: state) }
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

    /// A new object holding `fixed` and `state`.
    @inlinable
    init(fixed: Fixed, state: State) {
        storage = .make(fixed: fixed, state: state)
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

/// What one run of `flatMap` has done so far.
@usableFromInline
struct ChainState {
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
    init() {}
}

/// One run of `flatMap`: the first step's value starts, once, the second step;
/// cancelling reaches whichever step runs now. One allocation per run, which is also
/// the context of the first step's completion.
@usableFromInline
struct FlatMapStep<Input: Sendable, Value: Sendable, Failure: Error>: Cancellable {
    /// What the run keeps from start to end.
    @usableFromInline
    struct Fixed {
        @usableFromInline
        let transform: @Sendable (Input) -> Future<Value, Failure>
        @usableFromInline
        let completion: Future<Value, Failure>.Completion

        @inlinable
        init(
            transform: @escaping @Sendable (Input) -> Future<Value, Failure>,
            completion: @escaping Future<Value, Failure>.Completion
        ) {
            self.transform = transform
            self.completion = completion
        }
    }

    @usableFromInline
    let storage: Shared<Fixed, ChainState>

    @inlinable
    init(
        transform: @escaping @Sendable (Input) -> Future<Value, Failure>,
        completion: @escaping Future<Value, Failure>.Completion
    ) {
        storage = Shared(fixed: Fixed(transform: transform, completion: completion), state: ChainState())
    }

    /// Runs `first`, then the future its value makes; returns the chain's cancellable.
    @inlinable
    func start(_ first: Future<Input, Failure>) -> any Cancellable {
        let storage = storage
        let work = first.run { result in
            // A first step that reports twice by mistake starts the second step once.
            guard
                storage.withLock({ state in
                    defer { state.advanced = true }
                    return !state.advanced
                })
            else { return }
            // Closures are copied out through `Void` closures: returning one through a
            // generic result would wrap it in a reabstraction thunk (an allocation).
            var completion: Future<Value, Failure>.Completion?
            var transform: (@Sendable (Input) -> Future<Value, Failure>)?
            storage.fixed { fixed in
                completion = fixed.completion
                transform = fixed.transform
            }
            guard let completion, let transform else { return }
            switch result {
            case .success(let value):
                let running = transform(value).run(completion)
                let cancelled = storage.withLock { state -> Bool in
                    if !state.cancelled { state.current = running }
                    return state.cancelled
                }
                if cancelled { running.cancel() }
            case .failure(let error): completion(.failure(error))
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
