import Foundation

/// The file of one attempt at a download: the one place that decides where a
/// download's bytes go, when an earlier attempt's bytes may be resumed, and when the
/// file is moved into place. Every backend writes downloads through it, so they all
/// keep and remove partial files the same way (see ``DownloadDestination``).
///
/// A backend creates it when the attempt starts (which claims the destination, so two
/// downloads in this process never write the same file), adds ``resumeFields`` to the
/// request, calls ``begin(status:headers:declaredLength:)`` when a 2xx answer's head
/// arrives, ``write(_:)`` for each slice of its body, then exactly one of ``finish()``
/// and ``abandon(after:discarding:)``. Those calls come one at a time (a task's serial delegate
/// queue, or one thread), which the lock only makes safe to share.
final class DownloadFile: Sendable {
    /// The destination, as the request gave it.
    let destination: DownloadDestination
    /// The bytes of an earlier attempt to resume from (0 for none).
    let resumeOffset: Int64
    /// The earlier attempt's validator, sent as `If-Range`.
    private let resumeValidator: String?
    private let partial: URL
    private let validatorFile: URL
    private let claim: String
    private let state = Locked<State>(State())

    private struct State {
        var handle: FileHandle?
        /// The bytes in the partial file, resumed ones included.
        var written: Int64 = 0
        /// The whole answer's length, when the server declared it.
        var expected: Int64?
        /// Whether the answer is stored as the server encoded it (no `Content-Encoding`),
        /// so that its declared length can be checked.
        var checksLength = false
        var released = false
    }

    /// The downloads this process is writing now, by destination path.
    private static let inFlight = Locked<Set<String>>([])

    /// Claims `destination` for one attempt and reads what an earlier attempt left.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when the destination is not a
    ///   `file:` URL, its folder cannot be created, or another download is writing it.
    init(_ destination: DownloadDestination) throws(ServiceError) {
        let file = destination.file
        guard file.isFileURL, !file.lastPathComponent.isEmpty, file.lastPathComponent != "/" else {
            throw .invalidRequest(
                "the download destination \(file.absoluteString.prefix(200)) is not a file URL")
        }
        let folder = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .invalidRequest(
                "cannot create the folder \(folder.path) for a download: \(error.localizedDescription)")
        }
        let claim = file.standardizedFileURL.path
        let claimed = Self.inFlight.withLock { $0.insert(claim).inserted }
        guard claimed else {
            throw .invalidRequest("a download to \(file.path) is already under way in this process")
        }
        self.destination = destination
        self.claim = claim
        partial = folder.appendingPathComponent(file.lastPathComponent + ".depot-partial")
        validatorFile = folder.appendingPathComponent(file.lastPathComponent + ".depot-partial-validator")
        if destination.resumable, let validator = Self.readValidator(at: validatorFile),
            let size = FileSize.of(partial), size > 0
        {
            resumeOffset = size
            resumeValidator = validator
        } else {
            resumeOffset = 0
            resumeValidator = nil
        }
    }

    /// `Range` and `If-Range` for the rest of an earlier attempt, and `Accept-Encoding:
    /// identity` for a resumable download (ranges address the stored bytes only when
    /// they are not compressed); empty otherwise.
    var resumeFields: [HTTPHeaders.Field] {
        var fields: [HTTPHeaders.Field] = []
        if destination.resumable { fields.append(.init(name: "Accept-Encoding", value: "identity")) }
        if resumeOffset > 0, let resumeValidator {
            fields.append(.init(name: "Range", value: "bytes=\(resumeOffset)-"))
            fields.append(.init(name: "If-Range", value: resumeValidator))
        }
        return fields
    }

    /// Starts writing a 2xx answer: a `206` to a resume continues the earlier attempt's
    /// bytes (when its `Content-Range` starts where they end), anything else starts the
    /// file over.
    /// Returns the progress so far: the bytes already on disk, of the whole answer.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` when a `206` does not
    ///   continue the file, or the partial file cannot be written.
    func begin(status: Int, headers: HTTPHeaders, declaredLength: Int64?) throws(ServiceError)
        -> TransferProgress
    {
        var offset: Int64 = 0
        var total = declaredLength.flatMap { $0 >= 0 ? $0 : nil }
        // A `206` that answers the caller's own `Range` (nothing was resumed) is the body to
        // write; one that answers a resume must continue the bytes on disk.
        if status == 206, resumeOffset > 0 {
            guard let range = ContentRange(headers["Content-Range"]), range.first == resumeOffset else {
                abandon(after: nil, discarding: true)
                throw .transport(
                    code: URLError.Code.badServerResponse.rawValue,
                    description:
                        "The server answered a download with a range (\(headers["Content-Range"] ?? "no Content-Range")) that does not continue the \(resumeOffset) bytes on disk."
                )
            }
            offset = resumeOffset
            total = range.total ?? total.map { $0 + offset }
        }
        let encoding = headers["Content-Encoding"]?.trimmingCharacters(in: .whitespaces).lowercased()
        let handle: FileHandle
        do {
            if offset == 0 {
                guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown)
                }
                handle = try FileHandle(forWritingTo: partial)
            } else {
                handle = try FileHandle(forWritingTo: partial)
                try handle.truncate(atOffset: UInt64(offset))
                try handle.seekToEnd()
            }
        } catch {
            abandon(after: nil, discarding: true)
            throw Self.failure(.cannotCreateFile, "cannot write the partial download \(partial.path)", error)
        }
        if destination.resumable, offset == 0 {
            // Kept beside the bytes, so that a later attempt can ask for the rest of the same answer.
            if let validator = Self.validator(in: headers) {
                try? Data(validator.utf8).write(to: validatorFile)
            } else {
                try? FileManager.default.removeItem(at: validatorFile)
            }
        }
        state.withLock { state in
            state.handle = handle
            state.written = offset
            state.expected = total
            state.checksLength = encoding == nil || encoding == "identity"
        }
        return TransferProgress(direction: .download, completedBytes: offset, totalBytes: total)
    }

    /// Appends one slice of the answer's body; returns the bytes on disk so far.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` when the disk refuses it.
    func write(_ data: Data) throws(ServiceError) -> Int64 {
        let outcome: Result<Int64, any Error> = state.withLock { state in
            guard let handle = state.handle else { return .success(state.written) }
            do {
                try handle.write(contentsOf: data)
            } catch {
                return .failure(error)
            }
            state.written += Int64(data.count)
            return .success(state.written)
        }
        switch outcome {
        case .success(let written): return written
        case .failure(let error):
            throw Self.failure(.cannotWriteToFile, "cannot write the partial download \(partial.path)", error)
        }
    }

    /// The whole answer's length, when known.
    var expectedLength: Int64? {
        state.withLock { $0.expected }
    }

    /// Moves the complete file into place (replacing what was there) and returns it.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` with
    ///   `URLError.Code.networkConnectionLost` when fewer bytes arrived than the answer
    ///   declared (the partial file is kept for a resumable download), or when the file
    ///   cannot be moved.
    func finish() throws(ServiceError) -> URL {
        let (written, expected, checksLength) = state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
            return (state.written, state.expected, state.checksLength)
        }
        if checksLength, let expected, written != expected {
            let error = ServiceError.transport(
                code: URLError.Code.networkConnectionLost.rawValue,
                description: "The download ended after \(written) of its \(expected) bytes.")
            abandon(after: error)
            throw error
        }
        if rename(partial.path, destination.file.path) != 0 {
            let reason = String(cString: strerror(errno))
            abandon(after: nil, discarding: true)
            throw .transport(
                code: URLError.Code.cannotMoveFile.rawValue,
                description: "cannot move the download into place at \(destination.file.path): \(reason)")
        }
        try? FileManager.default.removeItem(at: validatorFile)
        release()
        return destination.file
    }

    /// Moves `complete`, a whole answer the platform already wrote to a file of its own (a
    /// download task's), into place and returns the destination; copied when it lies on
    /// another volume.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` when it cannot be moved.
    func adopt(_ complete: URL) throws(ServiceError) -> URL {
        state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
        }
        var moved = rename(complete.path, destination.file.path) == 0
        var reason = moved ? "" : String(cString: strerror(errno))
        if !moved, errno == EXDEV {
            // Another volume: copied beside the destination, then renamed into place.
            try? FileManager.default.removeItem(at: partial)
            do {
                try FileManager.default.copyItem(at: complete, to: partial)
                moved = rename(partial.path, destination.file.path) == 0
                if !moved { reason = String(cString: strerror(errno)) }
            } catch {
                reason = error.localizedDescription
            }
        }
        guard moved else {
            abandon(after: nil, discarding: true)
            throw .transport(
                code: URLError.Code.cannotMoveFile.rawValue,
                description: "cannot move the download into place at \(destination.file.path): \(reason)")
        }
        try? FileManager.default.removeItem(at: validatorFile)
        release()
        return destination.file
    }

    /// Ends an attempt that did not complete: closes the partial file and removes it,
    /// unless the download is resumable and `error` is a cut that a later attempt can
    /// continue (the connection lost or timed out, a 5xx or 429): then its bytes and
    /// validator stay. Without an error (an answer with no body to write, such as a
    /// `304`) what is on disk stays as it was; `discarding` (a file error, a bad range)
    /// always removes it.
    func abandon(after error: ServiceError?, discarding: Bool = false) {
        let keep = !discarding && (error.map { destination.resumable && Self.isCut($0) } ?? true)
        let released = state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
            defer { state.released = true }
            return state.released
        }
        if !keep || Self.readValidator(at: validatorFile) == nil {
            try? FileManager.default.removeItem(at: partial)
            try? FileManager.default.removeItem(at: validatorFile)
        }
        if !released { Self.inFlight.withLock { _ = $0.remove(claim) } }
    }

    private func release() {
        let released = state.withLock { state in
            defer { state.released = true }
            return state.released
        }
        if !released { Self.inFlight.withLock { _ = $0.remove(claim) } }
    }

    /// Whether `error` ends a transfer that may be resumed later.
    private static func isCut(_ error: ServiceError) -> Bool {
        switch error {
        case .transport, .timedOut, .cannotConnect, .noConnection, .serverError, .serviceUnavailable: true
        default: false
        }
    }

    /// The validator `If-Range` may carry: a strong `ETag` (RFC 9110 §13.1.5 forbids a
    /// weak one), else `Last-Modified`.
    private static func validator(in headers: HTTPHeaders) -> String? {
        if let tag = headers["ETag"]?.trimmingCharacters(in: .whitespaces), tag.hasPrefix("\""),
            tag.count >= 2
        {
            return tag
        }
        return headers["Last-Modified"]?.trimmingCharacters(in: .whitespaces).nilIfEmpty
    }

    private static func readValidator(at url: URL) -> String? {
        guard let data = try? Data(contentsOf: url), data.count <= 1024 else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // Only what may stand in a header field: a file edited by hand cannot smuggle a line.
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
            return nil
        }
        return text
    }

    private static func failure(_ code: URLError.Code, _ what: String, _ error: any Error) -> ServiceError {
        .transport(code: code.rawValue, description: "\(what): \(error.localizedDescription)")
    }
}

/// An RFC 9110 `Content-Range` of a `206`: `bytes first-last/total` (`total` may be `*`).
struct ContentRange: Equatable {
    let first: Int64
    let last: Int64
    let total: Int64?

    init?(_ field: String?) {
        guard let field else { return nil }
        let text = field.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0,
            last >= first
        else { return nil }
        self.first = first
        self.last = last
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(halves[1]), total > last else { return nil }
            self.total = total
        }
    }
}

extension String {
    /// `nil` for the empty string.
    fileprivate var nilIfEmpty: String? {
        isEmpty ? nil : self
    }
}
