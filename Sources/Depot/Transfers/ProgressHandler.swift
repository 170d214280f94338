/// Receives the ``TransferProgress`` of one request while its bodies move, without
/// changing what the call returns: set it on ``BackendRequest/progress``, or pass it as
/// the `progress:` argument of a repository's download and upload helpers.
///
/// ```swift
/// let progress = ProgressHandler { print("\($0.completedBytes) of \($0.totalBytes ?? 0) bytes") }
/// let file = try await movies.download(["posters", "1"], to: posterURL, progress: progress).value
/// ```
///
/// It runs often, on the thread that moved the bytes: keep it short. How every backend reports,
/// retries included, and progress as an `AsyncSequence`: the article *Transfers*.
public struct ProgressHandler: Sendable, Hashable {
    private final class Box: Sendable {
        let report: @Sendable (TransferProgress) -> Void

        init(_ report: @escaping @Sendable (TransferProgress) -> Void) {
            self.report = report
        }
    }

    private let box: Box

    /// A handler that calls `report` with each progress value.
    public init(_ report: @escaping @Sendable (TransferProgress) -> Void) {
        box = Box(report)
    }

    /// Hands `progress` to the handler; backends call this as bytes move.
    public func report(_ progress: TransferProgress) {
        box.report(progress)
    }

    /// Whether both are the same handler.
    public static func == (lhs: ProgressHandler, rhs: ProgressHandler) -> Bool {
        lhs.box === rhs.box
    }

    /// Hashes the handler's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(box))
    }
}
