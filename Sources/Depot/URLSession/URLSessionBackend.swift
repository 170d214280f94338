import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Backend`` that sends requests over HTTP with `URLSession`.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: URL(string: "https://jsonplaceholder.typicode.com")!)
/// let posts = PostRepository(backend: backend)
/// let post = try await posts.findByID(1).value            // GET /posts/1
/// ```
///
/// **Building the request.** A request's path is resolved against ``baseURL`` like a
/// relative reference: `posts/1` on `https://host/api/v1` (with or without the trailing
/// slash) is `https://host/api/v1/posts/1`; a path that starts with `/` is taken from
/// the origin's root; an absolute URL is accepted when its origin (scheme, host, port)
/// is the base URL's, and refused as ``ServiceError/invalidRequest(_:)`` otherwise, so
/// a server's `Link` or `next` value can be followed but never sends credentials
/// elsewhere. Query items are percent-encoded per RFC 3986: everything but unreserved
/// characters, so a `+`, `&` or `=` in a value arrives as sent.
///
/// **Headers.** `Accept: application/json` unless the request sets `Accept`, then
/// ``headers`` (the backend's defaults), then the request's own fields, which win. A
/// request with a body and no `Content-Type` is sent as `application/json`. What
/// ``BackendRequest/validate()`` refuses (a header whose name or value contains CR, LF
/// or NUL, a `GET` or `HEAD` with a body) fails as ``ServiceError/invalidRequest(_:)``
/// before anything is sent, as it does on every backend.
///
/// **Outcomes.** Every status goes through the one classifier,
/// ``ServiceError/init(response:for:)``, so a non-2xx answer is a ``ServiceError`` that
/// keeps the status, the headers and the body (with the server's `message`, `error`,
/// `detail` or RFC 9457 problem `detail`). Transport failures map from `URLError`:
/// connection refused or unknown host is ``ServiceError/cannotConnect``, offline is
/// ``ServiceError/noConnection``, a timeout is ``ServiceError/timedOut``, and anything
/// else is ``ServiceError/transport(code:description:)`` with the `URLError` code.
///
/// **Caching.** A request that carries validators (`If-None-Match`,
/// `If-Modified-Since`) is sent with `.reloadIgnoringLocalCacheData`, so the session's
/// `URLCache` can neither answer it nor turn the server's `304` into a `200` of its own;
/// revalidation is ``CacheMiddleware``'s job.
///
/// **Cancellation.** Cancelling the ``Cancellable`` that `start` returned, or the `Task`
/// awaiting ``Future/value``, cancels the `URLSessionTask`; the outcome is
/// ``ServiceError/cancelled``.
///
/// **Redirects.** A redirect to the same origin is followed with every header. A
/// redirect to another origin is followed too, but without `Authorization`,
/// `Proxy-Authorization` and `Cookie` (for that hop and every later one), as browsers,
/// curl and Python's requests do: credentials are never sent to a host they were not
/// meant for. Put credentials in ``headers`` or in a middleware, not in the
/// configuration's `httpAdditionalHeaders`, which `URLSession` adds to every hop.
/// On Linux a 307 or 308 answer to a request with a body is not followed (the
/// platform would resend the request without its body): it arrives as
/// ``ServiceError/unexpectedStatus(_:)``.
///
/// **Threads.** Completions run on the session's delegate queue: for the session this
/// backend creates, a serial background `OperationQueue`. Hop with
/// ``Future/receive(on:)`` (for example to `.main`) when it matters; `await` callers
/// need nothing.
///
/// **Timeouts.** ``timeout`` bounds each request as a whole, from the moment it starts
/// (connecting included) to the last byte of the response: when it passes, Depot cancels
/// the task and the outcome is ``ServiceError/timedOut``, even if the server is still
/// sending (a slow drip) or never answers. The same value is also the session's idle
/// timeout (`URLRequest.timeoutInterval`: the longest wait for the next bytes), so a
/// stalled connection may end sooner, also as ``ServiceError/timedOut``. Each attempt
/// is bounded on its own: a retrying middleware gives every attempt the full timeout.
/// Without a timeout, only the configuration's own limits apply
/// (`timeoutIntervalForRequest`, an idle timeout, 60 s by default; on Apple platforms
/// also `timeoutIntervalForResource`, which FoundationNetworking ignores).
///
/// **Response size.** With ``maximumResponseBytes``, a response whose `Content-Length`
/// is over the limit fails before any of its body is read, and a body without one
/// (chunked) fails as soon as it grows past the limit, so an endless body never fills
/// memory. Both fail with ``ServiceError/transport(code:description:)`` whose code is
/// `URLError.Code.dataLengthExceedsMaximum` (-1103). The limit counts the body as
/// delivered (decompressed when the server compressed it); the `Content-Length` check
/// applies to what the server declared. Without a limit (the default) any size is read.
/// One exception: on Linux, with a session you pass in, FoundationNetworking shows the
/// body only to that session's delegate, so there the limit is checked once the whole
/// body has arrived (with the same error); use the `configuration:` initializer when an
/// endless body must be stopped as it comes.
///
/// **Transfers.** A request with a ``BackendRequest/bodyFile`` is sent by an upload task
/// from that file, and one with a ``BackendRequest/destination`` is answered into that file
/// (see ``DownloadDestination``); ``maximumResponseBytes`` does not apply to a body written to
/// disk. Transfers that report ``BackendRequest/progress`` or may resume see every slice of the
/// body as it moves; others run on the platform's completion-handler tasks.
///
/// **Linux.** With FoundationNetworking, the session's idle timeout is whole seconds,
/// rounded *up* there (a 0.5 s idle timeout is 1 s); the whole-request deadline is
/// Depot's own timer and is not rounded, so a 0.5 s ``timeout`` still ends a request
/// after 0.5 s. A 401 with a
/// `Basic` challenge arrives as ``ServiceError/unauthorized(_:challenges:)`` without
/// its body (the platform keeps it), and only through a session this backend creates:
/// FoundationNetworking waits forever on such a 401 unless the *session* delegate
/// answers the challenge, so a session you pass in should have a delegate that does.
public struct URLSessionBackend: Backend {
    /// The URL relative paths are resolved against, such as `https://api.example.com/v1/`.
    public let baseURL: URL
    /// The header fields sent with every request, unless the request sets the same name.
    public let headers: HTTPHeaders
    /// The seconds a request may take as a whole, from the moment it starts (connecting
    /// included) to the last byte of the response, or `nil` for the session
    /// configuration's limits only (`timeoutIntervalForRequest`, an idle timeout of 60 s by
    /// default). It is also each request's idle timeout. A request that takes longer
    /// fails with ``ServiceError/timedOut``.
    public let timeout: TimeInterval?
    /// The most bytes a response body may have, or `nil` (the default) for no limit. A
    /// larger body fails with ``ServiceError/transport(code:description:)`` and the code
    /// `URLError.Code.dataLengthExceedsMaximum`, as soon as the `Content-Length` or the
    /// bytes received so far show it; the rest is not read.
    public let maximumResponseBytes: Int?

    private let transport: URLSessionTransport
    private let chain: any Backend

    /// Creates a backend with a session of its own, made from `configuration`.
    ///
    /// - Parameters:
    ///   - baseURL: an `http` or `https` URL; relative paths are resolved against it.
    ///     Any other URL makes every request fail with ``ServiceError/invalidRequest(_:)``.
    ///   - configuration: the session's configuration (caching, cookies, proxies).
    ///   - headers: fields sent with every request (an API key, a client version).
    ///   - timeout: the seconds each request may take as a whole, connecting included
    ///     (see ``timeout``); `nil` keeps only the configuration's idle timeout.
    ///   - maximumResponseBytes: the most bytes a response body may have; `nil` for no
    ///     limit. Set it when a server you do not control could send an endless body.
    ///   - middleware: steps in front of the network, the first outermost, as with
    ///     `backend.with(...)`.
    public init(
        baseURL: URL,
        configuration: URLSessionConfiguration = .default,
        headers: HTTPHeaders = [:],
        timeout: TimeInterval? = nil,
        maximumResponseBytes: Int? = nil,
        middleware: [any Middleware] = []
    ) {
        self.init(
            baseURL: baseURL, session: SessionBox(configuration: configuration), headers: headers,
            timeout: timeout, maximumResponseBytes: maximumResponseBytes, middleware: middleware)
    }

    /// Creates a backend on a session you own (shared with other code, or with a
    /// delegate for authentication challenges or metrics).
    ///
    /// The backend sets a delegate on each of its tasks to apply the redirect policy;
    /// your session delegate still receives the events a task delegate does not handle.
    /// Completions run on `session.delegateQueue`. The parameters are those of
    /// ``init(baseURL:configuration:headers:timeout:maximumResponseBytes:middleware:)``.
    public init(
        baseURL: URL,
        session: URLSession,
        headers: HTTPHeaders = [:],
        timeout: TimeInterval? = nil,
        maximumResponseBytes: Int? = nil,
        middleware: [any Middleware] = []
    ) {
        self.init(
            baseURL: baseURL, session: SessionBox(session: session), headers: headers, timeout: timeout,
            maximumResponseBytes: maximumResponseBytes, middleware: middleware)
    }

    private init(
        baseURL: URL, session: SessionBox, headers: HTTPHeaders, timeout: TimeInterval?,
        maximumResponseBytes: Int?, middleware: [any Middleware]
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes.map { max(0, $0) }
        let transport = URLSessionTransport(
            session: session,
            builder: URLRequestBuilder(baseURL: baseURL, headers: headers, timeout: timeout),
            maximumResponseBytes: self.maximumResponseBytes)
        self.transport = transport
        self.chain = transport.with(middleware)
    }

    /// The session requests go through.
    public var session: URLSession {
        transport.session.session
    }

    /// Returns a future that sends `request` through the middleware and over the
    /// network each time it starts.
    public func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        chain.send(request)
    }
}

@_spi(BackendSupport)
extension URLSessionBackend: MiddlewareHost {
    /// The middleware in front of the network.
    public var hostedChain: any Backend { chain }
}
