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
    private let state = NIOLockedValueBox(Collected(status: 0, headers: [:], body: Data()))
    private let head = NIOLockedValueBox<(received: Bool, total: Int64?)>((false, nil))

    /// The bytes of the request's body, when its upload progress is reported.
    private let uploadSize: Int64?
    private let sent = NIOLockedValueBox<Int64>(0)

    init(limit: Int?, isHead: Bool, progress: ProgressHandler?, uploadSize: Int64?) {
        self.limit = limit
        self.isHead = isHead
        self.progress = progress
        self.uploadSize = uploadSize
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
        let isRedirect = HTTPRedirectRule.isRedirect(Int(head.status.code))
        if let limit, !isHead, !isRedirect, let declared, declared > Int64(limit) {
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
