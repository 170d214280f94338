import Foundation

/// The file of one attempt at a download: where its bytes go, whether an earlier attempt's
/// bytes may be resumed, and when the file moves into place. Every backend writes downloads
/// through it, and so should a backend of your own that streams a request's
/// ``BackendRequest/destination``: the article *Writing a Backend* gives the order of its calls.
@_spi(BackendSupport)
public final class DownloadFile: Sendable {
    /// The destination, as the request gave it.
    public let destination: DownloadDestination
    /// The bytes of an earlier attempt to resume from (0 for none).
    public let resumeOffset: Int64
    /// The earlier attempt's validator, sent as `If-Range`.
    private let resumeValidator: String?
    private let partial: URL
    /// Where a resumable download keeps its bytes and validator.
    private let resumablePartial: URL
    private let validatorFile: URL
    /// The destination's path in ``inFlight``, for a resumable download.
    private let claim: String?
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
        /// Whether the disk refused the partial file: its bytes cannot be trusted.
        var broken = false
        var released = false
    }

    /// The resumable downloads this process is writing now, by destination path.
    private static let inFlight = Locked<Set<String>>([])

    /// Prepares one attempt at `destination`: claims it when resumable, and reads what an
    /// earlier attempt left.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when the destination is not a
    ///   `file:` URL or is a folder, its folder cannot be created, another resumable
    ///   download is writing it, or (for a resumable download) a symbolic link or anything
    ///   but a regular file stands at its partial or validator path.
    public init(_ destination: DownloadDestination) throws(ServiceError) {
        try destination.validate()
        let file = destination.file
        let folder = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .invalidRequest(
                "cannot create the folder \(folder.path) for a download: \(error.localizedDescription)")
        }
        let name = file.lastPathComponent
        resumablePartial = folder.appendingPathComponent(name + ".depot-partial")
        validatorFile = folder.appendingPathComponent(name + ".depot-partial-validator")
        if destination.resumable {
            let claim = file.standardizedFileURL.resolvingSymlinksInPath().path
            guard Self.inFlight.withLock({ $0.insert(claim).inserted }) else {
                throw .invalidRequest(
                    "a resumable download to \(file.path) is already under way in this process")
            }
            self.claim = claim
            partial = resumablePartial
        } else {
            claim = nil
            let random = String(UInt32.random(in: .min ... .max), radix: 16)
            partial = folder.appendingPathComponent(name + ".depot-partial-" + random)
        }
        self.destination = destination
        var offset: Int64 = 0
        var validator: String?
        if let claim {
            do throws(ServiceError) {
                let size = try Self.regularFileSize(at: resumablePartial)
                if try Self.regularFileSize(at: validatorFile) != nil, let size, size > 0 {
                    validator = Self.readValidator(at: validatorFile)
                    offset = validator == nil ? 0 : size
                }
            } catch {
                Self.inFlight.withLock { _ = $0.remove(claim) }
                throw error
            }
        }
        resumeOffset = offset
        resumeValidator = validator
    }

    /// The size of the regular file at `url`, `nil` when there is none.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a link or anything else stands there.
    private static func regularFileSize(at url: URL) throws(ServiceError) -> Int64? {
        do {
            return try PrivateFile.size(at: url)
        } catch {
            throw refusal(url, error)
        }
    }

    /// The error for a partial or validator path Depot will not open: named, with the
    /// reason, and what to do.
    private static func refusal(_ url: URL, _ failure: PrivateFile.Failure) -> ServiceError {
        .invalidRequest(
            "the download's own file \(url.path) cannot be used: \(failure.reason); Depot never opens it through a link (remove it to download again)"
        )
    }

    /// `Range` and `If-Range` for the rest of an earlier attempt, and `Accept-Encoding:
    /// identity` for a resumable download (ranges address the stored bytes only when
    /// they are not compressed); empty otherwise. A backend that cannot write the rest
    /// into this file (one whose platform writes downloads itself) sends none of them.
    public var resumeFields: [HTTPHeaders.Field] {
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
    /// file over. Returns the progress so far: the bytes already on disk, of the whole
    /// answer.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` when a `206` does not
    ///   continue the file, or the partial file cannot be written;
    ///   ``ServiceError/invalidRequest(_:)`` when a symbolic link or anything but a regular
    ///   file stands at the partial file's path (it is left as it is).
    public func begin(status: Int, headers: HTTPHeaders, declaredLength: Int64?) throws(ServiceError)
        -> TransferProgress
    {
        var offset: Int64 = 0
        var total = declaredLength.flatMap { $0 >= 0 ? $0 : nil }
        // A `206` that answers the caller's own `Range` (nothing was resumed) is the body to
        // write; one that answers a resume must continue the bytes on disk.
        if status == 206, resumeOffset > 0 {
            guard let range = ContentRange(headers["Content-Range"]), range.first == resumeOffset else {
                abandon(after: nil, discarding: true)
                let field = headers["Content-Range"].map { String($0.prefix(100)) } ?? "no Content-Range"
                throw .transport(
                    code: URLError.Code.badServerResponse.rawValue,
                    description:
                        "The server answered a download with a range (\(field)) that does not continue the \(resumeOffset) bytes on disk."
                )
            }
            offset = resumeOffset
            total = range.total ?? total.map { $0 + offset }
        }
        let encoding = headers["Content-Encoding"]?.trimmingCharacters(in: .whitespaces).lowercased()
        let handle: FileHandle
        do {
            handle = try openPartial(continuingAt: offset)
        } catch let failure as PrivateFile.Failure {
            // What stands at the path is not this attempt's: left as it is.
            release()
            if case .notAFile = failure { throw Self.refusal(partial, failure) }
            throw .transport(
                code: URLError.Code.cannotCreateFile.rawValue,
                description: "cannot create the partial download \(partial.path): \(failure.reason)")
        } catch {
            abandon(after: nil, discarding: true)
            throw Self.failure(.cannotCreateFile, "cannot write the partial download \(partial.path)", error)
        }
        if destination.resumable, offset == 0 {
            // Kept beside the bytes, so that a later attempt can ask for the rest of the same answer.
            Self.writeValidator(Self.validator(in: headers), to: validatorFile)
        }
        state.withLock { state in
            state.handle = handle
            state.written = offset
            state.expected = total
            state.checksLength = encoding == nil || encoding == "identity"
        }
        return TransferProgress(direction: .download, completedBytes: offset, totalBytes: total)
    }

    /// The partial file, open for writing: a new one (what an earlier resumable attempt
    /// left removed first), or the earlier attempt's bytes cut to `offset` to continue them.
    private func openPartial(continuingAt offset: Int64) throws -> FileHandle {
        guard offset > 0 else {
            if claim != nil { try PrivateFile.remove(partial) }
            return try PrivateFile.create(partial)
        }
        let handle = try PrivateFile.openForWriting(partial)
        try handle.truncate(atOffset: UInt64(offset))
        try handle.seekToEnd()
        return handle
    }

    /// Appends one slice of the answer's body; returns the bytes on disk so far.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` when the disk refuses it
    ///   (the partial file is then discarded when the attempt ends).
    public func write(_ data: Data) throws(ServiceError) -> Int64 {
        let outcome: Result<Int64, any Error> = state.withLock { state in
            guard let handle = state.handle else { return .success(state.written) }
            do {
                try handle.write(contentsOf: data)
            } catch {
                state.broken = true
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

    /// Moves the complete file into place (replacing what was there) and returns it.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` with
    ///   `URLError.Code.networkConnectionLost` when fewer bytes arrived than the answer
    ///   declared (the partial file is kept for a resumable download), or when the file
    ///   cannot be moved.
    public func finish() throws(ServiceError) -> URL {
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
        return try moveIntoPlace(partial)
    }

    /// Moves `complete`, a whole answer the platform already wrote to a file of its own (a
    /// download task's), into place and returns the destination; copied when it lies on
    /// another volume.
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` when it cannot be moved.
    public func adopt(_ complete: URL) throws(ServiceError) -> URL {
        try moveIntoPlace(complete)
    }

    /// Renames `file` to the destination (copying it beside the destination first when it
    /// lies on another volume), removes what a resumable attempt left, and releases the
    /// attempt.
    private func moveIntoPlace(_ file: URL) throws(ServiceError) -> URL {
        state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
        }
        var failure: String?
        if rename(file.path, destination.file.path) != 0 {
            let code = errno
            failure = String(cString: strerror(code))
            if code == EXDEV {
                // Another volume: copied beside the destination, then renamed into place.
                do {
                    try PrivateFile.remove(partial)
                    try PrivateFile.copy(file, to: partial)
                    failure =
                        rename(partial.path, destination.file.path) == 0
                        ? nil : String(cString: strerror(errno))
                } catch {
                    failure = error.localizedDescription
                }
            }
        }
        if let failure {
            abandon(after: nil, discarding: true)
            throw .transport(
                code: URLError.Code.cannotMoveFile.rawValue,
                description: "cannot move the download into place at \(destination.file.path): \(failure)")
        }
        // The file is whole: what an earlier resumable attempt kept is of no more use,
        // unless a resumable download of this file is running now.
        let claimedByAnother =
            claim == nil
            && Self.inFlight.withLock {
                $0.contains(destination.file.standardizedFileURL.resolvingSymlinksInPath().path)
            }
        if !claimedByAnother {
            try? PrivateFile.remove(resumablePartial)
            try? PrivateFile.remove(validatorFile)
        }
        release()
        return destination.file
    }

    /// Ends an attempt that did not complete. A resumable download keeps its bytes and
    /// validator for a later attempt unless `error` says they are of no more use (the
    /// caller cancelled; the answer was 404, 410, 412 or 416; the request was invalid);
    /// any other partial file is removed. Without an error (an
    /// answer with no body to write, such as a `304`) what is on disk stays as it was;
    /// `discarding` (a bad range, a file that cannot be written) always removes it. Once
    /// the attempt is released, a later call does nothing.
    public func abandon(after error: ServiceError?, discarding: Bool = false) {
        let (released, broken) = state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
            defer { state.released = true }
            return (state.released, state.broken)
        }
        guard !released else { return }
        if claim == nil {
            try? PrivateFile.remove(partial)
        } else if discarding || broken || !(error.map(Self.keepsPartial(after:)) ?? true) {
            try? PrivateFile.remove(partial)
            try? PrivateFile.remove(validatorFile)
        }
        if let claim { Self.inFlight.withLock { _ = $0.remove(claim) } }
    }

    private func release() {
        let released = state.withLock { state in
            defer { state.released = true }
            return state.released
        }
        if !released, let claim { Self.inFlight.withLock { _ = $0.remove(claim) } }
    }

    /// Whether a resumable download keeps its bytes after `error`: always, but when the
    /// caller cancelled, or the answer says the resource is gone, changed or cannot be
    /// ranged (404, 410, 412, 416), or the request itself was wrong. A `401` that a
    /// refresh will answer, a `5xx`, a timeout or a lost connection leave the bytes valid.
    private static func keepsPartial(after error: ServiceError) -> Bool {
        switch error {
        case .cancelled, .notFound, .invalidRequest, .decoding: return false
        case .clientError(let failure): return ![412, 416].contains(failure.status)
        default: return true
        }
    }

    /// The validator `If-Range` may carry (RFC 9110 §13.1.5): a strong `ETag`; else, when
    /// the answer has no entity tag at all, its `Last-Modified`.
    private static func validator(in headers: HTTPHeaders) -> String? {
        if let tag = headers["ETag"]?.trimmingCharacters(in: .whitespaces) {
            return tag.hasPrefix("\"") && tag.count >= 2 ? tag : nil
        }
        return headers["Last-Modified"]?.trimmingCharacters(in: .whitespaces).nilIfEmpty
    }

    /// Keeps `validator` in a new file at `url` (what was there removed); none when `nil`.
    /// Best effort: without it, the next attempt starts over.
    private static func writeValidator(_ validator: String?, to url: URL) {
        guard (try? PrivateFile.remove(url)) != nil, let validator,
            let handle = try? PrivateFile.create(url)
        else { return }
        try? handle.write(contentsOf: Data(validator.utf8))
        try? handle.close()
    }

    /// The validator an earlier attempt kept at `url`, read never through a link.
    private static func readValidator(at url: URL) -> String? {
        guard let data = PrivateFile.read(url, upTo: 1025), data.count <= 1024 else { return nil }
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
