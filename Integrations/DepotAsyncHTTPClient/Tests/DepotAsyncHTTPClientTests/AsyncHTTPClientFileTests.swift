import AsyncHTTPClient
import Depot
import DepotAsyncHTTPClient
import DepotBackendConformance
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// Transfers to and from files on `AsyncHTTPClientBackend`: their file work runs on a thread
/// pool, so it must leave the client's event loop free and still keep every outcome of a
/// download (the file in place, a partial file removed on a cancel, a `304` leaving the file).
@Suite(.liveServers) struct AsyncHTTPClientFileTests {
    /// The bytes of the big download.
    static let bigDownload = 200 << 20
    /// The worst lateness allowed to a task scheduled on the loop every 2 ms while the
    /// download runs: generous, for a 2-core machine busy with other builds, where it
    /// measured 4 to 36 ms (a disk that stalls a write for longer would show here if the
    /// writes ran on the loop).
    static let probeBound = Duration.milliseconds(500)
    /// The longest a small request through the same loop may take while the download runs
    /// (measured: 9 to 46 ms).
    static let smallRequestBound = Duration.seconds(2)

    @Test(
        "a 200 MB download to a file does not stall a small request or a scheduled task on its one event loop",
        .timeLimit(.minutes(5)))
    func bigDownloadLeavesTheLoopFree() async throws {
        let base = try #require(LiveServer.fault)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(
            eventLoopGroup: group, configuration: AsyncHTTPClientBackend.recommendedConfiguration())
        let backend = AsyncHTTPClientBackend(baseURL: base, client: client, timeout: 240)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }

        var request = BackendRequest(
            path: "blob", query: [.init(name: "bytes", value: "\(Self.bigDownload)")])
        request.destination = DownloadDestination(folder.appendingPathComponent("big.bin"))
        let done = NIOLockedValueBox(false)
        let probe = LoopProbe(loop: group.next())
        probe.start()
        let download = Task {
            defer { done.withLockedValue { $0 = true } }
            return await backend.download(request).result
        }

        // Small requests, one after the other, for as long as the download runs.
        var smallRequests: [Duration] = []
        let clock = ContinuousClock()
        while !done.withLockedValue({ $0 }) {
            let started = clock.now
            let small = await backend.send(
                BackendRequest(path: "json", query: [.init(name: "id", value: "1")])
            )
            .result
            smallRequests.append(clock.now - started)
            #expect((try? small.get())?.status == 200, "\(small)")
        }
        let file = try await download.value.get()
        let lateness = try await probe.stop()
        try await client.shutdown()
        try await group.shutdownGracefully()

        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        #expect(size?.intValue == Self.bigDownload)
        let worstProbe = try #require(lateness.max())
        let worstSmall = try #require(smallRequests.max())
        print(
            "AsyncHTTPClientFileTests: \(lateness.count) probes, worst lateness \(worstProbe), 99th percentile \(lateness.sorted()[lateness.count * 99 / 100]); \(smallRequests.count) small requests, slowest \(worstSmall)"
        )
        #expect(worstProbe < Self.probeBound)
        #expect(worstSmall < Self.smallRequestBound)
    }

    @Test("cancelling a download half way ends .cancelled and leaves neither the file nor a partial one")
    func cancelHalfWay() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = 8 << 20
        let halfway = NIOLockedValueBox<CheckedContinuation<Void, Never>?>(nil)
        var request = BackendRequest(
            path: "blob",
            query: [.init(name: "bytes", value: "\(bytes)"), .init(name: "rate", value: "\(4 << 20)")])
        request.destination = DownloadDestination(folder.appendingPathComponent("slow.bin"))
        request.progress = ProgressHandler { value in
            if (value.fractionCompleted ?? 0) >= 0.5 {
                halfway.withLockedValue { continuation in
                    defer { continuation = nil }
                    return continuation
                }?.resume()
            }
        }
        let backend = AsyncHTTPClientBackend(baseURL: try #require(LiveServer.fault), timeout: 60)

        let outcome = NIOLockedValueBox<Result<URL, ServiceError>?>(nil)
        let finished = AsyncStream<Void>.makeStream()
        let running = backend.download(request).start { result in
            outcome.withLockedValue { $0 = result }
            finished.continuation.finish()
        }
        await withCheckedContinuation { continuation in halfway.withLockedValue { $0 = continuation } }
        let during = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(during.count == 1 && during[0].hasPrefix("slow.bin.depot-partial-"), "\(during)")
        running.cancel()
        for await _ in finished.stream {}

        guard case .failure(.cancelled)? = outcome.withLockedValue({ $0 }) else {
            Issue.record("expected .cancelled, got \(String(describing: outcome.withLockedValue { $0 }))")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
        try await backend.shutdown()
    }

    @Test("a 304 to a conditional download (httpbin /etag) leaves the file as it was, and returns it")
    func notModified() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("tagged.json")
        try Data("kept".utf8).write(to: target)
        let backend = AsyncHTTPClientBackend(baseURL: try #require(LiveServer.httpbin), timeout: 30)

        var request = BackendRequest(path: "etag/v1", headers: ["If-None-Match": "\"v1\""])
        request.destination = DownloadDestination(target)
        let file = try await backend.download(request).value

        #expect(file == target)
        #expect(try Data(contentsOf: target) == Data("kept".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tagged.json"])
        try await backend.shutdown()
    }

    @Test("an upload from a file, read on the thread pool: the server's digest of the body is the file's")
    func uploadFromFile() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let backend = AsyncHTTPClientBackend(baseURL: try #require(LiveServer.fault), timeout: 60)
        let bytes = 5_000_000
        let blob: [URLQueryItem] = [.init(name: "bytes", value: "\(bytes)")]
        var download = BackendRequest(path: "blob", query: blob)
        download.destination = DownloadDestination(folder.appendingPathComponent("blob.bin"))
        let file = try await backend.download(download).value

        var upload = BackendRequest(method: .put, path: "upload")
        upload.bodyFile = file
        upload.headers["Content-Type"] = "application/octet-stream"
        let received = try JSONDecoder().decode(Digest.self, from: try await backend.send(upload).value.body)
        let expected = try JSONDecoder().decode(
            Digest.self,
            from: try await backend.send(BackendRequest(path: "blob-digest", query: blob)).value.body)

        #expect(received.bytes == bytes)
        #expect(received.sha256 == expected.sha256)
        try await backend.shutdown()
    }

    /// The size and SHA-256 the fault server reports for a body.
    private struct Digest: Decodable {
        let bytes: Int
        let sha256: String
    }

    /// A fresh folder for one test's files.
    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "depot-ahc-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// Measures how late tasks scheduled on `loop` every 2 ms run: how long the loop was
/// busy with something else when they were due.
final class LoopProbe: Sendable {
    private let loop: any EventLoop
    private let state = NIOLockedValueBox<(lateness: [Duration], stopped: Bool)>(([], false))
    private let finished: EventLoopPromise<Void>

    init(loop: any EventLoop) {
        self.loop = loop
        finished = loop.makePromise()
    }

    /// Starts scheduling.
    func start() {
        loop.execute { self.next() }
    }

    /// Stops scheduling once the task due now has run; returns every lateness.
    func stop() async throws -> [Duration] {
        state.withLockedValue { $0.stopped = true }
        try await finished.futureResult.get()
        return state.withLockedValue { $0.lateness }
    }

    private func next() {
        let due = NIODeadline.now() + .milliseconds(2)
        loop.scheduleTask(deadline: due) {
            let late = NIODeadline.now() - due
            let stopped = self.state.withLockedValue { state in
                state.lateness.append(.nanoseconds(late.nanoseconds))
                return state.stopped
            }
            if stopped { self.finished.succeed() } else { self.next() }
        }
    }
}
