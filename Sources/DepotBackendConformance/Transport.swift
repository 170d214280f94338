import Depot
import Foundation
import Testing

extension NetworkConformance {
    /// Cancellation (the ``Cancellable`` and the awaiting `Task`), compressed bodies, an
    /// upload from a file, and downloads to files (resumed after a cut; a 404 leaves none).
    public static let transport: [ConformanceCheck] = [
        ConformanceCheck("transport: cancelling the Cancellable ends the request as .cancelled") { subject in
            let backend = subject.backend(try #require(LiveServer.fault), timeout: 10)
            let outcome = Locked<Result<BackendResponse, ServiceError>?>(nil)
            let ended = AsyncStream<Void>.makeStream()
            let started = backend.send(BackendRequest(path: "silent")).start { result in
                outcome.withLock { $0 = result }
                ended.continuation.finish()
            }
            try await Task.sleep(for: .milliseconds(200))
            started.cancel()
            let clock = ContinuousClock()
            let start = clock.now
            for await _ in ended.stream {}
            #expect(start.duration(to: clock.now) < .seconds(3))
            #expect(outcome.withLock { $0 }?.failure?.conformanceCaseName == "cancelled")
        },
        ConformanceCheck("transport: cancelling the awaiting Task ends the request as .cancelled") {
            subject in
            let backend = subject.backend(try #require(LiveServer.fault), timeout: 10)
            let task = Task { await backend.send(BackendRequest(path: "silent")).result }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            let result = await task.value
            #expect(result.failure?.conformanceCaseName == "cancelled", "\(subject): \(result)")
        },
        ConformanceCheck("transport: a gzip body arrives decompressed") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let json = try await backend.send(BackendRequest(path: "gzip")).value.conformanceJSON()
            #expect(json["gzipped"] == .bool(true))
        },
        ConformanceCheck("transport: a deflate body arrives decompressed") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let json = try await backend.send(BackendRequest(path: "deflate")).value.conformanceJSON()
            #expect(json["deflated"] == .bool(true))
        },
        ConformanceCheck("transport: a body file is uploaded as it is on disk") { subject in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "depot-conformance-\(UUID().uuidString).txt")
            try Data("uploaded from a file".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = BackendRequest(method: .post, path: "anything/upload")
            request.bodyFile = file
            request.headers["Content-Type"] = "text/plain"
            let json = try await subject.backend(try #require(LiveServer.httpbin)).send(request).value
                .conformanceJSON()
            #expect(json["data"] == .string("uploaded from a file"))
            #expect(json["method"] == .string("POST"))
        },
        ConformanceCheck(
            "transport: a resumable download cut short keeps its bytes; the next one gets the rest with Range"
        ) { subject in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "depot-conformance-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("movie.bin")
            let backend = subject.backend(try #require(LiveServer.fault), timeout: 30)
            var cut = BackendRequest(
                path: "blob",
                query: [.init(name: "bytes", value: "3000000"), .init(name: "cut", value: "1000000")])
            cut.destination = DownloadDestination(target, resumable: true)
            let first = await backend.download(cut).result
            #expect(first.failure?.conformanceCaseName == "transport", "\(subject): \(first)")

            let progress = Locked<[TransferProgress]>([])
            var rest = BackendRequest(path: "blob", query: [.init(name: "bytes", value: "3000000")])
            rest.destination = DownloadDestination(target, resumable: true)
            rest.progress = ProgressHandler { value in progress.withLock { $0.append(value) } }
            let file = try await backend.download(rest).value

            let whole = try await backend.send(
                BackendRequest(path: "blob", query: [.init(name: "bytes", value: "3000000")])
            )
            .value.body
            #expect(try Data(contentsOf: file) == whole)
            #expect(progress.withLock { $0.first?.completedBytes } == 1_000_000, "\(subject): not resumed")
            #expect(progress.withLock { $0.last?.completedBytes } == 3_000_000)
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(left == ["movie.bin"])
        },
        ConformanceCheck("transport: a download answered 404 is .notFound and leaves no file") { subject in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "depot-conformance-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            var request = BackendRequest(path: "missing-file")
            request.destination = DownloadDestination(folder.appendingPathComponent("gone.bin"))
            request.progress = ProgressHandler { _ in }
            let result = await subject.backend(try #require(LiveServer.fault)).download(request).result
            #expect(result.failure?.conformanceCaseName == "notFound", "\(subject): \(result)")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] == [])
        },
    ]
}
