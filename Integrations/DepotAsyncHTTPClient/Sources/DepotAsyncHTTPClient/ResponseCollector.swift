import AsyncHTTPClient
@_spi(BackendSupport) import Depot
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Gathers one answer of AsyncHTTPClient: its head, and its body as it streams, within the
/// backend's size limit (a `Content-Length` over it fails at the head, a body that grows
/// past it fails with the slice that does), reporting download progress.
///
/// A download's file is written on ``FileWork``'s thread pool, never on the event loop. Up
/// to ``writeWindow`` bytes may wait for the disk; past that, the future of a slice completes
/// once it is on disk, so the client reads no more of the answer until then (the disk's
/// pace, in bounded memory).
final class ResponseCollector: HTTPClientResponseDelegate {
    typealias Response = Collected

    private let limit: Int?
    private let isHead: Bool
    private let progress: ProgressHandler?
    /// Where a 2xx answer's body goes instead of memory, for a request with a destination.
    private let download: DownloadFile?
    /// Where the download's file work runs.
    private let files: FileWork
    private let state = NIOLockedValueBox(Collected(status: 0, headers: [:], body: Data()))

    /// The most bytes of a download's error page kept for its message (as
    /// `URLSessionBackend` keeps them): a download's body has no size limit, its error
    /// page no "too large".
    static let errorBodyLimit = 1 << 20
    private let head = NIOLockedValueBox<(received: Bool, total: Int64?)>((false, nil))

    /// The bytes of the request's body, when its upload progress is reported.
    private let uploadSize: Int64?
    private let sent = NIOLockedValueBox<Int64>(0)

    /// The most bytes of a download that may wait for the disk while the answer keeps
    /// coming. Within it, the client hands every slice over as it arrives, so the bytes of an
    /// answer cut short all reach the file (the client drops the slices it still holds when
    /// the connection fails) and a disk slower than the network for a moment does not hold
    /// the connection back.
    static let writeWindow = 1 << 20
    /// The bytes handed to the file work and not yet on disk, and the first failure to
    /// write them (after which nothing more is written).
    private let writing = NIOLockedValueBox<(queued: Int, failure: (any Error)?)>((0, nil))

    init(
        limit: Int?, isHead: Bool, progress: ProgressHandler?, uploadSize: Int64?, download: DownloadFile?,
        files: FileWork
    ) {
        self.limit = limit
        self.isHead = isHead
        self.progress = progress
        self.uploadSize = uploadSize
        self.download = download
        self.files = files
    }

    /// Whether the answer's head arrived (so that a closed connection cut its body short).
    var receivedHead: Bool {
        head.withLockedValue { $0.received }
    }

    func didSendRequestPart(task: HTTPClient.Task<Collected>, _ part: IOData) {
        guard let progress, let uploadSize else { return }
        let sent = self.sent.withLockedValue { sent in
            sent += Int64(part.readableBytes)
            return sent
        }
        progress.report(TransferProgress(direction: .upload, completedBytes: sent, totalBytes: uploadSize))
    }

    func didReceiveHead(task: HTTPClient.Task<Collected>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let declared = head.headers.first(name: "Content-Length").flatMap { Int64($0) }
        self.head.withLockedValue { $0 = (true, declared) }
        let status = Int(head.status.code)
        let isRedirect = HTTPRedirectRule.isRedirect(status)
        if let download, (200..<300).contains(status), !isHead {
            // The body goes to the file as it streams, never to memory; the client delivers
            // none of it before the file is ready.
            let headers = Depot.HTTPHeaders(head.headers.map { .init(name: $0.name, value: $0.value) })
            return files.run(on: task.eventLoop) {
                try download.begin(status: status, headers: headers, declaredLength: declared)
            }
            .map { start in
                self.state.withLockedValue { collected in
                    collected.status = status
                    collected.headers = head.headers
                    collected.wroteFile = true
                }
                self.head.withLockedValue { $0.total = start.totalBytes }
                self.progress?.report(start)
            }
        }
        if download == nil, let limit, !isHead, !isRedirect, let declared, declared > Int64(limit) {
            return task.eventLoop.makeFailedFuture(ResponseTooLarge(limit: limit, declared: declared))
        }
        state.withLockedValue { collected in
            collected.status = Int(head.status.code)
            collected.headers = head.headers
            if let declared, declared > 0, !isHead {
                // Room for the declared body, but never more than 4 MiB on the server's word.
                collected.body.reserveCapacity(Int(min(declared, 4 << 20, Int64(limit ?? Int.max))))
            }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Collected>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if let download, state.withLockedValue({ $0.wroteFile }) {
            let size = buffer.readableBytes
            let (queued, failure) = writing.withLockedValue { writing in
                writing.queued += size
                return (writing.queued, writing.failure)
            }
            if let failure { return task.eventLoop.makeFailedFuture(failure) }
            let written = files.run(on: task.eventLoop) { [writing] () throws -> Int64 in
                defer { writing.withLockedValue { $0.queued -= size } }
                if let failure = writing.withLockedValue({ $0.failure }) { throw failure }
                do {
                    return try download.write(Data(buffer.readableBytesView))
                } catch {
                    writing.withLockedValue { $0.failure = $0.failure ?? error }
                    throw error
                }
            }
            .map { written in
                guard let progress = self.progress else { return }
                let total = self.head.withLockedValue { $0.total }
                progress.report(
                    TransferProgress(direction: .download, completedBytes: written, totalBytes: total))
            }
            return queued <= Self.writeWindow ? task.eventLoop.makeSucceededVoidFuture() : written
        }
        if download != nil {
            // A download's error page: its start is enough for the message.
            state.withLockedValue { collected in
                let room = max(
                    0, min(limit ?? Self.errorBodyLimit, Self.errorBodyLimit) - collected.body.count)
                buffer.withUnsafeReadableBytes { collected.body.append(contentsOf: $0.prefix(room)) }
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }
        let received: Int? = state.withLockedValue { collected in
            if let limit, collected.body.count + buffer.readableBytes > limit { return nil }
            buffer.withUnsafeReadableBytes { collected.body.append(contentsOf: $0) }
            return collected.body.count
        }
        guard let received else {
            return task.eventLoop.makeFailedFuture(ResponseTooLarge(limit: limit ?? 0, declared: nil))
        }
        if let progress {
            let total = head.withLockedValue { $0.total }
            progress.report(
                TransferProgress(direction: .download, completedBytes: Int64(received), totalBytes: total))
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    /// Throws the first failure to write the download's file; call it on ``FileWork``, after
    /// the writes.
    func checkWrites() throws {
        if let failure = writing.withLockedValue({ $0.failure }) { throw failure }
    }

    func didFinishRequest(task: HTTPClient.Task<Collected>) throws -> Collected {
        state.withLockedValue { collected in
            defer { collected.body = Data() }
            return collected
        }
    }
}

/// The failure of a body over the backend's limit, mapped to
/// ``Depot/ServiceError/responseTooLarge(limit:declared:)``.
struct ResponseTooLarge: Error {
    let limit: Int
    let declared: Int64?
}
