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
            switch Result(catching: { () throws(ServiceError) in try builder.urlRequest(for: request) }) {
            case .success(let built): urlRequest = built
            case .failure(let error):
                completion(.failure(error))
                return NotCancellable()
            }
            let control = RequestControl()
            let task: URLSessionDataTask
            if let limit, session.tasksReportTheirBody {
                // The body is counted as it arrives; the delegate reports the outcome.
                task = session.session.dataTask(with: urlRequest)
                task.delegate = ReceivingTaskDelegate(
                    url: urlRequest.url, request: request, limit: limit, control: control, promise: completion
                )
            } else {
                let delegate = TaskDelegate(url: urlRequest.url)
                task = session.session.dataTask(with: urlRequest) { data, response, error in
                    var ending = control.complete()
                    if let limit, ending == .finished, let data, data.count > limit {
                        // A session that cannot show the body as it arrives: checked at the end.
                        ending = .tooLarge(limit: limit, declared: nil)
                    }
                    completion(
                        Self.outcome(
                            of: request, data: data, response: response ?? delegate.challengedResponse,
                            error: delegate.challengedResponse == nil ? error : nil, ending: ending))
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
        }
        if let error { return .failure(ServiceError(transportError: error)) }
        guard let http = response as? HTTPURLResponse else {
            return .failure(
                .transport(
                    code: URLError.Code.badServerResponse.rawValue,
                    description: "The server's answer was not an HTTP response."))
        }
        let answer = BackendResponse(
            status: http.statusCode, headers: HTTPHeaders(http), body: data ?? Data())
        return ServiceError.check(answer, for: request)
    }
}

extension ServiceError {
    /// The failure of a response whose body passed `limit` bytes (`declared`: the
    /// `Content-Length` that said so before any of it arrived).
    static func responseTooLarge(limit: Int, declared: Int64?) -> ServiceError {
        let description =
            if let declared {
                "The response declares a body of \(declared) bytes, more than the limit of \(limit) bytes (maximumResponseBytes)."
            } else {
                "The response body grew past the limit of \(limit) bytes (maximumResponseBytes); the rest was not read."
            }
        return .transport(code: URLError.Code.dataLengthExceedsMaximum.rawValue, description: description)
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
        var fields: [Field] = []
        for (key, value) in response.allHeaderFields {
            guard let name = key.base as? String else { continue }
            fields.append(Field(name: name, value: value as? String ?? String(describing: value)))
        }
        self.init(fields.sorted { $0.name.caseInsensitiveLess($1.name) })
    }
}
