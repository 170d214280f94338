import Depot
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// File transfers over loopback: a download streamed to a file and an upload streamed from
/// one must cost what the hand-written `URLSession` download and upload tasks cost, and
/// the memory either side needs while 50 MB move is reported as figures.
///
/// Every file is written in a folder of its own under the temporary directory, deleted when
/// the case ends.
enum TransferCases {
    /// The bytes of one transfer: 50 MB.
    static let bytes = 50 * 1024 * 1024

    static let all: [BenchmarkCase] = [download, upload]

    /// `download` of `/blob` into a file vs a completion-handler download task whose
    /// temporary file is moved to a destination.
    static let download = BenchmarkCase(
        name: "transfer.download.50MB", target: 1.05, rounds: 21,
        sample: "1 GET /blob?bytes=\(bytes) into a file, checked for its size, then deleted: download(_:to:) "
            + "on a URLSessionBackend vs URLSession.shared.downloadTask(with:) + FileManager.moveItem",
        requestsPerSample: 1, needsServer: true
    ) { environment in
        guard let baseURL = environment.baseURL else { throw BenchmarkFailure("no --base-url") }
        let scratch = try ScratchFolder("download")
        let client = TransferClient(backend: URLSessionBackend(baseURL: baseURL))
        let url = try blobURL(baseURL)
        let depotFile = scratch.folder.appendingPathComponent("depot.bin")
        let baselineFile = scratch.folder.appendingPathComponent("baseline.bin")
        let depotMemory = PeakMemory()
        let baselineMemory = PeakMemory()
        return Sides(
            depot: {
                try await depotMemory.measure {
                    let file = try await client.download(["blob"], query: ["bytes": bytes], to: depotFile)
                        .value
                    try check(fileSize(file) == bytes, "download(_:to:) wrote \(fileSize(file)) bytes")
                    try FileManager.default.removeItem(at: file)
                }
            },
            baseline: {
                try await baselineMemory.measure {
                    try await downloadByHand(url, to: baselineFile)
                    try check(
                        fileSize(baselineFile) == bytes,
                        "the download task wrote \(fileSize(baselineFile)) bytes")
                    try FileManager.default.removeItem(at: baselineFile)
                }
            },
            finish: {
                scratch.remove()
                return peakFigures("transfer.download.50MB", depot: depotMemory, baseline: baselineMemory)
            })
    }

    /// `send(.post, ["upload"], body: .file(…))` vs a completion-handler upload task from
    /// the same file.
    static let upload = BenchmarkCase(
        name: "transfer.upload.50MB", target: 1.05, rounds: 21,
        sample: "1 POST /upload of a \(bytes)-byte file, the answer's byte count checked: "
            + "send(.post, _, body: .file(_:contentType:)) on a URLSessionBackend vs "
            + "URLSession.shared.uploadTask(with:fromFile:completionHandler:) + JSONDecoder",
        requestsPerSample: 1, needsServer: true
    ) { environment in
        guard let baseURL = environment.baseURL else { throw BenchmarkFailure("no --base-url") }
        let scratch = try ScratchFolder("upload")
        let source = scratch.folder.appendingPathComponent("upload.bin")
        do {
            try writeFile(source, bytes: bytes)
        } catch {
            scratch.remove()
            throw error
        }
        let client = TransferClient(backend: URLSessionBackend(baseURL: baseURL))
        let url = baseURL.appendingPathComponent("upload")
        let depotMemory = PeakMemory()
        let baselineMemory = PeakMemory()
        return Sides(
            depot: {
                try await depotMemory.measure {
                    let response = try await client.send(
                        .post, ["upload"], body: .file(source, contentType: "application/octet-stream")
                    ).value
                    let answer = try JSONDecoder().decode(UploadAnswer.self, from: response.body)
                    try check(answer.bytes == bytes, "the server received \(answer.bytes) of \(bytes) bytes")
                }
            },
            baseline: {
                try await baselineMemory.measure {
                    let answer = try await uploadByHand(source, to: url)
                    try check(answer.bytes == bytes, "the server received \(answer.bytes) of \(bytes) bytes")
                }
            },
            finish: {
                scratch.remove()
                return peakFigures("transfer.upload.50MB", depot: depotMemory, baseline: baselineMemory)
            })
    }

    /// `baseURL/blob?bytes=…`, as Depot builds it from `["blob"]` and the query.
    private static func blobURL(_ baseURL: URL) throws -> URL {
        guard
            var components = URLComponents(
                url: baseURL.appendingPathComponent("blob"), resolvingAgainstBaseURL: false)
        else { throw BenchmarkFailure("cannot build the /blob URL on \(baseURL)") }
        components.queryItems = [URLQueryItem(name: "bytes", value: String(bytes))]
        guard let url = components.url else {
            throw BenchmarkFailure("cannot build the /blob URL on \(baseURL)")
        }
        return url
    }

    /// What a user writes without Depot to download `url` into `file`: a completion-handler
    /// download task, a status check, and moving the task's temporary file into place
    /// (inside the handler: the file is deleted when it returns).
    private static func downloadByHand(_ url: URL, to file: URL) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            URLSession.shared.downloadTask(with: url) { location, response, error in
                if let error {
                    continuation.resume(throwing: error)
                    return
                }
                guard let location, (response as? HTTPURLResponse)?.statusCode == 200 else {
                    continuation.resume(throwing: BenchmarkFailure("\(url) did not answer 200"))
                    return
                }
                do {
                    try FileManager.default.moveItem(at: location, to: file)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            .resume()
        }
    }

    /// What a user writes without Depot to upload `file`: a `POST` upload task from the
    /// file, a status check and `JSONDecoder`. It asks for JSON, as Depot does.
    private static func uploadByHand(_ file: URL, to url: URL) async throws -> UploadAnswer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.uploadTask(with: request, fromFile: file) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                    return
                }
                guard let data, (response as? HTTPURLResponse)?.statusCode == 200 else {
                    continuation.resume(throwing: BenchmarkFailure("\(url) did not answer 200"))
                    return
                }
                do {
                    continuation.resume(returning: try JSONDecoder().decode(UploadAnswer.self, from: data))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            .resume()
        }
    }

    /// Writes `bytes` pseudo-random bytes (xorshift) to `file`, 1 MiB at a time.
    private static func writeFile(_ file: URL, bytes: Int) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BenchmarkFailure("cannot create \(file.path)")
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var left = bytes
        while left > 0 {
            let count = min(left, 1 << 20)
            var block = [UInt8](repeating: 0, count: count)
            for index in 0..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                block[index] = UInt8(truncatingIfNeeded: state)
            }
            try handle.write(contentsOf: Data(block))
            left -= count
        }
    }

    /// The size of the file at `url`, or -1 when it cannot be read.
    private static func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? -1
    }

    /// The peak-memory figures of a case's two sides (none where `/proc` cannot tell).
    private static func peakFigures(_ name: String, depot: PeakMemory, baseline: PeakMemory) -> [Figure] {
        [("depot", depot), ("baseline", baseline)].compactMap { side, memory in
            guard let peak = memory.largest else { return nil }
            return Figure(
                name: "\(name).peakRSS.\(side)", value: peak / 1e6, unit: "MB",
                detail:
                    "largest peak growth of the resident set in one \(side == "depot" ? "Depot" : "baseline") "
                    + "sample (VmHWM after clear_refs, minus VmRSS before) over \(memory.count) samples, "
                    + "warm-up included; median " + String(format: "%.3g MB", memory.median / 1e6))
        }
    }
}

/// The answer of `/upload`: the bytes the server read (and their digest, not checked here).
private struct UploadAnswer: Decodable {
    let bytes: Int
}

/// A repository-less ``BackendClient``: its `send` and `download` helpers on a backend.
private struct TransferClient: BackendClient {
    let backend: any Backend
}

/// A fresh folder under the temporary directory.
private struct ScratchFolder: Sendable {
    let folder: URL

    init(_ label: String) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "depot-benchmarks-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Deletes the folder and what is in it.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// How much a sample grows the process's resident set at its peak (Linux: the high-water
/// mark `VmHWM` is reset by writing `5` to `/proc/self/clear_refs` before the sample and
/// read after it, minus `VmRSS` just before). Where `/proc` is missing, nothing is recorded.
final class PeakMemory: @unchecked Sendable {
    // Guarded by `lock`.
    private var growths: [Double] = []
    private let lock = NSLock()

    /// Runs `sample` and records its peak growth in bytes.
    func measure(_ sample: () async throws -> Void) async throws {
        let before = Self.resetPeak() ? Self.status("VmRSS") : nil
        try await sample()
        guard let before, let peak = Self.status("VmHWM") else { return }
        lock.withLock { growths.append(max(0, peak - before)) }
    }

    var count: Int { lock.withLock { growths.count } }
    /// The largest growth, in bytes; `nil` when none was measured.
    var largest: Double? { lock.withLock { growths.max() } }
    var median: Double { lock.withLock { Runner.median(growths) } }

    /// Resets the process's `VmHWM` to its current resident set; whether it could.
    private static func resetPeak() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The `field` of `/proc/self/status` (given in kB there), in bytes.
    private static func status(_ field: String) -> Double? {
        // Read with read(2): /proc files report a size of 0, which Foundation's readers trust.
        let descriptor = open("/proc/self/status", O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
                .first
            return number.flatMap { Double($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
