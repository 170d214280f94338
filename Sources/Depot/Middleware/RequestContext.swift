import Foundation

/// The task-local values a request carries down the chain: the ``AnswerReceipt`` its answer
/// is noted in, and for watched reads the recorder, the stored-only flag and the change feed
/// of the ``LiveMiddleware`` in front.
///
/// A middleware that resumes a request from another thread or task (a retry after a `401`
/// that arrived on the transport's thread, once a token refresh that many requests wait for
/// has ended) captures the context in `intercept`, where the request arrives in its caller's
/// task, and resumes it inside ``run(_:)``: otherwise the request would carry the values of
/// whichever thread or task resumed it, or none.
struct RequestContext: Sendable {
    private let receipt: AnswerReceipt?
    private let recorder: ReadRecorder?
    private let storedOnly: Bool
    private let feed: ChangeFeed?

    /// A context with these values.
    init(receipt: AnswerReceipt?, recorder: ReadRecorder?, storedOnly: Bool, feed: ChangeFeed?) {
        self.receipt = receipt
        self.recorder = recorder
        self.storedOnly = storedOnly
        self.feed = feed
    }

    /// The values of the task running now.
    static var current: RequestContext {
        RequestContext(
            receipt: AnswerReceipt.active, recorder: ReadRecorder.current,
            storedOnly: ReadRecorder.storedOnly,
            feed: ChangeFeed.current)
    }

    /// Runs `body` with these values.
    func run<T>(_ body: () throws -> T) rethrows -> T {
        try AnswerReceipt.$active.withValue(receipt) {
            try ReadRecorder.$current.withValue(recorder) {
                try ReadRecorder.$storedOnly.withValue(storedOnly) {
                    try ChangeFeed.$current.withValue(feed) { try body() }
                }
            }
        }
    }
}
