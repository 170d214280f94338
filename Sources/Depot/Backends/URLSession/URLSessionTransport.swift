import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The innermost backend of a ``URLSessionBackend``: one `URLSessionDataTask` per start.
struct URLSessionTransport: Backend {
    let session: SessionBox
    let builder: URLRequestBuilder

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let session = session
        let builder = builder
        return Future { completion in
            let urlRequest: URLRequest
            switch Result(catching: { () throws(ServiceError) in try builder.urlRequest(for: request) }) {
            case .success(let built): urlRequest = built
            case .failure(let error):
                completion(.failure(error))
                return NotCancellable()
            }
            let cancelled = Locked(false)
            let delegate = TaskDelegate(url: urlRequest.url)
            let task = session.session.dataTask(with: urlRequest) { data, response, error in
                completion(
                    Self.outcome(
                        of: request, data: data, response: response ?? delegate.challengedResponse,
                        error: delegate.challengedResponse == nil ? error : nil,
                        cancelled: cancelled.withLock { $0 }))
            }
            task.delegate = delegate
            task.resume()
            return DataTaskCancellable(task: task, cancelled: cancelled)
        }
    }

    /// What a finished task means for `request`: a classified response or a mapped
    /// transport error; ``ServiceError/cancelled`` whenever the caller cancelled.
    static func outcome(
        of request: BackendRequest, data: Data?, response: URLResponse?, error: (any Error)?,
        cancelled: Bool
    ) -> Result<BackendResponse, ServiceError> {
        if cancelled { return .failure(.cancelled) }
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

/// Cancels one data task: marks it cancelled (so that its outcome is
/// ``ServiceError/cancelled`` whatever the platform reports) and stops it.
struct DataTaskCancellable: Cancellable {
    let task: URLSessionTask
    let cancelled: Locked<Bool>

    func cancel() {
        cancelled.withLock { $0 = true }
        task.cancel()
    }
}

/// A session, invalidated when the backend that created it goes away.
final class SessionBox: Sendable {
    let session: URLSession
    private let owned: Bool

    /// A session of the backend's own; on Linux with a ``ChallengeDelegate``.
    init(configuration: URLSessionConfiguration) {
        #if canImport(FoundationNetworking)
            session = URLSession(
                configuration: configuration, delegate: ChallengeDelegate(), delegateQueue: nil)
        #else
            session = URLSession(configuration: configuration)
        #endif
        owned = true
    }

    /// The caller's session, which the caller keeps valid.
    init(session: URLSession) {
        self.session = session
        owned = false
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
