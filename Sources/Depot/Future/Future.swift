import Foundation

/// A cold, cancellable unit of asynchronous work that ends in a value or a failure: every
/// repository and backend call returns one. Nothing runs until you await ``value`` (or
/// ``result``) or call ``start(_:)``, and each start runs the work again.
///
/// ```swift
/// let post = try await posts.findByID(1).value
/// posts.findByID(1).receive(on: .main).start { result in print(result) }
/// ```
///
/// Chaining, running several at once, threads and cancelling: the article *Combining Futures*.
public struct Future<Value: Sendable, Failure: Error>: Sendable {
    /// The closure ``start(_:)`` reports a run's outcome to, once.
    public typealias Completion = @Sendable (Result<Value, Failure>) -> Void

    /// The work; it may complete its promise more than once only by mistake,
    /// and ``start(_:)`` guards against that.
    @usableFromInline
    let operation: @Sendable (Promise) -> any Cancellable

    /// Whether the work reports at most once by construction and lets go of its
    /// completion after reporting: a known value, a `flatMap`, or a map of one.
    /// ``start(_:)`` then needs no guard of its own (one allocation and one lock fewer per
    /// start).
    @usableFromInline
    let reportsOnce: Bool

    /// Creates a future from the work that produces its outcome.
    ///
    /// `operation` runs once per ``start(_:)``. It must complete the ``Promise`` it is
    /// given (once), and return a ``Cancellable`` that stops the work; return a
    /// ``CancellationToken`` when you need one to watch.
    ///
    /// ```swift
    /// func download(_ url: URL) -> Future<Data, URLError> {
    ///     Future { promise in
    ///         let task = URLSession.shared.dataTask(with: url) { data, _, error in
    ///             if let data {
    ///                 promise(.success(data))
    ///             } else {
    ///                 promise(.failure(error as? URLError ?? URLError(.unknown)))
    ///             }
    ///         }
    ///         let token = CancellationToken()
    ///         token.onCancel { task.cancel() }
    ///         task.resume()
    ///         return token
    ///     }
    /// }
    /// ```
    @inlinable
    public init(_ operation: @escaping @Sendable (Promise) -> any Cancellable) {
        self.operation = operation
        reportsOnce = false
    }

    /// A future whose work reports at most once when `reportsOnce` is `true`.
    @inlinable
    init(reportsOnce: Bool, _ operation: @escaping @Sendable (Promise) -> any Cancellable) {
        self.operation = operation
        self.reportsOnce = reportsOnce
    }

    /// Runs the work and reports its outcome to `completion`, exactly once.
    ///
    /// - Returns: a ``Cancellable`` that stops the work. Cancelling a backend
    ///   request completes it with ``ServiceError/cancelled``.
    @inlinable
    @discardableResult
    public func start(_ completion: @escaping Completion) -> any Cancellable {
        if reportsOnce { return operation(Promise(completion)) }
        // One allocation: the guard is also the context of the work's completion.
        let pending = Locked(StartState(completion))
        return operation(
            Promise { result in
                // The first outcome takes the completion; any later one finds nothing.
                // Taken out through a `Void` closure: returning it through `withLock`'s generic
                // result would wrap it in a reabstraction thunk (an allocation).
                var first: Completion?
                pending.withLock { pending in
                    first = pending.completion
                    pending.completion = nil
                }
                first?(result)
            })
    }

    /// Runs the work without the exactly-once guard; for composing futures, whose
    /// outer ``start(_:)`` already guards the final completion.
    @inlinable
    func run(_ completion: @escaping Completion) -> any Cancellable {
        operation(Promise(completion))
    }

    /// A future that succeeds with `value` as soon as it starts.
    @inlinable
    public static func success(_ value: Value) -> Future {
        Future(reportsOnce: true) { promise in
            promise(.success(value))
            return NotCancellable()
        }
    }

    /// A future that fails with `error` as soon as it starts.
    @inlinable
    public static func failure(_ error: Failure) -> Future {
        Future(reportsOnce: true) { promise in
            promise(.failure(error))
            return NotCancellable()
        }
    }

    /// A future that ends with `result` as soon as it starts.
    @inlinable
    public init(result: Result<Value, Failure>) {
        self.init(reportsOnce: true) { promise in
            promise(result)
            return NotCancellable()
        }
    }
}
