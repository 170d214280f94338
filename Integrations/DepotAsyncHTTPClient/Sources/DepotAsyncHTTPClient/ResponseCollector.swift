import AsyncHTTPClient
import Depot
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Gathers one answer of AsyncHTTPClient: its head, and its body as it streams, within the
/// backend's size limit (a `Content-Length` over it fails at the head, a body that grows
/// past it fails with the slice that does), reporting download progress.
final class ResponseCollector: HTTPClientResponseDelegate {
    typealias Response = Collected

    private let limit: Int?
    private let isHead: Bool
    private let progress: ProgressHandler?
    /// Where a 2xx answer's body goes instead of memory, for a request with a destination.
    private let download: DownloadFile?
    private let state = NIOLockedValueBox(Collected(status: 0, headers: [:], body: Data()))

    /// The most bytes of a download's error page kept for its message (as
    /// `URLSessionBackend` keeps them): a download's body has no size limit, its error
    /// page no "too large".
    static let errorBodyLimit = 1 << 20
    private let head = NIOLockedValueBox<(received: Bool, total: Int64?)>((false, nil))

    /// The bytes of the request's body, when its upload progress is reported.
    private let uploadSize: Int64?
    private let sent = NIOLockedValueBox<Int64>(0)

    init(limit: Int?, isHead: Bool, progress: ProgressHandler?, uploadSize: Int64?, download: DownloadFile?) {
        self.limit = limit
        self.isHead = isHead
        self.progress = progress
        self.uploadSize = uploadSize
        self.download = download
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
            // The body goes to the file as it streams, never to memory.
            let start: TransferProgress
            do {
                start = try download.begin(
                    status: status,
                    headers: Depot.HTTPHeaders(head.headers.map { .init(name: $0.name, value: $0.value) }),
                    declaredLength: declared)
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
            state.withLockedValue { collected in
                collected.status = status
                collected.headers = head.headers
                collected.wroteFile = true
            }
            self.head.withLockedValue { $0.total = start.totalBytes }
            progress?.report(start)
            return task.eventLoop.makeSucceededVoidFuture()
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
            let written: Int64
            do {
                written = try download.write(Data(buffer.readableBytesView))
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
            if let progress {
                let total = head.withLockedValue { $0.total }
                progress.report(
                    TransferProgress(direction: .download, completedBytes: written, totalBytes: total))
            }
            return task.eventLoop.makeSucceededVoidFuture()
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
