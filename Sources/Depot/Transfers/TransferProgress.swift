/// How far a transfer has come: the bytes of the body sent so far, or of the answer
/// received so far, and how many there are in all when that is known.
///
/// A ``ProgressHandler`` receives these while a request with a large body or answer
/// moves; ``fractionCompleted`` is what a progress bar shows.
public struct TransferProgress: Sendable, Hashable {
    /// Which body is moving.
    public enum Direction: Sendable, Hashable {
        /// The request's body, going out.
        case upload
        /// The answer's body, coming in.
        case download
    }

    /// Which body is moving.
    public var direction: Direction
    /// The bytes moved so far. For a resumed download it counts the bytes already on
    /// disk from the earlier attempt, so the bar picks up where it stopped.
    public var completedBytes: Int64
    /// The bytes there are in all, or `nil` when the other side did not say (an answer
    /// without `Content-Length`).
    public var totalBytes: Int64?

    /// Creates a progress value.
    public init(direction: Direction, completedBytes: Int64, totalBytes: Int64?) {
        self.direction = direction
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// The share done, from 0 to 1, or `nil` when the total is unknown. An empty body
    /// is complete (1).
    public var fractionCompleted: Double? {
        guard let totalBytes else { return nil }
        guard totalBytes > 0 else { return 1 }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }

    /// Whether every byte has moved (always `false` when the total is unknown).
    public var isComplete: Bool {
        totalBytes.map { completedBytes >= $0 } ?? false
    }
}
