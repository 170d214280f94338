import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The innermost backend of a ``URLSessionBackend``: one `URLSessionDataTask` per start.
///
/// With neither a `timeout` nor a `maximumResponseBytes`, a request costs what a
/// completion-handler data task costs, plus one lock for its ending. A `timeout` adds
/// one dispatch timer per request (the whole-request deadline); a
/// `maximumResponseBytes` makes the task a delegate-driven one
/// (``ReceivingTaskDelegate``) that counts the body as it arrives (where the session
/// cannot, on Linux with a session the caller passed in, the body is checked once it
/// has arrived).
struct URLSessionTransport: Backend {
    let session: SessionBox
    let builder: URLRequestBuilder
    /// The most body bytes a response may have, or `nil` for no limit.
    var maximumResponseBytes: Int? = nil

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let session = session
        let builder = builder
        let limit = maximumResponseBytes
        return Future { completion in
            let urlRequest: URLRequest
            let download: DownloadFile?
            let streams = Self.needsDelegate(request, limit: limit) && session.tasksReportTheirBody
            switch Result(catching: { () throws(ServiceError) in
                try Self.prepare(request, with: builder, resuming: streams)
            }) {
            case .success(let prepared): (urlRequest, download) = prepared
            case .failure(let error):
                completion(.failure(error))
                return NotCancellable()
            }
            let control = RequestControl()
            let task: URLSessionTask
            if streams {
                // The bodies are seen as they move; the delegate reports the outcome.
                if let bodyFile = request.bodyFile {
                    task = session.session.uploadTask(with: urlRequest, fromFile: bodyFile)
                } else {
                    task = session.session.dataTask(with: urlRequest)
                }
                task.delegate = ReceivingTaskDelegate(
                    url: urlRequest.url, request: request, limit: limit, download: download, control: control,
                    promise: completion)
            } else if let download {
                // Nothing observes the bytes: the platform writes the file itself, on its own
                // thread, and it is moved into place once complete.
                let delegate = TaskDelegate(url: urlRequest.url)
                task = session.session.downloadTask(with: urlRequest) { location, response, error in
                    let ending = control.complete()
                    let response = response ?? delegate.challengedResponse
                    let succeeded = (response as? HTTPURLResponse).map { (200..<300).contains($0.statusCode) }
                    let outcome = Self.outcome(
                        of: request, data: succeeded == true ? nil : location.flatMap(Self.errorBody),
                        response: response, error: delegate.challengedResponse == nil ? error : nil,
                        ending: ending)
                    if case .success = outcome {
                        Self.reportOnce(request.progress, of: request, body: location.flatMap(FileSize.of))
                    }
                    completion(Self.settle(outcome, of: request, download: download, file: location))
                }
                task.delegate = delegate
            } else {
                let delegate = TaskDelegate(url: urlRequest.url)
                let finished: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = {
                    data, response, error in
                    var ending = control.complete()
                    if let limit, ending == .finished, let data, data.count > limit {
                        // A session that cannot show the body as it arrives: checked at the end.
                        ending = .tooLarge(limit: limit, declared: nil)
                    }
                    let outcome = Self.outcome(
                        of: request, data: data, response: response ?? delegate.challengedResponse,
                        error: delegate.challengedResponse == nil ? error : nil, ending: ending)
                    if case .success(let response) = outcome {
                        Self.reportOnce(request.progress, of: request, body: Int64(response.body.count))
                    }
                    completion(outcome)
                }
                if let bodyFile = request.bodyFile {
                    task = session.session.uploadTask(
                        with: urlRequest, fromFile: bodyFile, completionHandler: finished)
                } else {
                    task = session.session.dataTask(with: urlRequest, completionHandler: finished)
                }
                task.delegate = delegate
            }
            if let timeout = builder.timeout {
                control.startDeadline(after: timeout, cancelling: task)
            }
            task.resume()
            return DataTaskCancellable(task: task, control: control)
        }
    }

    /// Whether `request` needs a delegate-driven task, which sees its bodies as they move:
    /// for progress, for a resumable download (whose bytes must survive a cut), or for a
    /// size limit on a body held in memory. Everything else takes a completion-handler
    /// task, which FoundationNetworking runs without a hop to the delegate queue for every
    /// slice of the body (a data, upload or download task).
    static func needsDelegate(_ request: BackendRequest, limit: Int?) -> Bool {
        if request.progress != nil { return true }
        guard let destination = request.destination else { return limit != nil }
        return destination.resumable
    }

    /// The start of a download task's file: the body of an error status, for its message.
    private static func errorBody(_ location: URL) -> Data? {
        guard let handle = try? FileHandle(forReadingFrom: location) else { return nil }
        defer { try? handle.close() }
        return try? handle.read(upToCount: ReceivingTaskDelegate.errorBodyLimit)
    }

    /// The `URLRequest` to send for `request`, and the file its download goes to; when
    /// the task `resuming` writes the file itself, the rest of an earlier attempt's bytes
    /// is asked for (a download task cannot continue a file: it starts over).
    private static func prepare(_ request: BackendRequest, with builder: URLRequestBuilder, resuming: Bool)
        throws(ServiceError)
        -> (URLRequest, DownloadFile?)
    {
        var urlRequest = try builder.urlRequest(for: request)
        guard let destination = request.destination else { return (urlRequest, nil) }
        let download = try DownloadFile(destination)
        guard resuming else { return (urlRequest, download) }
        for field in download.resumeFields {
            urlRequest.setValue(field.value, forHTTPHeaderField: field.name)
        }
        return (urlRequest, download)
    }

    /// The outcome of a request with a ``BackendRequest/destination`` once its task ended:
    /// a success whose body the delegate wrote (`wroteFile`) is moved into place and
    /// answered with its ``BackendResponse/file``; any failure leaves the partial file as
    /// ``DownloadFile/abandon(after:discarding:)`` decides. Without a download, `outcome`
    /// as it is.
    static func settle(
        _ outcome: Result<BackendResponse, ServiceError>, download: DownloadFile?, wroteFile: Bool
    ) -> Result<BackendResponse, ServiceError> {
        guard let download else { return outcome }
        switch outcome {
        case .success(var response) where wroteFile:
            do {
                response.file = try download.finish()
            } catch {
                return .failure(error)
            }
            response.body = Data()
            return .success(response)
        case .success(let response):
            // No body to write (a `304`, a `HEAD`): what is on disk stays.
            download.abandon(after: nil)
            return .success(response)
        case .failure(let error):
            download.abandon(after: error)
            return .failure(error)
        }
    }

    /// ``settle(_:download:wroteFile:)`` for a download task, whose complete body the
    /// platform wrote to `file`: a 2xx's file is moved into place.
    static func settle(
        _ outcome: Result<BackendResponse, ServiceError>, of request: BackendRequest, download: DownloadFile,
        file: URL?
    ) -> Result<BackendResponse, ServiceError> {
        guard case .success(var response) = outcome, (200..<300).contains(response.status),
            request.method != .head, let file
        else {
            return settle(outcome, download: download, wroteFile: false)
        }
        do {
            response.file = try download.adopt(file)
        } catch {
            return .failure(error)
        }
        response.body = Data()
        return .success(response)
    }

    /// The progress of a completion-handler task whose progress is observed (through a
    /// session that cannot show bodies as they move): reported once, when it completes.
    static func reportOnce(_ progress: ProgressHandler?, of request: BackendRequest, body bytes: Int64?) {
        guard let progress else { return }
        if request.bodyFile != nil || request.body?.isEmpty == false {
            let sent = request.bodyFile.flatMap(FileSize.of) ?? Int64(request.body?.count ?? 0)
            progress.report(TransferProgress(direction: .upload, completedBytes: sent, totalBytes: sent))
        }
        if let bytes {
            progress.report(TransferProgress(direction: .download, completedBytes: bytes, totalBytes: bytes))
        }
    }

    /// What a finished task means for `request`: a classified response or a mapped
    /// transport error, unless Depot ended the request first: then
    /// ``ServiceError/cancelled`` when the caller cancelled, ``ServiceError/timedOut``
    /// when the whole-request deadline passed, and
    /// ``ServiceError/transport(code:description:)`` with
    /// `URLError.Code.dataLengthExceedsMaximum` when the body passed the size limit.
    static func outcome(
        of request: BackendRequest, data: Data?, response: URLResponse?, error: (any Error)?,
        ending: RequestEnding
    ) -> Result<BackendResponse, ServiceError> {
        switch ending {
        case .running, .finished: break
        case .cancelled: return .failure(.cancelled)
        case .timedOut: return .failure(.timedOut)
        case .tooLarge(let limit, let declared):
            return .failure(.responseTooLarge(limit: limit, declared: declared))
        case .failed(let error): return .failure(error)
        }
        if let error { return .failure(ServiceError(transportError: error)) }
        guard let http = response as? HTTPURLResponse else {
            return .failure(
                .transport(
                    code: URLError.Code.badServerResponse.rawValue,
                    description: "The server's answer was not an HTTP response."))
        }
        // The fields are converted from the platform's untyped dictionary only when asked for.
        let answer = BackendResponse(status: http.statusCode, body: data ?? Data()) { HTTPHeaders(http) }
        return ServiceError.check(answer, for: request)
    }
}

/// A session, invalidated when the backend that created it goes away.
final class SessionBox: Sendable {
    let session: URLSession
    private let owned: Bool

    /// Whether a task created without a completion handler reports its response, body
    /// and end to its own delegate (``ReceivingTaskDelegate``), so that a response-size
    /// limit is kept while the body arrives. Always on Apple platforms; on Linux only for
    /// the backend's own sessions, through their ``ChallengeDelegate``.
    let tasksReportTheirBody: Bool

    /// A session of the backend's own; on Linux with a ``ChallengeDelegate``.
    init(configuration: URLSessionConfiguration) {
        #if canImport(FoundationNetworking)
            session = URLSession(
                configuration: configuration, delegate: ChallengeDelegate(), delegateQueue: nil)
        #else
            session = URLSession(configuration: configuration)
        #endif
        owned = true
        tasksReportTheirBody = true
    }

    /// The caller's session, which the caller keeps valid.
    init(session: URLSession) {
        self.session = session
        owned = false
        #if canImport(FoundationNetworking)
            tasksReportTheirBody = false
        #else
            tasksReportTheirBody = true
        #endif
    }

    deinit {
        // Lets requests in flight finish, then releases the session's resources.
        if owned { session.finishTasksAndInvalidate() }
    }
}

extension HTTPHeaders {
    /// The header fields of `response`, sorted by name (the platform keeps no order).
    init(_ response: HTTPURLResponse) {
        let all = response.allHeaderFields
        var fields: [Field] = []
        fields.reserveCapacity(all.count)
        for (key, value) in all {
            guard let name = key.base as? String else { continue }
            // Each one put in its place as it comes (a response has a few): no second array, as
            // `sorted(by:)` would make.
            var index = fields.endIndex
            while index > fields.startIndex, name.caseInsensitiveLess(fields[index - 1].name) { index -= 1 }
            fields.insert(Field(name: name, value: value as? String ?? String(describing: value)), at: index)
        }
        self.init(fields)
    }
}
