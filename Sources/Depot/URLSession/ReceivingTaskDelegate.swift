import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of a ``URLSessionBackend`` task that must see its bodies as they move (see
/// ``URLSessionTransport/needsDelegate(_:limit:)``): a ``TaskDelegate`` that also takes the
/// body as it arrives.
/// - A body past the size limit (its `Content-Length`, except a `HEAD` answer's, or the chunk
///   that takes it past) cancels the task as ``RequestEnding/tooLarge(limit:declared:)``.
/// - A 2xx answer to a download goes slice by slice to its ``DownloadFile``; any other answer
///   stays in memory, at most ``errorBodyLimit`` bytes of it, for its ``ServiceError``.
/// - Bytes sent and received go to ``BackendRequest/progress``.
///
/// Its task has no completion handler: with one, Apple platforms never call the data delegate.
/// FoundationNetworking then calls only the *session's* delegate, so there it works through
/// sessions the backend creates (``SessionBox/tasksReportTheirBody``).
final class ReceivingTaskDelegate: TaskDelegate, URLSessionDataDelegate, @unchecked Sendable {
    /// The most bytes of an error answer to a download kept for its ``ServiceError``
    /// when the backend sets no limit: enough for any message, not a whole error video.
    static let errorBodyLimit = 1 << 20

    private let request: BackendRequest
    private let limit: Int?
    private let download: DownloadFile?
    private let control: RequestControl
    private let receiving: Locked<Receiving>

    private struct Receiving {
        /// The body so far, when it is kept in memory.
        var body = Data()
        /// The promise until the outcome is reported (then `nil`, so that a task kept by
        /// its cancellable does not keep the caller's completion).
        var promise: Future<BackendResponse, ServiceError>.Promise?
        /// Whether the answer's body goes to the ``DownloadFile``.
        var toFile = false
        /// The answer's bytes received so far, and how many it declared.
        var received: Int64 = 0
        var total: Int64?
    }

    /// A delegate for `request`, sent to `url`, whose body in memory may have at most
    /// `limit` bytes and whose 2xx answer goes to `download` when there is one; it reports
    /// the outcome to `promise`.
    init(
        url: URL?, request: BackendRequest, limit: Int?, download: DownloadFile?, control: RequestControl,
        promise: Future<BackendResponse, ServiceError>.Promise
    ) {
        self.request = request
        self.limit = limit
        self.download = download
        self.control = control
        var receiving = Receiving()
        receiving.promise = promise
        self.receiving = Locked(receiving)
        super.init(url: url)
    }

    /// Ends the request as too large when `response` declares a body over the limit;
    /// returns whether it did.
    private func refuses(_ response: URLResponse?) -> Bool {
        // A download's error page is cut to its start instead (see `didReceive data`).
        guard let limit, download == nil, let response, request.method != .head else { return false }
        let declared = response.expectedContentLength
        return declared > Int64(limit) && control.end(.tooLarge(limit: limit, declared: declared))
    }

    /// Ends the request with `error` (a download that cannot be written) and stops the task.
    private func fail(_ task: URLSessionTask, with error: ServiceError) {
        if control.end(.failed(error)) { task.cancel() }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let declared = response.expectedContentLength
        if let download, let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode),
            request.method != .head
        {
            let start: TransferProgress
            do {
                start = try download.begin(
                    status: http.statusCode, headers: HTTPHeaders(http), declaredLength: declared)
            } catch {
                fail(dataTask, with: error)
                completionHandler(.cancel)
                return
            }
            receiving.withLock { state in
                state.toFile = true
                state.received = start.completedBytes
                state.total = start.totalBytes
            }
            request.progress?.report(start)
            completionHandler(.allow)
            return
        }
        if refuses(response) {
            completionHandler(.cancel)
            return
        }
        if declared > 0, request.method != .head {
            // Room for the declared body, but never more than 4 MiB on the server's word.
            let room = Int(min(declared, 4 << 20, Int64(limit ?? Int.max)))
            receiving.withLock { state in
                state.body.reserveCapacity(room)
                state.total = declared
            }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let download, receiving.withLock({ $0.toFile }) {
            do {
                let written = try download.write(data)
                let total = receiving.withLock { state in
                    state.received = written
                    return state.total
                }
                request.progress?.report(
                    TransferProgress(direction: .download, completedBytes: written, totalBytes: total))
            } catch {
                fail(dataTask, with: error)
            }
            return
        }
        // A download's error page keeps its start (enough for the message) and never fails
        // as too large, so it reaches the caller as its status's error.
        let keep =
            download == nil ? (limit ?? Int.max) : min(limit ?? Self.errorBodyLimit, Self.errorBodyLimit)
        let (over, first, received, total) = receiving.withLock { state in
            let first = state.body.isEmpty
            state.received += Int64(data.count)
            guard state.body.count + data.count <= keep else {
                if download != nil { state.body.append(data.prefix(max(0, keep - state.body.count))) }
                return (download == nil, first, state.received, state.total)
            }
            state.body.append(data)
            return (false, first, state.received, state.total)
        }
        // Should the platform not have asked about the response, its Content-Length is
        // checked with the first bytes of the body.
        if first, refuses(dataTask.response) {
            dataTask.cancel()
        } else if over, let limit, control.end(.tooLarge(limit: limit, declared: nil)) {
            dataTask.cancel()
        } else {
            request.progress?.report(
                TransferProgress(direction: .download, completedBytes: received, totalBytes: total))
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        request.progress?.report(
            TransferProgress(
                direction: .upload, completedBytes: totalBytesSent,
                totalBytes: totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (body, promise, toFile) = receiving.withLock { state in
            defer { state.body = Data() }
            defer { state.promise = nil }
            return (state.body, state.promise, state.toFile)
        }
        let challenged = challengedResponse
        let outcome = URLSessionTransport.outcome(
            of: request, data: body, response: task.response ?? challenged,
            error: challenged == nil ? error : nil, ending: control.complete())
        promise?(URLSessionTransport.settle(outcome, download: download, wroteFile: toFile))
    }
}
