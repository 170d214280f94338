import Foundation
import Testing

@_spi(BackendSupport) @testable import Depot
@testable import DepotInMemory

/// Transfers on ``InMemoryBackend``: uploads from files, downloads to files, progress,
/// and the failures a download must leave no file behind for. The same rules run over
/// real HTTP in ``TransferLiveTests``.
@Suite struct InMemoryTransferTests {
    /// 300 photos, each about 150 bytes: a listing of some 40 KB.
    static func photoBackend(latency: TimeInterval = 0) throws -> InMemoryBackend {
        let photos: [[String: JSONValue]] = (1...300).map { id in
            ["id": .int(id), "albumId": .int(id % 7), "title": .string("photo \(id)")]
        }
        let backend = try InMemoryBackend(seed: ["photos": photos, "posts": [[String: JSONValue]]()])
        backend.latency = latency
        return backend
    }

    @Test(
        "a download writes the answer's bytes to the file, reports progress up to its size, and leaves no partial file"
    )
    func downloadWritesTheFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        let expected = try await backend.send(BackendRequest(path: "photos")).value.body
        let log = ProgressLog()
        let repository = PhotoFiles(backend: backend)

        let file = try await repository.download(
            ["photos"], to: folder.file("photos.json"), progress: log.handler
        ).value

        #expect(file == folder.file("photos.json"))
        #expect(try Data(contentsOf: file) == expected)
        #expect(folder.names == ["photos.json"])
        log.expectMonotonic(.download, endingAt: Int64(expected.count), total: Int64(expected.count))
        #expect(backend.requests.last?.method == .get)
        #expect(backend.requests.last?.path == "photos")
    }

    @Test("a download replaces what the file held, and creates missing folders")
    func downloadReplacesTheFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        let target = folder.file("cache/posters/1.json")
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: target)

        _ = try await PhotoFiles(backend: backend).download(["photos", "1"], to: target).value

        let photo = try JSONDecoder().decode([String: JSONValue].self, from: Data(contentsOf: target))
        #expect(photo["id"] == .int(1))
    }

    @Test("a 404 on a download is .notFound and leaves no file, not a file holding the error page")
    func downloadOf404LeavesNoFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()

        let result = await PhotoFiles(backend: backend).download(
            ["photos", "999"], to: folder.file("p.json")
        ).result

        guard case .failure(.notFound) = result else {
            Issue.record("expected .notFound, got \(result)")
            return
        }
        #expect(folder.names.isEmpty)
    }

    @Test("a 500 on a download keeps its message and leaves no file")
    func downloadOfServerErrorKeepsMessage() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        backend.failNext(1, status: 500, body: Data(#"{"error": "disk on fire"}"#.utf8))

        let result = await PhotoFiles(backend: backend).download(["photos"], to: folder.file("p.json")).result

        guard case .failure(let error) = result, case .serverError = error else {
            Issue.record("expected .serverError, got \(result)")
            return
        }
        #expect(error.message == "disk on fire")
        #expect(folder.names.isEmpty)
    }

    /// A backend whose first answer to `GET path` comes after a short latency, on a thread of
    /// its own, and is then spread over far longer than a test waits: a transfer a test cancels
    /// or contends with while it surely runs, however busy the machine. Later answers come as
    /// the backend's latency then says.
    static func slowTransfer(of body: Data, at path: String) -> InMemoryBackend {
        let backend = InMemoryBackend()
        backend.latency = 0.05
        let first = Locked(true)
        backend.route(.get, path) { [weak backend] _ in
            let isFirst = first.withLock { isFirst in
                defer { isFirst = false }
                return isFirst
            }
            if isFirst {
                // Read when the answer arrives: its slices come `4 × hangBound` apart.
                backend?.latency = 4 * hangBound * Double(InMemoryTransfer.slices(of: body.count).count)
            }
            return BackendResponse(status: 200, body: body)
        }
        return backend
    }

    @Test(
        "cancelling a download spread over the latency ends .cancelled at once and removes the partial file")
    func cancelledDownloadLeavesNoFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // 300 KB in five slices of 64 KB.
        let backend = Self.slowTransfer(of: Data(repeating: 7, count: 300_000), at: "big")
        let watch = ProgressWatch { $0.completedBytes > 0 }
        var request = BackendRequest(path: "big")
        request.destination = DownloadDestination(folder.file("big.bin"))
        request.progress = watch.handler
        let transfer = StartedFuture(backend.send(request))

        #expect(await watch.reached()?.isComplete == false)
        #expect(folder.names.count == 1 && folder.names[0].hasPrefix("big.bin.depot-partial-"))
        transfer.cancel()
        // Bounded far below the next slice: a cancellation that waited for it would come too late.
        let outcome = await transfer.result()

        guard case .failure(.cancelled)? = outcome else {
            Issue.record("expected .cancelled, got \(String(describing: outcome))")
            return
        }
        #expect(folder.names.isEmpty)
        #expect(watch.log.values(.download).last?.isComplete == false)
    }

    @Test("with a latency the answer's progress is spread over time, in order")
    func latencySpreadsProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let body = Data(repeating: 1, count: 256 << 10)
        let backend = InMemoryBackend()
        backend.route(.get, "poster") { _ in BackendResponse(status: 200, body: body) }
        backend.latency = 0.2
        let stamps = Locked<[(Int64, ContinuousClock.Instant)]>([])
        let progress = ProgressHandler { value in stamps.withLock { $0.append((value.completedBytes, .now)) }
        }
        var request = BackendRequest(path: "poster")
        request.destination = DownloadDestination(folder.file("poster.png"))
        request.progress = progress

        let response = try await backend.send(request).value

        #expect(response.file == folder.file("poster.png"))
        #expect(response.body.isEmpty)
        let values = stamps.withLock { $0 }
        #expect(values.map(\.0) == [0, 65_536, 131_072, 196_608, 262_144])
        // The four slices came over about 0.2 s, not at once.
        if let first = values.first?.1, let last = values.last?.1 {
            #expect(first.duration(to: last) >= .milliseconds(120))
        }
    }

    @Test("an upload from a file sends the file's bytes as the body, with upload progress up to its size")
    func uploadFromFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        let draft = folder.file("draft.json")
        try Data(#"{"title": "from disk", "userId": 3}"#.utf8).write(to: draft)
        let log = ProgressLog()

        let created: [String: JSONValue] = try await PhotoFiles(backend: backend).request(
            .post, ["posts"], body: .file(draft, contentType: "application/json"), progress: log.handler
        ).value

        #expect(created["title"] == .string("from disk"))
        #expect(created["id"] == .int(1))
        let sent = try #require(backend.requests.last)
        #expect(sent.body == (try Data(contentsOf: draft)))
        #expect(sent.headers["Content-Type"] == "application/json")
        let size = Int64(try Data(contentsOf: draft).count)
        log.expectMonotonic(.upload, endingAt: size, total: size)
    }

    @Test(
        "a body file without a Content-Type goes as application/octet-stream, which json-server does not read"
    )
    func uploadWithoutContentTypeIsOpaque() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        var request = BackendRequest(method: .post, path: "posts")
        request.bodyFile = folder.file("draft.json")
        try Data(#"{"title": "ignored"}"#.utf8).write(to: folder.file("draft.json"))

        let response = try await backend.send(request).value

        #expect(backend.requests.last?.headers["Content-Type"] == "application/octet-stream")
        let created = try JSONDecoder().decode([String: JSONValue].self, from: response.body)
        #expect(created == ["id": .int(1)])
    }

    @Test(
        "a multipart form with file parts reaches the server as the form encodes it, and its temporary file is removed"
    )
    func multipartFromFiles() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = InMemoryBackend()
        let received = Locked<Data?>(nil)
        backend.route(.post, "photos") { context in
            received.withLock { $0 = context.request.body }
            return .json(["ok": true], status: 201)
        }
        var form = MultipartForm(boundary: "b0undary")
        form.append("title", "Holiday")
        form.append("photo", fileAt: try folder.file("beach.jpg", bytes: 200_000), contentType: "image/jpeg")
        form.append("thumb", file: Data([1, 2, 3]), filename: "t.jpg", contentType: "image/jpeg")
        let probe = BodyFileProbe(backend)

        _ = try await PhotoFiles(backend: probe).send(.post, ["photos"], body: .multipart(form)).value

        #expect(received.withLock { $0 } == (try form.encoded()))
        #expect(backend.requests.last?.headers["Content-Type"] == "multipart/form-data; boundary=b0undary")
        let temporary = try #require(probe.seen.first?.file)
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
    }

    @Test("a form whose file is missing fails .invalidRequest naming it, and sends nothing")
    func multipartWithMissingFile() async throws {
        let backend = try Self.photoBackend()
        var form = MultipartForm()
        form.append("photo", fileAt: URL(fileURLWithPath: "/nonexistent/depot/beach.jpg"))

        let result = await PhotoFiles(backend: backend).send(.post, ["photos"], body: .multipart(form)).result

        guard case .failure(.invalidRequest(let reason)) = result else {
            Issue.record("expected .invalidRequest, got \(result)")
            return
        }
        #expect(reason.contains("/nonexistent/depot/beach.jpg"))
        #expect(backend.requests.isEmpty)
    }

    @Test(
        "two resumable downloads to one file at once: the second fails .invalidRequest; once the first ends, the file is free"
    )
    func oneResumableDownloadPerFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = Self.slowTransfer(of: Data(repeating: 1, count: 100_000), at: "movie")
        let files = PhotoFiles(backend: backend)
        let target = folder.file("movie.bin")
        // The first has claimed the file once it reports; its answer then takes far longer than the test.
        let watch = ProgressWatch { _ in true }

        let first = StartedFuture(
            files.download(["movie"], to: target, resumable: true, progress: watch.handler))
        #expect(await watch.reached() != nil)
        let second = await files.download(["movie"], to: target, resumable: true).result

        guard case .failure(.invalidRequest(let reason)) = second else {
            Issue.record("expected .invalidRequest, got \(second)")
            return
        }
        #expect(reason.contains("already under way"))
        first.cancel()
        #expect(await first.result()?.failure == .cancelled)
        // Once it ended, the file is free again.
        backend.latency = 0
        #expect(try await files.download(["movie"], to: target, resumable: true).value == target)
    }

    @Test("two plain downloads to one file at once both complete, each through its own partial file")
    func plainDownloadsDoNotMeet() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend(latency: 0.1)
        let files = PhotoFiles(backend: backend)
        let target = folder.file("photos.json")

        async let first = files.download(["photos"], to: target).result
        async let second = files.download(["photos"], to: target).result

        #expect(try await first.get() == target)
        #expect(try await second.get() == target)
        #expect(folder.names == ["photos.json"])
    }

    @Test("a 304 to a conditional download leaves the file as it was, and returns it")
    func notModifiedKeepsTheFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        let files = PhotoFiles(backend: backend)
        let target = folder.file("photo.json")
        _ = try await files.download(["photos", "1"], to: target).value
        let saved = try Data(contentsOf: target)
        let tag = try #require(try await backend.send(BackendRequest(path: "photos/1")).value.headers["ETag"])

        let again = try await files.download(["photos", "1"], headers: ["If-None-Match": tag], to: target)
            .value

        #expect(again == target)
        #expect(try Data(contentsOf: target) == saved)
        #expect(folder.names == ["photo.json"])
    }

    @Test("an upload from a symbolic link sends the file it points at")
    func uploadThroughASymbolicLink() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        let draft = folder.file("draft.json")
        try Data(#"{"title": "linked"}"#.utf8).write(to: draft)
        let link = folder.file("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: draft)

        let created: [String: JSONValue] = try await PhotoFiles(backend: backend).request(
            .post, ["posts"], body: .file(link, contentType: "application/json")
        ).value

        #expect(created["title"] == .string("linked"))
    }

    @Test("a retried download starts over and completes; the failed attempt leaves nothing")
    func retriedDownload() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try Self.photoBackend()
        backend.failNext(1, status: 503)
        let files = PhotoFiles(
            backend: backend.with(RetryMiddleware(policy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01))))

        let file = try await files.download(["photos"], to: folder.file("photos.json")).value

        #expect(
            try Data(contentsOf: file) == (try await backend.send(BackendRequest(path: "photos")).value.body))
        #expect(folder.names == ["photos.json"])
        #expect(backend.requests.count == 3)
    }

    @Test("a backend that answers in memory still downloads: Backend.download writes its body to the file")
    func downloadThroughAMemoryOnlyBackend() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = MemoryOnlyBackend(body: Data([0x89, 0x50, 0x4E, 0x47]))

        let file = try await PhotoFiles(backend: backend).download(
            ["posters", "1"], to: folder.file("1.png")
        ).value

        #expect(try Data(contentsOf: file) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(folder.names == ["1.png"])
    }

    @Test("HypermediaClient downloads what a link offers; a missing link sends nothing")
    func hypermediaDownload() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = InMemoryBackend()
        backend.route(.get, "posters/1.png") { _ in
            BackendResponse(status: 200, headers: ["Content-Type": "image/png"], body: Data([1, 2, 3, 4]))
        }
        let client = HypermediaClient(backend: backend, root: InMemoryBackend.defaultBaseURL)
        let movie = Resource(
            ["title": "Alien"] as JSONValue,
            links: [Link(rel: "poster", href: "posters/1.png", type: "image/png")])

        let file = try await client.download("poster", from: movie, to: folder.file("1.png")).value
        let missing = await client.download("trailer", from: movie, to: folder.file("t.mp4")).result

        #expect(try Data(contentsOf: file) == Data([1, 2, 3, 4]))
        #expect(backend.requests.count == 1)
        #expect(backend.requests.last?.headers["Accept"] == "image/png")
        guard case .failure(.invalidRequest) = missing else {
            Issue.record("expected .invalidRequest, got \(missing)")
            return
        }
    }
}

/// A client of the photo API with no entity: for the raw download and upload helpers.
struct PhotoFiles: BackendClient {
    let backend: any Backend
}

/// What a resumable download keeps on disk after each kind of failure, and what a retry
/// does with a disk error.
@Suite struct DownloadFileTests {
    /// Begins a resumable download of `bytes` bytes with a strong ETag and writes half of them.
    private func halfWritten(_ target: URL, bytes: Int = 1000) throws -> DownloadFile {
        let file = try DownloadFile(DownloadDestination(target, resumable: true))
        _ = try file.begin(status: 200, headers: ["ETag": "\"v1\""], declaredLength: Int64(bytes))
        _ = try file.write(Data(repeating: 1, count: bytes / 2))
        return file
    }

    @Test(
        "a resumable download keeps its bytes after a cut, a 401, a 5xx or a timeout, and asks for the rest next time",
        arguments: [
            ServiceError.transport(code: -1005, description: "lost"), .timedOut,
            .unauthorized(FailureResponse(status: 401), challenges: []),
            .serverError(FailureResponse(status: 502)),
        ])
    func keepsBytes(after error: ServiceError) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("movie.bin")
        try halfWritten(target).abandon(after: error)

        let next = try DownloadFile(DownloadDestination(target, resumable: true))
        defer { next.abandon(after: .cancelled) }

        #expect(next.resumeOffset == 500)
        #expect(next.resumeFields.contains(.init(name: "Range", value: "bytes=500-")))
        #expect(next.resumeFields.contains(.init(name: "If-Range", value: "\"v1\"")))
    }

    @Test(
        "a resumable download drops its bytes when cancelled or when the resource is gone, changed or unrangeable",
        arguments: [
            ServiceError.cancelled, .notFound(FailureResponse(status: 404)),
            .clientError(FailureResponse(status: 412)), .clientError(FailureResponse(status: 416)),
        ])
    func dropsBytes(after error: ServiceError) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("movie.bin")
        try halfWritten(target).abandon(after: error)

        #expect(folder.names.isEmpty)
    }

    @Test("a weak ETag is no validator for If-Range, and without any validator nothing is resumed")
    func weakTagsAreNotResumed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("movie.bin")
        let file = try DownloadFile(DownloadDestination(target, resumable: true))
        _ = try file.begin(
            status: 200, headers: ["ETag": "W/\"v1\"", "Last-Modified": "Tue, 24 Nov 2026 10:00:00 GMT"],
            declaredLength: 1000)
        _ = try file.write(Data(repeating: 1, count: 500))
        file.abandon(after: .timedOut)

        let next = try DownloadFile(DownloadDestination(target, resumable: true))
        defer { next.abandon(after: .cancelled) }
        #expect(next.resumeOffset == 0)
        #expect(!next.resumeFields.contains { $0.name == "Range" })
    }

    @Test("a 206 that does not continue the bytes on disk fails and drops them")
    func misplacedRangeIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("movie.bin")
        try halfWritten(target).abandon(after: .timedOut)
        let next = try DownloadFile(DownloadDestination(target, resumable: true))

        #expect(throws: ServiceError.self) {
            try next.begin(status: 206, headers: ["Content-Range": "bytes 100-999/1000"], declaredLength: 900)
        }
        #expect(folder.names.isEmpty)
    }

    @Test("a late abandon after the attempt ended touches no file")
    func lateAbandonIsHarmless() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("movie.bin")
        let first = try halfWritten(target)
        first.abandon(after: .timedOut)
        let second = try halfWritten(target, bytes: 2000)

        first.abandon(after: .cancelled)

        #expect(folder.names.contains("movie.bin.depot-partial"))
        second.abandon(after: .cancelled)
    }

    @Test("a retry never repeats a download the disk refused")
    func diskErrorsAreNotRetried() {
        let policy = RetryPolicy()
        #expect(
            !policy.retries(
                after:
                    .transport(code: URLError.Code.cannotWriteToFile.rawValue, description: "full")))
        #expect(
            !policy.retries(after: .transport(code: URLError.Code.cannotMoveFile.rawValue, description: "")))
        #expect(
            policy.retries(
                after:
                    .transport(code: URLError.Code.networkConnectionLost.rawValue, description: "")))
    }
}
