import Foundation
import Testing

@testable import Depot

/// Collects the progress values one request reports, in order.
final class ProgressLog: Sendable {
    private let values = Locked<[TransferProgress]>([])

    /// The handler to put on a request.
    var handler: ProgressHandler {
        ProgressHandler { [values] progress in values.withLock { $0.append(progress) } }
    }

    /// Every value reported so far.
    var all: [TransferProgress] {
        values.withLock { $0 }
    }

    /// The values of one direction.
    func values(_ direction: TransferProgress.Direction) -> [TransferProgress] {
        all.filter { $0.direction == direction }
    }

    /// Checks that the values of `direction` never go back and end at `total` bytes,
    /// with that total known (or unknown, for `total == nil`, ending at `completed`).
    func expectMonotonic(
        _ direction: TransferProgress.Direction, endingAt completed: Int64, total: Int64?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let values = values(direction)
        #expect(!values.isEmpty, "no \(direction) progress reported", sourceLocation: sourceLocation)
        let bytes = values.map(\.completedBytes)
        #expect(
            bytes == bytes.sorted(), "progress went back: \(bytes.prefix(20))", sourceLocation: sourceLocation
        )
        #expect(values.last?.completedBytes == completed, sourceLocation: sourceLocation)
        if let total {
            #expect(values.allSatisfy { $0.totalBytes == total }, sourceLocation: sourceLocation)
            #expect(values.last?.isComplete == true, sourceLocation: sourceLocation)
        }
    }
}

/// A folder of its own under the temporary directory, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "depot-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// A file of `count` bytes counting up (byte i is i % 251), so misplaced bytes show.
    func file(_ name: String, bytes count: Int) throws -> URL {
        let file = self.file(name)
        try Data((0..<count).map { UInt8($0 % 251) }).write(to: file)
        return file
    }

    /// The names in the folder, sorted: a partial file left behind shows here.
    var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A backend of someone else's that ignores transfers: answers `body` from memory, and
/// records the requests it received.
struct MemoryOnlyBackend: Backend {
    let body: Data
    let received = Locked<[BackendRequest]>([])

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        received.withLock { $0.append(request) }
        return .success(BackendResponse(status: 200, headers: ["Content-Type": "image/png"], body: body))
    }
}

/// A progress handler a test can wait on: it logs every report and announces the first one
/// `matches` accepts. Put on the request before the transfer starts, it misses no report, so
/// a test waits for that event (with ``hangBound``), never for time.
final class ProgressWatch: Sendable {
    /// Every report, in order.
    let log = ProgressLog()
    private let matches: @Sendable (TransferProgress) -> Bool
    private let reached: AsyncStream<TransferProgress>
    private let announce: AsyncStream<TransferProgress>.Continuation

    init(until matches: @escaping @Sendable (TransferProgress) -> Bool) {
        self.matches = matches
        (reached, announce) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(1))
    }

    /// The handler to put on the request.
    var handler: ProgressHandler {
        let log = log.handler
        return ProgressHandler { [matches, announce] progress in
            log.report(progress)
            if matches(progress) { announce.yield(progress) }
        }
    }

    /// The first report `matches` accepted, once it came; `nil` when none came within
    /// ``hangBound``.
    func reached() async -> TransferProgress? {
        let reports = reached
        let first = await awaitBounded { () async -> TransferProgress? in
            for await progress in reports { return progress }
            return nil
        }
        return first ?? nil
    }
}
