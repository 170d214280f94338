import Foundation

/// The task-local values a request carries down the chain: the ``AnswerReceipt`` its answer
/// is noted in, and for watched reads the recorder, the stored-only flag and the change feed
/// of the ``LiveMiddleware`` in front.
///
/// A middleware that parks a request and resumes it from another task (a token refresh that
/// many requests wait for) captures the context where the request arrives and resumes it
/// inside ``run(_:)``: otherwise the request would carry the values of whichever task resumed
/// it.
struct RequestContext: Sendable {
    private let receipt: AnswerReceipt?
    private let recorder: ReadRecorder?
    private let storedOnly: Bool
    private let feed: ChangeFeed?

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
