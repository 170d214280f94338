import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Backend`` that sends requests over HTTP with `URLSession`.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: URL(string: "https://jsonplaceholder.typicode.com")!)
/// let post = try await PostRepository(backend: backend).findByID(1).value   // GET /posts/1
/// ```
///
/// How it builds requests, classifies answers, follows redirects, and bounds time and size, on
/// Apple platforms and on Linux: the article *Sending over HTTP*.
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
