extension Future {
    /// Where one run of a future's work reports its outcome: call it once, like a
    /// function, with the result.
    ///
    /// ```swift
    /// Future<Int, Never> { promise in
    ///     promise(.success(42))
    ///     return CancellationToken()
    /// }
    /// ```
    ///
    /// Each ``Future/start(_:)`` or await of ``Future/value`` hands the work a new
    /// promise. Only its first outcome counts; any later one is dropped, so a callback API
    /// that answers twice by mistake cannot run your completion twice. A promise is
    /// `Sendable`: call it from whichever thread the work finishes on. To hand it to an
    /// API that wants a completion closure, wrap it: `api.load { promise($0) }`.
    ///
    /// It is a value rather than a closure so that the work of every future, whatever
    /// its `Value`, receives it in the same form: passing it on costs no conversion (a
    /// closure would be rewrapped, one allocation per start).
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
