/// Receives the ``TransferProgress`` of one request while its bodies move, without
/// changing what the call returns: set it on ``BackendRequest/progress``, or pass it as
/// the `progress:` argument of a repository's download and upload helpers.
///
/// ```swift
/// let progress = ProgressHandler { progress in
///     print("poster: \(progress.completedBytes) of \(progress.totalBytes ?? 0) bytes")
/// }
/// let file = try await movies.download(["posters", "1"], to: posterURL, progress: progress).value
/// ```
///
/// Every backend reports the same way: ``URLSessionBackend`` as the bytes cross the
/// network, `InMemoryBackend` in slices of the body (spread over its
/// `InMemoryBackend.latency`), so a UI test sees a bar move. Within one attempt the
/// values only grow, and the last one of a complete transfer has
/// ``TransferProgress/completedBytes`` equal to ``TransferProgress/totalBytes`` when
/// the total is known. A retry starts a new attempt, which reports from its own start
/// (0, or the bytes kept on disk for a resumed download).
///
/// The handler runs on the thread that moved the bytes (a background queue for
/// ``URLSessionBackend``), often many times a second: keep it short, and hop to the
/// main actor for UI. To read the values as an `AsyncSequence`, feed an `AsyncStream`:
///
/// ```swift
/// let (updates, continuation) = AsyncStream.makeStream(of: TransferProgress.self,
///                                                      bufferingPolicy: .bufferingNewest(1))
/// let download = movies.download(["posters", "1"], to: posterURL,
///                                progress: ProgressHandler { continuation.yield($0) })
/// Task { for await progress in updates { bar.value = progress.fractionCompleted ?? 0 } }
/// defer { continuation.finish() }
/// let file = try await download.value
/// ```
///
/// Two handlers are equal only when they are the same handler (a copy of one value),
/// so a ``BackendRequest`` that carries one stays `Hashable`.
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
