import Foundation

/// One state of a watched read (``LiveWatch``): its value or its error, where the answers came
/// from, and whether a fresher one is on its way.
public struct Snapshot<Value: Sendable>: Sendable {
    /// The read's value, or the error it ended with.
    public var result: Result<Value, any Error>
    /// Where the answers came from: the server, or a store (with when it was received).
    public var source: AnswerSource
    /// How many writes not yet sent to the server the answers include (DepotOffline's
    /// local-first reads); `0` when they are the server's.
    public var pendingWrites: Int
    /// Whether a fresher answer is on its way: the stored answer shown while the network's is
    /// read, or an answer that came while a ``LiveWatch/refresh()`` asked for after its read
    /// began is still to come.
    public var isRefreshing: Bool
    /// The number of the latest ``LiveWatch/refresh()`` this snapshot's read began after (`0`
    /// for none, and for a stored answer shown while the network's is read): what
    /// ``LiveQuery/refresh()`` waits for.
    var refreshesAnswered = 0

    /// Creates a snapshot.
    public init(
        result: Result<Value, any Error>, source: AnswerSource, pendingWrites: Int, isRefreshing: Bool
    ) {
        self.result = result
        self.source = source
        self.pendingWrites = pendingWrites
        self.isRefreshing = isRefreshing
    }

    /// The value, when the read succeeded.
    public var value: Value? {
        try? result.get()
    }

    /// The error, when the read failed.
    public var error: (any Error)? {
        if case .failure(let error) = result { return error }
        return nil
    }
}
