import Foundation

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
    let storage: Locked<ChainState<Input, Value, Failure>>

    @inlinable
    init(
        transform: @escaping @Sendable (Input) -> Future<Value, Failure>,
        completion: @escaping Future<Value, Failure>.Completion
    ) {
        storage = Locked(ChainState(transform: transform, completion: completion))
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
