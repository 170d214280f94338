import DepotBackendConformance
import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Transfers over real HTTP: progress against httpbin's `/bytes`, `/stream-bytes`, `/drip`
/// and `/anything`; large downloads, cancelling, resuming and multipart uploads against the
/// fault server's `/blob` and `/upload` (scripts/servers/transfer_routes.py), with the
/// memory they cost measured and printed.
@Suite(.liveServers, .serialized) struct TransferLiveTests {
    static let megabyte = 1 << 20

    private func client(_ base: URL?, timeout: TimeInterval = 60) throws -> PhotoFiles {
        PhotoFiles(backend: URLSessionBackend(baseURL: try #require(base), timeout: timeout))
    }

    // MARK: - Progress (httpbin)

    // httpbin serves at most 100 KiB from /bytes and /stream-bytes.
    @Test("httpbin /bytes/N: the file has N bytes and progress climbs to N of N")
    func bytesProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let log = ProgressLog()

        let file = try await client(LiveServer.httpbin).download(
            ["bytes", "100000"], to: folder.file("bytes.bin"), progress: log.handler
        ).value

        #expect(FileSize.of(file) == 100_000)
        log.expectMonotonic(.download, endingAt: 100_000, total: 100_000)
        #expect(folder.names == ["bytes.bin"])
    }

    @Test("httpbin /stream-bytes/N (chunked, no length): progress climbs to N with the total unknown")
    func streamBytesProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let log = ProgressLog()

        let file = try await client(LiveServer.httpbin).download(
            ["stream-bytes", "100000"], query: ["chunk_size": "8192"], to: folder.file("stream.bin"),
            progress: log.handler
        ).value

        #expect(FileSize.of(file) == 100_000)
        log.expectMonotonic(.download, endingAt: 100_000, total: nil)
        #expect(log.values(.download).allSatisfy { $0.totalBytes == nil })
    }

    @Test("httpbin /drip: a slow answer of known length reports its bytes as they come")
    func dripProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let log = ProgressLog()

        _ = try await client(LiveServer.httpbin).download(
            ["drip"], query: ["duration": "1", "numbytes": "5", "delay": "0", "code": "200"],
            to: folder.file("drip.bin"), progress: log.handler
        ).value

        log.expectMonotonic(.download, endingAt: 5, total: 5)
        // One byte every 0.2 s: several reports, not one at the end.
        #expect(Set(log.values(.download).map(\.completedBytes)).count >= 3)
    }

    @Test(
        "httpbin /anything: an upload from a file reports progress up to the file's size, and the server got it all"
    )
    func uploadProgress() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let source = try folder.file("upload.bin", bytes: 2 * Self.megabyte)
        let log = ProgressLog()

        let echo: HTTPBinEcho = try await client(LiveServer.httpbin).request(
            .put, ["anything"], body: .file(source), progress: log.handler
        ).value

        let size = Int64(2 * Self.megabyte)
        log.expectMonotonic(.upload, endingAt: size, total: size)
        #expect(echo.method == "PUT")
        #expect(echo.headers["Content-Length"] == "\(size)")
        #expect(echo.headers["Content-Type"] == "application/octet-stream")
    }

    @Test("a 404 on a download is .notFound and leaves no file: httpbin /status/404 and an HTML error page")
    func notFoundLeavesNoFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }

        let httpbin = try client(LiveServer.httpbin)
        let fault = try client(LiveServer.fault)

        let fromHTTPBin = await httpbin.download(["status", "404"], to: folder.file("a.bin")).result
        let htmlPage = await fault.download(["missing-file"], to: folder.file("b.bin")).result

        for result in [fromHTTPBin, htmlPage] {
            guard case .failure(.notFound) = result else {
                Issue.record("expected .notFound, got \(result)")
                continue
            }
        }
        #expect(folder.names.isEmpty)
    }

    // MARK: - Large downloads (fault server)

    /// Observed (progress, so every slice passes through Depot's delegate) and not (the
    /// platform's download task writes the file). Unobserved, memory stays under 50 MB. Observed,
    /// FoundationNetworking hands slices to the delegate queue with no backpressure, so slices
    /// the disk has not taken yet wait in memory (12 to 80 MB seen for 200 MB on a busy 2-core
    /// machine): the bound there is that the body is never held whole.
    @Test(
        "200 MB to disk: the file's digest is the server's; memory grows by less than 50 MB (observed: less than the file)",
        arguments: [false, true])
    func largeDownloadInBoundedMemory(observed: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = 200 * Self.megabyte
        let files = try client(LiveServer.fault, timeout: 120)
        let expected = try await files.request(
            .get, ["blob-digest"], query: ["bytes": "\(bytes)"], as: Digest.self
        ).value
        let log = ProgressLog()

        let (file, growth) = try await PeakMemory.growth {
            try await files.download(
                ["blob"], query: ["bytes": "\(bytes)"], to: folder.file("blob.bin"),
                progress: observed ? log.handler : nil
            ).value
        }

        let how = observed ? "with progress" : "without progress"
        let bound = observed ? bytes : 50 * Self.megabyte
        print(
            "transfer: 200 MB download \(how), peak RSS growth \(growth / Self.megabyte) MB "
                + "(bound \(bound / Self.megabyte) MB)")
        if observed { log.expectMonotonic(.download, endingAt: Int64(bytes), total: Int64(bytes)) }
        #expect(FileSize.of(file) == Int64(bytes))
        #expect(try sha256(of: file) == expected.sha256)
        #expect(growth < bound)
        #expect(folder.names == ["blob.bin"])
    }

    @Test("cancelling part way ends .cancelled and leaves neither the file nor a partial one")
    func cancelPartWay() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = 8 * Self.megabyte
        // Cancelled upon its first bytes, which leaves some 4 s of the transfer: far more than
        // the test takes to react.
        let watch = ProgressWatch { $0.completedBytes > 0 }
        let download = try client(LiveServer.fault).download(
            ["blob"], query: ["bytes": "\(bytes)", "rate": "\(2 * Self.megabyte)"],
            to: folder.file("slow.bin"),
            progress: watch.handler)

        let running = StartedFuture(download)
        #expect(await watch.reached()?.isComplete == false)
        #expect(folder.names.count == 1 && folder.names[0].hasPrefix("slow.bin.depot-partial-"))
        running.cancel()
        let outcome = await running.result()

        guard case .failure(.cancelled)? = outcome else {
            Issue.record("expected .cancelled, got \(String(describing: outcome))")
            return
        }
        #expect(folder.names.isEmpty)
    }

    @Test(
        "a cut download keeps its bytes when resumable; the next one asks for the rest with Range and gets the same file"
    )
    func resumeAfterACut() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes = 10 * Self.megabyte
        let cut = 4 * Self.megabyte
        let files = try client(LiveServer.fault)
        let target = folder.file("movie.bin")

        let first = await files.download(
            ["blob"], query: ["bytes": "\(bytes)", "cut": "\(cut)"], to: target, resumable: true
        ).result
        guard case .failure(.transport) = first else {
            Issue.record("expected a transport failure for the cut, got \(first)")
            return
        }
        #expect(folder.names == ["movie.bin.depot-partial", "movie.bin.depot-partial-validator"])

        let log = ProgressLog()
        let file = try await files.download(
            ["blob"], query: ["bytes": "\(bytes)"], to: target, resumable: true, progress: log.handler
        ).value

        // The second attempt started where the first stopped: the server sent only the rest.
        #expect(log.values(.download).first?.completedBytes == Int64(cut))
        log.expectMonotonic(.download, endingAt: Int64(bytes), total: Int64(bytes))
        let expected = try await files.request(
            .get, ["blob-digest"], query: ["bytes": "\(bytes)"], as: Digest.self
        ).value
        #expect(try sha256(of: file) == expected.sha256)
        #expect(folder.names == ["movie.bin"])
    }

    @Test("resuming when the server ignores ranges, or the file changed, starts over with the whole answer")
    func resumeThatCannotContinue() async throws {
        let bytes = 3 * Self.megabyte
        let cases: [(name: String, first: Query, second: Query)] = [
            ("no ranges", ["noranges": "1", "cut": "1000000"], ["noranges": "1"]),
            ("changed", ["etag": "v1", "cut": "1000000"], ["etag": "v2"]),
        ]
        let files = try client(LiveServer.fault)
        for (name, first, second) in cases {
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let target = folder.file("changing.bin")
            let cutQuery = first.items.reduce(Query().adding("bytes", bytes)) {
                $0.adding($1.name, $1.value ?? "")
            }
            let fullQuery = second.items.reduce(Query().adding("bytes", bytes)) {
                $0.adding($1.name, $1.value ?? "")
            }

            _ = await files.download(["blob"], query: cutQuery, to: target, resumable: true).result
            #expect(folder.names.contains("changing.bin.depot-partial"), "\(name)")
            let log = ProgressLog()
            let file = try await files.download(
                ["blob"], query: fullQuery, to: target, resumable: true, progress: log.handler
            ).value

            #expect(log.values(.download).first?.completedBytes == 0, "\(name)")
            let expected = try await files.request(
                .get, ["blob-digest"], query: ["bytes": "\(bytes)"], as: Digest.self
            )
            .value
            #expect(try sha256(of: file) == expected.sha256, "\(name)")
            #expect(folder.names == ["changing.bin"], "\(name)")
        }
    }

    @Test("a download with the caller's own Range writes the 206's bytes: the first kilobyte of the blob")
    func callersOwnRange() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let files = try client(LiveServer.fault)
        let whole = try await files.download(["blob"], query: ["bytes": "5000"], to: folder.file("whole.bin"))
            .value

        let part = try await files.download(
            ["blob"], query: ["bytes": "5000"], headers: ["Range": "bytes=0-999"], to: folder.file("part.bin")
        ).value

        #expect(try Data(contentsOf: part) == (try Data(contentsOf: whole)).prefix(1000))
    }

    @Test("a 304 to a conditional download (httpbin /etag) leaves the file as it was, and returns it")
    func notModifiedOverTheNetwork() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("tagged.json")
        try Data("kept".utf8).write(to: target)

        let file = try await client(LiveServer.httpbin).download(
            ["etag", "v1"], headers: ["If-None-Match": "\"v1\""], to: target
        ).value

        #expect(file == target)
        #expect(try Data(contentsOf: target) == Data("kept".utf8))
        #expect(folder.names == ["tagged.json"])
    }

    @Test("a Basic challenge on a download is .unauthorized, observed or not", arguments: [false, true])
    func challengedDownload(observed: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let progress = observed ? ProgressHandler { _ in } : nil

        let result = await (try client(LiveServer.httpbin)).download(
            ["basic-auth", "user", "secret"], to: folder.file("private.bin"), progress: progress
        ).result

        guard case .failure(.unauthorized) = result else {
            Issue.record("expected .unauthorized, got \(result)")
            return
        }
        #expect(folder.names.isEmpty)
    }

    @Test("an error page larger than maximumResponseBytes on an observed download is still .notFound")
    func errorPageOverTheLimit() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.fault), maximumResponseBytes: 8)

        let result = await PhotoFiles(backend: backend).download(
            ["missing-file"], to: folder.file("gone.bin"), progress: ProgressHandler { _ in }
        ).result

        guard case .failure(.notFound) = result else {
            Issue.record("expected .notFound, got \(result)")
            return
        }
        #expect(folder.names.isEmpty)
    }

    @Test("a cut download that is not resumable leaves nothing behind")
    func cutWithoutResume() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }

        let fault = try client(LiveServer.fault)

        let result = await fault.download(
            ["blob"], query: ["bytes": "2000000", "cut": "500000"], to: folder.file("gone.bin")
        ).result

        guard case .failure(.transport) = result else {
            Issue.record("expected a transport failure, got \(result)")
            return
        }
        #expect(folder.names.isEmpty)
    }

    // MARK: - Uploads (fault server)

    @Test(
        "a multipart upload of two files totalling 200 MB: the server sees both parts whole, memory grows by less than 50 MB"
    )
    func largeMultipartUpload() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let video = try largeFile(folder.file("video.mp4"), megabytes: 150, seed: 3)
        let photo = try largeFile(folder.file("photo.jpg"), megabytes: 50, seed: 5)
        var form = MultipartForm()
        form.append("title", "Holiday")
        form.append("video", fileAt: video, contentType: "video/mp4")
        form.append("photo", fileAt: photo, filename: "beach.jpg", contentType: "image/jpeg")
        let log = ProgressLog()
        let files = try client(LiveServer.fault, timeout: 120)

        let (received, growth) = try await PeakMemory.growth {
            try await files.request(
                .post, ["upload"], body: .multipart(form), progress: log.handler, as: Upload.self
            )
            .value
        }

        print("transfer: 200 MB multipart upload, peak RSS growth \(growth / Self.megabyte) MB (bound 50 MB)")
        #expect(received.parts.map(\.name) == ["title", "video", "photo"])
        #expect(received.parts.map(\.filename) == [nil, "video.mp4", "beach.jpg"])
        #expect(received.parts[1].bytes == 150 * Self.megabyte)
        #expect(received.parts[1].sha256 == (try sha256(of: video)))
        #expect(received.parts[2].sha256 == (try sha256(of: photo)))
        #expect(received.parts[2].contentType == "image/jpeg")
        #expect(log.values(.upload).last?.completedBytes == Int64(received.bytes))
        #expect(growth < 50 * Self.megabyte)
        #expect(folder.names == ["photo.jpg", "video.mp4"])
    }

    @Test("an upload from a file: the server's digest of the body is the file's")
    func uploadFromFileDigest() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let source = try largeFile(folder.file("raw.bin"), megabytes: 20, seed: 9)

        let received: Upload = try await client(LiveServer.fault).request(
            .put, ["upload"], body: .file(source, contentType: "application/x-depot")
        ).value

        #expect(received.method == "PUT")
        #expect(received.bytes == 20 * Self.megabyte)
        #expect(received.sha256 == (try sha256(of: source)))
        #expect(received.contentType == "application/x-depot")
    }

    @Test("an upload the server refuses keeps the error table: 422 is .clientError with its body")
    func uploadRefused() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let source = try folder.file("raw.bin", bytes: 100_000)

        let fault = try client(LiveServer.fault)

        let result = await fault.send(
            .post, ["upload"], query: ["status": "422"], body: .file(source)
        ).result

        guard case .failure(let error) = result, case .clientError = error else {
            Issue.record("expected .clientError, got \(result)")
            return
        }
        #expect(error.statusCode == 422)
        #expect(error.message == "status 422 requested")
    }

    // MARK: - Support

    /// A file of `megabytes` pseudo-random megabytes, written a megabyte at a time.
    private func largeFile(_ url: URL, megabytes: Int, seed: UInt64) throws -> URL {
        try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for _ in 0..<megabytes {
            var block = [UInt64](repeating: 0, count: Self.megabyte / 8)
            for index in block.indices {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                block[index] = state
            }
            try handle.write(contentsOf: block.withUnsafeBytes { Data($0) })
        }
        return url
    }
}

/// What the fault server's `/upload` saw.
struct Upload: Decodable, Sendable {
    struct Part: Decodable, Sendable {
        let name: String
        let filename: String?
        let contentType: String?
        let bytes: Int
        let sha256: String
    }

    let method: String
    let bytes: Int
    let sha256: String
    let contentType: String?
    let parts: [Part]
}

/// The fault server's `/blob-digest`.
struct Digest: Decodable, Sendable {
    let sha256: String
    let bytes: Int
}

/// What httpbin's `/anything` echoes.
struct HTTPBinEcho: Decodable, Sendable {
    let method: String
    let headers: [String: String]
}

/// The SHA-256 of a file, as coreutils' `sha256sum` computes it (Foundation has none on Linux).
func sha256(of file: URL) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum", file.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}

/// The growth of this process's peak resident memory while some work runs (Linux: the
/// high-water mark is reset through `/proc/self/clear_refs` first).
enum PeakMemory {
    static func growth<T>(_ work: () async throws -> T) async throws -> (T, Int) {
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        let before = try field("VmRSS")
        let value = try await work()
        let peak = try field("VmHWM")
        return (value, max(0, peak - before))
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    private static func field(_ name: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(
                separator: " "
            ).first
            if let number, let kilobytes = Int(number) { return kilobytes * 1024 }
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}
