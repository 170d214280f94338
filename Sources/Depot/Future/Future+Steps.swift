import Foundation

/// The heap object behind one run of a combinator: a header and the lock that guards
/// its changing parts, in one allocation (the lock is the tail element, at a stable
/// address).
///
/// A closure that captures only this object needs no context of its own, so a step
/// costs one allocation per run. Keep closures in named fields of the header struct,
/// never directly as its type (a `Header` that is a closure, a tuple or an optional of
/// one is stored in its most general form, and every read then allocates a thunk).
@usableFromInline
final class StepStorage<Header>: ManagedBuffer<Header, LockPrimitive> {
    /// A new object holding `header`, with its lock initialized.
    @inlinable
    static func make(_ header: Header) -> StepStorage<Header> {
        let buffer = create(minimumCapacity: 1) { _ in header }
        let storage = unsafeDowncast(buffer, to: StepStorage<Header>.self)
        storage.withUnsafeMutablePointerToElements { LockPrimitive.initialize($0) }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { LockPrimitive.destroy($0) }
    }
}

/// A ``StepStorage`` shared between threads: its lock makes it safe to send.
@usableFromInline
struct Shared<Header>: @unchecked Sendable {
    @usableFromInline
    let storage: StepStorage<Header>

    /// A new object holding `header`.
    @inlinable
    init(_ header: Header) {
        storage = .make(header)
    }

    /// Reads a part of the header that never changes after creation, without the lock.
    @inlinable
    func fixed(_ read: (UnsafeMutablePointer<Header>) -> Void) {
        storage.withUnsafeMutablePointerToHeader(read)
    }

    /// Runs `body` with exclusive access to the header.
    @inlinable
    func withLock<R>(_ body: (inout Header) -> R) -> R {
        storage.withUnsafeMutablePointers { header, lock in
            LockPrimitive.lock(lock)
            defer { LockPrimitive.unlock(lock) }
            return body(&header.pointee)
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

/// What a two-step chain (`flatMap`, `recover`) has done so far.
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
    @usableFromInline
    struct Header {
        @usableFromInline
        let transform: @Sendable (Input) -> Future<Value, Failure>
        @usableFromInline
        let completion: Future<Value, Failure>.Completion
        @usableFromInline
        var state = ChainState()

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
    let storage: Shared<Header>

    @inlinable
    init(
        transform: @escaping @Sendable (Input) -> Future<Value, Failure>,
        completion: @escaping Future<Value, Failure>.Completion
    ) {
        storage = Shared(Header(transform: transform, completion: completion))
    }

    /// Runs `first`, then the future its value makes; returns the chain's cancellable.
    @inlinable
    func start(_ first: Future<Input, Failure>) -> any Cancellable {
        let storage = storage
        let work = first.run { result in
            // A first step that reports twice by mistake starts the second step once.
            guard
                storage.withLock({ header in
                    defer { header.state.advanced = true }
                    return !header.state.advanced
                })
            else { return }
            // Closures are copied out through `Void` closures: returning one through a
            // generic result would wrap it in a reabstraction thunk (an allocation).
            var completion: Future<Value, Failure>.Completion?
            var transform: (@Sendable (Input) -> Future<Value, Failure>)?
            storage.fixed { header in
                completion = header.pointee.completion
                transform = header.pointee.transform
            }
            guard let completion, let transform else { return }
            switch result {
            case .success(let value):
                let running = transform(value).run(completion)
                let cancelled = storage.withLock { header -> Bool in
                    if !header.state.cancelled { header.state.current = running }
                    return header.state.cancelled
                }
                if cancelled { running.cancel() }
            case .failure(let error): completion(.failure(error))
            }
        }
        // The first step is the running one unless it already handed over.
        let cancelled = storage.withLock { header -> Bool in
            if !header.state.cancelled && !header.state.advanced { header.state.current = work }
            return header.state.cancelled
        }
        if cancelled { work.cancel() }
        return self
    }

    @inlinable
    func cancel() {
        let current = storage.withLock { header -> (any Cancellable)? in
            if header.state.cancelled { return nil }
            header.state.cancelled = true
            defer { header.state.current = nil }
            return header.state.current
        }
        current?.cancel()
    }
}
