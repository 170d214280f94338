import Foundation

extension Future {
    /// Starts the work and waits for its value.
    ///
    /// Cancelling the awaiting `Task` cancels the work, so a backend request ends
    /// with ``ServiceError/cancelled``.
    ///
    /// ```swift
    /// let users = try await repository.findAll().value
    /// ```
    @inlinable
    public var value: Value {
        get async throws(Failure) {
            try await result.get()
        }
    }

    /// Starts the work and waits for its outcome, without throwing.
    ///
    /// Cancelling the awaiting `Task` cancels the work.
    @inlinable
    public var result: Result<Value, Failure> {
        get async {
            let awaiting = Awaiting<Value, Failure>()
            // No start guard: the promise reports to the awaiting object, which keeps the
            // first outcome only.
            let work = operation(Promise { awaiting.complete($0) })
            // Work that answered at once needs neither a suspension nor a cancellation handler.
            if let result = awaiting.takeResult() { return result }
            // A task cancelled before this point runs `onCancel` at once.
            return await withTaskCancellationHandler {
                await withUnsafeContinuation { awaiting.wait($0) }
            } onCancel: {
                work.cancel()
            }
        }
    }

    /// Creates a future from async code; it runs in a new `Task` on each start,
    /// and cancelling the future cancels that task.
    ///
    /// Use it to bring async APIs (a token store, a keychain actor) into a chain.
    /// The operation sees cancellation through `Task.isCancelled` and must itself
    /// end with a value or a `Failure`.
    public init(
        priority: TaskPriority? = nil,
        operation: @escaping @Sendable () async throws(Failure) -> Value
    ) {
        self.init { completion in
            let task = Task(priority: priority) {
                do throws(Failure) {
                    completion(.success(try await operation()))
                } catch {
                    completion(.failure(error))
                }
            }
            return TaskCancellable(task: task)
        }
    }
}

/// Cancels a `Task` when the future it runs is cancelled.
private struct TaskCancellable: Cancellable {
    let task: Task<Void, Never>

    func cancel() {
        task.cancel()
    }
}

/// One `await` of a future: its outcome, or the continuation waiting for it, resumed
/// exactly once; one allocation per `await`, which is also the context of the work's
/// completion.
@usableFromInline
struct Awaiting<Value: Sendable, Failure: Error>: Sendable {
    @usableFromInline
    enum State {
        /// Nothing yet.
        case pending
        /// The outcome came before anyone waited for it.
        case completed(Result<Value, Failure>)
        /// Someone waits for the outcome.
        case waiting(UnsafeContinuation<Result<Value, Failure>, Never>)
        /// The outcome was handed over; later ones (only a faulty operation sends them) are dropped.
        case finished
    }

    @usableFromInline
    let storage: Locked<State>

    @inlinable
    init() {
        storage = Locked(.pending)
    }

    /// Takes the work's outcome: keeps it, or resumes whoever waits for it.
    @inlinable
    func complete(_ result: Result<Value, Failure>) {
        let waiting = storage.withLock { state -> UnsafeContinuation<Result<Value, Failure>, Never>? in
            switch state {
            case .pending:
                state = .completed(result)
                return nil
            case .waiting(let continuation):
                state = .finished
                return continuation
            case .completed, .finished: return nil
            }
        }
        waiting?.resume(returning: result)
    }

    /// The outcome, if it already came (it is handed over once).
    @inlinable
    func takeResult() -> Result<Value, Failure>? {
        storage.withLock { state in
            guard case .completed(let result) = state else { return nil }
            state = .finished
            return result
        }
    }

    /// Resumes `continuation` with the outcome, now or when it comes.
    @inlinable
    func wait(_ continuation: UnsafeContinuation<Result<Value, Failure>, Never>) {
        let result = storage.withLock { state -> Result<Value, Failure>? in
            guard case .completed(let result) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .finished
            return result
        }
        if let result { continuation.resume(returning: result) }
    }
}
