extension Future {
    /// Where one run of a future's work reports its outcome: call it once, like a function,
    /// with the result; only the first outcome counts. See the article *Combining Futures*.
    ///
    /// ```swift
    /// Future<Int, Never> { promise in
    ///     promise(.success(42))
    ///     return CancellationToken()
    /// }
    /// ```
    public struct Promise: Sendable {
        /// The completion this promise reports to.
        @usableFromInline
        let complete: Completion

        /// A promise that reports to `complete`.
        @inlinable
        init(_ complete: @escaping Completion) {
            self.complete = complete
        }

        /// Reports the work's outcome; only the first call counts.
        @inlinable
        public func callAsFunction(_ result: Result<Value, Failure>) {
            complete(result)
        }
    }
}
