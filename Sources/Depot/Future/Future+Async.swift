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
            return await withTaskCancellationHandler {
                await withUnsafeContinuation { continuation in
                    awaiting.start(operation, resuming: continuation)
                }
            } onCancel: {
                awaiting.cancel()
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

/// One `await` of a future: the continuation to resume, exactly once, and the work to
/// cancel when the awaiting task is cancelled; one allocation per `await`.
@usableFromInline
struct Awaiting<Value: Sendable, Failure: Error>: Sendable {
    @usableFromInline
    typealias State = (
        continuation: UnsafeContinuation<Result<Value, Failure>, Never>?, work: (any Cancellable)?,
        cancelled: Bool
    )

    @usableFromInline
    let state: Locked<State>

    @inlinable
    init() {
        state = Locked((nil, nil, false))
    }

    /// Runs `operation`, resuming `continuation` with its first outcome (later ones,
    /// which only a faulty operation sends, are dropped).
    @inlinable
    func start(
        _ operation: (@escaping @Sendable (Result<Value, Failure>) -> Void) -> any Cancellable,
        resuming continuation: UnsafeContinuation<Result<Value, Failure>, Never>
    ) {
        state.withLock { $0.continuation = continuation }
        let work = operation { result in
            let continuation = state.withLock { state in
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: result)
        }
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.work = work }
            return state.cancelled
        }
        if cancelled { work.cancel() }
    }

    /// Cancels the work now, or as soon as it has started.
    @inlinable
    func cancel() {
        let work = state.withLock { state -> (any Cancellable)? in
            if state.cancelled { return nil }
            state.cancelled = true
            defer { state.work = nil }
            return state.work
        }
        work?.cancel()
    }
}
