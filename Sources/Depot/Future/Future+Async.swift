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
    public var value: Value {
        get async throws(Failure) {
            try await result.get()
        }
    }

    /// Starts the work and waits for its outcome, without throwing.
    ///
    /// Cancelling the awaiting `Task` cancels the work.
    public var result: Result<Value, Failure> {
        get async {
            let work = SerialCancellable()
            return await withTaskCancellationHandler {
                // `start` delivers exactly once, which is all an unsafe continuation needs.
                await withUnsafeContinuation { continuation in
                    work.setFirst(start { continuation.resume(returning: $0) })
                }
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
