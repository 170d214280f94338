import Foundation

/// A cold, cancellable unit of asynchronous work that ends in a value or a failure.
///
/// Every repository and backend call in Depot returns a `Future`. It is *cold*:
/// creating one does nothing; the work runs when you call ``start(_:)`` or await
/// ``value`` / ``result``, and **each start runs the work again**. That is what lets
/// a retry middleware replay a request, and what lets you keep a future in a
/// property and start it on every pull-to-refresh.
///
/// ```swift
/// posts.findByID(1).start { result in
///     switch result {
///     case .success(let post): print(post.title)
///     case .failure(let error): print(error)
///     }
/// }
///
/// let post = try await posts.findByID(1).value   // or with async/await
/// ```
///
/// The completion runs exactly once per start, on whichever thread finished the
/// work; hop with ``receive(on:)`` when it must run on a given queue.
/// `Future` is `Sendable` and can be started from any thread.
public struct Future<Value: Sendable, Failure: Error>: Sendable {
    /// The closure a future's work reports its outcome to.
    public typealias Completion = @Sendable (Result<Value, Failure>) -> Void

    /// The work; it may call the completion more than once only by mistake,
    /// and ``start(_:)`` guards against that.
    let operation: @Sendable (@escaping Completion) -> any Cancellable

    /// Creates a future from the work that produces its outcome.
    ///
    /// `operation` runs once per ``start(_:)``. It must call the completion it is
    /// given (once), and return a ``Cancellable`` that stops the work; return a
    /// ``CancellationToken`` when you need one to watch.
    public init(_ operation: @escaping @Sendable (@escaping Completion) -> any Cancellable) {
        self.operation = operation
    }

    /// Runs the work and reports its outcome to `completion`, exactly once.
    ///
    /// - Returns: a ``Cancellable`` that stops the work. Cancelling a backend
    ///   request completes it with ``ServiceError/cancelled``.
    @discardableResult
    public func start(_ completion: @escaping Completion) -> any Cancellable {
        let once = Once(completion)
        return operation { result in once.fire(result) }
    }

    /// Runs the work without the exactly-once guard; for composing futures, whose
    /// outer ``start(_:)`` already guards the final completion.
    @inline(__always)
    func run(_ completion: @escaping Completion) -> any Cancellable {
        operation(completion)
    }

    /// A future that succeeds with `value` as soon as it starts.
    public static func success(_ value: Value) -> Future {
        Future { completion in
            completion(.success(value))
            return NotCancellable()
        }
    }

    /// A future that fails with `error` as soon as it starts.
    public static func failure(_ error: Failure) -> Future {
        Future { completion in
            completion(.failure(error))
            return NotCancellable()
        }
    }

    /// A future that ends with `result` as soon as it starts.
    public init(result: Result<Value, Failure>) {
        self.init { completion in
            completion(result)
            return NotCancellable()
        }
    }
}

/// Delivers a result to a completion at most once, whatever the work does.
private final class Once<Value: Sendable, Failure: Error>: @unchecked Sendable {
    private let lock = NSLock()
    private var completion: (@Sendable (Result<Value, Failure>) -> Void)?

    init(_ completion: @escaping @Sendable (Result<Value, Failure>) -> Void) {
        self.completion = completion
    }

    func fire(_ result: Result<Value, Failure>) {
        lock.lock()
        let completion = self.completion
        self.completion = nil
        lock.unlock()
        completion?(result)
    }
}
