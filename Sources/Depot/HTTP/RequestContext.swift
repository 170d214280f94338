import Foundation

/// What the caller of a request wants to learn back, carried down the chain on the request
/// itself (``BackendRequest/context``): the ``AnswerReceipt`` where its answer's source and
/// pending writes are noted, and, for a watched read, whether only stored answers may answer.
/// A middleware passes it on with the request it was given: the article *Using Middleware*.
public struct RequestContext: Sendable {
    /// Where the caller collects where its answers came from, if it does.
    public var receipt: AnswerReceipt?
    /// Whether the caller wants only an answer already stored (a watch's first look): a
    /// middleware that stores answers serves one without asking the network, or fails with
    /// ``ServiceError/noConnection``; any other middleware passes the request on.
    public package(set) var storedOnly: Bool
    /// A watch's record of the reads it makes (see ``LiveWatch``).
    package var reads: ReadRecorder?
    /// The outbox replay that sends this request, if one does: DepotOffline's middleware lets
    /// its own replay's requests through, and ``LiveMiddleware`` leaves their changes to the
    /// store that reports them.
    package var replay: ObjectIdentifier?
    /// The change feed of the ``LiveMiddleware`` a write passed, which publishes what the
    /// write touched as it returns: a store that queues the write tells its other listeners
    /// only.
    package var publishedBy: ObjectIdentifier?

    /// A context; `receipt` collects where the answers came from.
    public init(receipt: AnswerReceipt? = nil) {
        self.receipt = receipt
        self.storedOnly = false
    }

    /// A context for a watched read or a replay.
    package init(
        receipt: AnswerReceipt?, storedOnly: Bool, reads: ReadRecorder?, replay: ObjectIdentifier? = nil
    ) {
        self.receipt = receipt
        self.storedOnly = storedOnly
        self.reads = reads
        self.replay = replay
    }

    /// Whether an outbox replay sends this request.
    package var isReplay: Bool { replay != nil }

    /// The context of the call being made now: set where the app enters (``AnswerReceipt``'s
    /// `collect`, a watch's read), and read once by ``BackendRequest``'s initializers.
    @TaskLocal static var entered = RequestContext()

    /// Makes `body` with `change` applied to the context of the call.
    static func entering<T>(_ change: (inout RequestContext) -> Void, _ body: () throws -> T) rethrows -> T {
        var context = entered
        change(&context)
        return try $entered.withValue(context) { try body() }
    }

    /// Runs `body` with `change` applied to the context of the call.
    static func entering<T>(
        _ change: (inout RequestContext) -> Void, _ body: () async throws -> T
    ) async rethrows -> T {
        var context = entered
        change(&context)
        return try await $entered.withValue(context) { try await body() }
    }
}
