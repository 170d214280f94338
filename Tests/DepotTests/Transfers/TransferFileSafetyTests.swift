import DepotInMemory
import Foundation
import Testing

@_spi(BackendSupport) @testable import Depot

/// The files Depot writes for a transfer are the user's alone and never written or read
/// through a symbolic link; multipart temporaries a killed process left are swept.
@Suite struct TransferFileSafetyTests {
    /// The permission bits of what stands at `url` (a link's own, not its target's).
    static func mode(_ url: URL) -> mode_t? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }

    /// Whether a symbolic link stands at `url`.
    static func isLink(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    /// Runs `body` and returns its error (`nil` when it succeeded).
    static func failure(of body: () throws(ServiceError) -> Void) -> ServiceError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("a download's partial and validator files are created 0600, and the file keeps that mode")
    func partialFilesAreTheUsers() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let target = folder.file("movie.bin")
        let resumable = try DownloadFile(DownloadDestination(target, resumable: true))
        _ = try resumable.begin(status: 200, headers: ["ETag": "\"v1\""], declaredLength: 4)
        _ = try resumable.write(Data([1, 2]))

        #expect(Self.mode(folder.file("movie.bin.depot-partial")) == 0o600)
        #expect(Self.mode(folder.file("movie.bin.depot-partial-validator")) == 0o600)
        _ = try resumable.write(Data([3, 4]))
        #expect(Self.mode(try resumable.finish()) == 0o600)

        let plain = try DownloadFile(DownloadDestination(folder.file("poster.png")))
        defer { plain.abandon(after: .cancelled) }
        _ = try plain.begin(status: 200, headers: [:], declaredLength: nil)
        let partial = try #require(folder.names.first { $0.hasPrefix("poster.png.depot-partial-") })
        #expect(Self.mode(folder.file(partial)) == 0o600)
    }

    @Test(
        "a symbolic link at a resumable partial path is not followed: .invalidRequest, its target unchanged")
    func linkedPartialIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let victim = try folder.file("victim.txt", bytes: 7)
        let before = try Data(contentsOf: victim)
        let target = folder.file("movie.bin")
        try Data("\"v1\"".utf8).write(to: folder.file("movie.bin.depot-partial-validator"))
        try FileManager.default.createSymbolicLink(
            at: folder.file("movie.bin.depot-partial"), withDestinationURL: victim)

        let error = Self.failure { () throws(ServiceError) in
            let file = try DownloadFile(DownloadDestination(target, resumable: true))
            defer { file.abandon(after: .timedOut) }
            _ = try file.begin(
                status: 206, headers: ["Content-Range": "bytes 7-9/10", "ETag": "\"v1\""], declaredLength: 3)
            _ = try file.write(Data("abc".utf8))
            _ = try file.finish()
        }

        guard case .invalidRequest(let reason)? = error else {
            Issue.record("expected .invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("movie.bin.depot-partial"))
        #expect(try Data(contentsOf: victim) == before)
        #expect(Self.isLink(folder.file("movie.bin.depot-partial")))
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test("a link planted at the partial path after the attempt was prepared is refused when it begins")
    func linkPlantedBeforeBeginIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let victim = try folder.file("victim.txt", bytes: 700)
        let before = try Data(contentsOf: victim)
        let target = folder.file("movie.bin")
        let first = try DownloadFile(DownloadDestination(target, resumable: true))
        _ = try first.begin(status: 200, headers: ["ETag": "\"v1\""], declaredLength: 1000)
        _ = try first.write(Data(repeating: 1, count: 500))
        first.abandon(after: .timedOut)
        let next = try DownloadFile(DownloadDestination(target, resumable: true))
        defer { next.abandon(after: .cancelled) }
        #expect(next.resumeOffset == 500)
        let partial = folder.file("movie.bin.depot-partial")
        try FileManager.default.removeItem(at: partial)
        try FileManager.default.createSymbolicLink(at: partial, withDestinationURL: victim)

        let error = Self.failure { () throws(ServiceError) in
            _ = try next.begin(
                status: 206, headers: ["Content-Range": "bytes 500-999/1000"], declaredLength: 500)
            _ = try next.write(Data(repeating: 2, count: 500))
        }

        guard case .invalidRequest(let reason)? = error else {
            Issue.record("expected .invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("symbolic link"))
        #expect(try Data(contentsOf: victim) == before)
        #expect(Self.isLink(partial))
    }

    @Test("a validator file that is a link is never read into If-Range")
    func linkedValidatorIsNotRead() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let secret = folder.file("token.txt")
        try Data("\"token-123\"".utf8).write(to: secret)
        let target = folder.file("movie.bin")
        try Data(repeating: 1, count: 500).write(to: folder.file("movie.bin.depot-partial"))
        try FileManager.default.createSymbolicLink(
            at: folder.file("movie.bin.depot-partial-validator"), withDestinationURL: secret)

        var fields: [HTTPHeaders.Field] = []
        let error = Self.failure { () throws(ServiceError) in
            let file = try DownloadFile(DownloadDestination(target, resumable: true))
            defer { file.abandon(after: .timedOut) }
            fields = file.resumeFields
        }

        #expect(!fields.contains { $0.value.contains("token-123") })
        #expect(error?.caseName == "invalidRequest")
        #expect(try Data(contentsOf: secret) == Data("\"token-123\"".utf8))
    }

    @Test("a resumable download through InMemoryBackend whose partial path is a link fails .invalidRequest")
    func backendRefusesALinkedPartial() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let backend = try InMemoryTransferTests.photoBackend()
        let victim = try folder.file("victim.txt", bytes: 100)
        let before = try Data(contentsOf: victim)
        try Data("\"v1\"".utf8).write(to: folder.file("photos.json.depot-partial-validator"))
        try FileManager.default.createSymbolicLink(
            at: folder.file("photos.json.depot-partial"), withDestinationURL: victim)

        let result = await PhotoFiles(backend: backend).download(
            ["photos"], to: folder.file("photos.json"), resumable: true
        ).result

        #expect(result.failure?.caseName == "invalidRequest")
        #expect(try Data(contentsOf: victim) == before)
        #expect(backend.requests.isEmpty)
    }

    @Test("a multipart body file is 0600, in a 0700 folder of the user's, and is removed when the call ends")
    func multipartTemporaryIsPrivate() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = InMemoryBackend()
        server.route(.post, "photos") { _ in .json(["ok": true], status: 201) }
        let probe = BodyFileProbe(server)
        var form = MultipartForm()
        form.append("photo", fileAt: try folder.file("beach.jpg", bytes: 1000), contentType: "image/jpeg")

        _ = try await PhotoFiles(backend: probe).send(.post, ["photos"], body: .multipart(form)).value

        let seen = try #require(probe.seen.first)
        #expect(seen.mode == 0o600)
        #expect(seen.folderMode == 0o700)
        #expect(seen.file.deletingLastPathComponent().lastPathComponent == "depot-multipart-\(getuid())")
        #expect(seen.file.lastPathComponent.hasPrefix("form-\(getpid())-"))
        #expect(!FileManager.default.fileExists(atPath: seen.file.path))
    }

    @Test(
        "the first multipart temporary of a process sweeps those of processes gone and of an earlier process with its pid"
    )
    func staleMultipartTemporariesAreSwept() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let temporaries = MultipartTemporaries(folder: folder.url)
        // No process has the largest pid: its owner is gone.
        let gone = try folder.file("form-\(Int32.max)-gone", bytes: 10)
        let earlier = try folder.file("form-\(getpid())-earlier", bytes: 10)
        let live = try folder.file("form-\(getppid())-live", bytes: 10)
        let unrelated = try folder.file("notes.txt", bytes: 10)
        let victim = try folder.file("victim.txt", bytes: 10)
        let link = folder.file("form-\(Int32.max)-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        _ = chmod(folder.url.path, 0o755)

        let file = try temporaries.newFile()

        #expect(!FileManager.default.fileExists(atPath: gone.path))
        #expect(!FileManager.default.fileExists(atPath: earlier.path))
        #expect(FileManager.default.fileExists(atPath: live.path))
        #expect(FileManager.default.fileExists(atPath: unrelated.path))
        #expect(Self.isLink(link) && FileManager.default.fileExists(atPath: victim.path))
        #expect(file.deletingLastPathComponent().path == folder.url.path)
        #expect(file.lastPathComponent.hasPrefix("form-\(getpid())-"))
        #expect(Self.mode(folder.url) == 0o700)

        // Later files of this process are in use: never swept.
        let inUse = try folder.file("form-\(getpid())-in-use", bytes: 10)
        _ = try temporaries.newFile()
        #expect(FileManager.default.fileExists(atPath: inUse.path))
    }

    @Test("a multipart folder that is a link, not a folder of the user's, is refused")
    func linkedMultipartFolderIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let elsewhere = folder.file("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let link = folder.file("depot-multipart")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)

        let error = Self.failure { () throws(ServiceError) in
            _ = try MultipartTemporaries(folder: link).newFile()
        }

        #expect(error?.caseName == "invalidRequest")
    }
}

/// Forwards requests to another backend, noting each body file's path and mode, and its
/// folder's mode, as the request is sent.
final class BodyFileProbe: Backend {
    struct Seen: Sendable {
        var file: URL
        var mode: mode_t?
        var folderMode: mode_t?
    }

    private let inner: any Backend
    private let log = Locked<[Seen]>([])

    init(_ inner: any Backend) {
        self.inner = inner
    }

    /// What was seen, in order.
    var seen: [Seen] {
        log.withLock { $0 }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        if let file = request.bodyFile {
            let seen = Seen(
                file: file, mode: TransferFileSafetyTests.mode(file),
                folderMode: TransferFileSafetyTests.mode(file.deletingLastPathComponent()))
            log.withLock { $0.append(seen) }
        }
        return inner.send(request)
    }
}
