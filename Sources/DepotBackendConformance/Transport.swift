import Depot
import Foundation
import Testing

extension NetworkConformance {
    /// Cancellation (the ``Cancellable`` and the awaiting `Task`) and compressed bodies.
    public static let transport: [ConformanceCheck] = [
        ConformanceCheck("transport: cancelling the Cancellable ends the request as .cancelled") { subject in
            let backend = subject.backend(try #require(LiveServer.fault), timeout: 10)
            let outcome = Guarded<Result<BackendResponse, ServiceError>?>(nil)
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
    ]
}
