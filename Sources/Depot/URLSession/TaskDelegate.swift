import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of each ``URLSessionBackend`` task: it applies the redirect policy and keeps a
/// 401 that FoundationNetworking would otherwise swallow. Credentials stay with their origin
/// (Darwin and FoundationNetworking would copy every header to the next hop), and on Linux a
/// 307 or 308 of a request with a body is not followed (the platform would resend it empty):
/// the rules are in the article *Sending over HTTP*.
///
/// Not final: ``ReceivingTaskDelegate`` adds the body-size limit, downloads and progress. It is
/// `Sendable` because all its state is immutable or behind its lock (`@unchecked` only because
/// a class that can be subclassed cannot be checked).
class TaskDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    /// The headers that carry credentials and stay with their origin: the shared
    /// ``HTTPRedirectRule/credentialHeaders``.
    static var credentialHeaders: [String] { HTTPRedirectRule.credentialHeaders }

    private let start: Start
    /// Whether a redirect left the first origin, and the 401 of a cancelled challenge.
    private let state = Locked<(crossedOrigin: Bool, challenge: HTTPURLResponse?)>((false, nil))

    /// Where the request was first sent.
    private enum Start: Sendable {
        case origin(Origin?)
        case url(URL?)
    }

    /// A delegate for a request first sent to `origin`.
    init(origin: Origin?) {
        start = .origin(origin)
    }

    /// A delegate for a request first sent to `url`; its origin is worked out only
    /// when a redirect comes, so that requests that are not redirected never pay for it.
    init(url: URL?) {
        start = .url(url)
    }

    /// The origin the request was first sent to.
    private var origin: Origin? {
        switch start {
        case .origin(let origin): return origin
        case .url(let url): return url.flatMap(Origin.init)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        if Self.dropsBodyOnRedirect, [307, 308].contains(response.statusCode),
            task.originalRequest?.httpBody?.isEmpty == false || task is URLSessionUploadTask
        {
            completionHandler(nil)
            return
        }
        completionHandler(redirect(to: request))
    }

    /// The request to send for a redirect to `request`.
    func redirect(to request: URLRequest) -> URLRequest {
        let sameOrigin = origin != nil && request.url.flatMap(Origin.init) == origin
        let strip = state.withLock { state in
            if !sameOrigin { state.crossedOrigin = true }
            return state.crossedOrigin
        }
        guard strip else { return request }
        var stripped = request
        for name in Self.credentialHeaders { stripped.setValue(nil, forHTTPHeaderField: name) }
        return stripped
    }

    /// Keeps the 401 whose challenge ``ChallengeDelegate`` cancelled.
    func recordChallenge(_ response: HTTPURLResponse) {
        state.withLock { $0.challenge = response }
    }

    /// The 401 recorded by ``recordChallenge(_:)``, if any.
    var challengedResponse: HTTPURLResponse? {
        state.withLock { $0.challenge }
    }

    /// Whether the platform loses the body of a request it resends after a 307 / 308.
    static var dropsBodyOnRedirect: Bool {
        #if canImport(FoundationNetworking)
            return true
        #else
            return false
        #endif
    }
}

/// The session delegate of the sessions ``URLSessionBackend`` creates on Linux.
///
/// FoundationNetworking answers a 401 with a `Basic` (or `Digest`) challenge by asking
/// the session delegate, and when there is none and no stored credential it neither
/// retries nor completes: the task waits forever, past its timeout. This delegate
/// cancels such a challenge, after handing the 401 to the task's ``TaskDelegate`` so
/// that the caller gets ``ServiceError/unauthorized(_:challenges:)`` (without the
/// body, which the platform does not expose). A credential from the session's
/// credential storage is still used.
///
/// FoundationNetworking also tells only the session's delegate about the response, the
/// body, the bytes sent and the end of a task created without a completion handler (the
/// tasks of a backend with a response-size limit, and transfers): this delegate hands
/// those calls, and the redirects of such tasks, on to the task's own
/// ``ReceivingTaskDelegate``.
final class ChallengeDelegate: NSObject, URLSessionDataDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let method = challenge.protectionSpace.authenticationMethod
        let isHTTP =
            method == NSURLAuthenticationMethodHTTPBasic || method == NSURLAuthenticationMethodHTTPDigest
        let usable = method == NSURLAuthenticationMethodHTTPBasic && challenge.proposedCredential != nil
        guard isHTTP, !usable, let response = challenge.failureResponse as? HTTPURLResponse else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        (task.delegate as? TaskDelegate)?.recordChallenge(response)
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let delegate = task.delegate as? TaskDelegate else {
            completionHandler(request)
            return
        }
        delegate.urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: request,
            completionHandler: completionHandler)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let delegate = dataTask.delegate as? ReceivingTaskDelegate else {
            completionHandler(.allow)
            return
        }
        delegate.urlSession(
            session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        (dataTask.delegate as? ReceivingTaskDelegate)?.urlSession(
            session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        (task.delegate as? ReceivingTaskDelegate)?.urlSession(
            session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        (task.delegate as? ReceivingTaskDelegate)?.urlSession(
            session, task: task, didCompleteWithError: error)
    }
}
