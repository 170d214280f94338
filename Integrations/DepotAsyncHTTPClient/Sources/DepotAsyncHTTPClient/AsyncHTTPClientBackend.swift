import AsyncHTTPClient
@_spi(BackendSupport) import Depot
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A ``Depot/Backend`` that sends requests over HTTP with AsyncHTTPClient (SwiftNIO): for
/// servers (Vapor, Hummingbird) and other Linux processes, where it costs about half of
/// what `URLSession` costs per request.
///
/// ```swift
/// import Depot
/// import DepotAsyncHTTPClient
///
/// let backend = AsyncHTTPClientBackend(baseURL: api, timeout: 10)
/// let posts = PostRepository(backend: backend)
/// let post = try await posts.findByID(1).value
/// try await backend.shutdown()            // when the process is done with it
/// ```
///
/// **Same outcomes as URLSessionBackend.** The request is built by Depot's
/// ``Depot/HTTPRequestPreparation`` (base-URL resolution and origin check, header
/// validation, the `Accept: application/json` default, `Content-Type` defaults), every
/// status goes through the one classifier (``Depot/ServiceError/check(_:for:)``),
/// redirects are followed by Depot's ``Depot/HTTPRedirectRule`` (at most 10; never with
/// `Authorization`, `Proxy-Authorization` or `Cookie` to another origin; a loop is
/// ``Depot/ServiceError/transport(code:description:)`` -1007), a body over
/// ``maximumResponseBytes`` fails with ``Depot/ServiceError/responseTooLarge(limit:declared:)``
/// while it streams, ``timeout`` bounds each request as a whole, and cancelling (the
/// ``Depot/Cancellable`` or the awaiting `Task`) ends it as ``Depot/ServiceError/cancelled``.
/// Transport failures map as `URLSessionBackend`'s do: connection refused, host unreachable
/// or a failed DNS lookup is ``Depot/ServiceError/cannotConnect``, a deadline is
/// ``Depot/ServiceError/timedOut``, a connection the server closed before the answer
/// ended is ``Depot/ServiceError/transport(code:description:)`` with
/// `URLError.Code.networkConnectionLost` (-1005), an answer that is not HTTP is -1011
/// (`badServerResponse`), and anything else keeps a code (-1, unknown, when there is
/// none). Middleware, repositories, paging and hypermedia work on it unchanged.
///
/// **The client.** With ``init(baseURL:headers:timeout:maximumResponseBytes:middleware:)``
/// the backend creates an `HTTPClient` of its own on SwiftNIO's shared event loops
/// (`NIOSingletons.posixEventLoopGroup`), configured as ``recommendedConfiguration()``
/// (redirects left to Depot, gzip/deflate decompressed, a refused connection failing at
/// once), and sends `Accept-Encoding: gzip, deflate` as `URLSession` does. Call
/// ``shutdown()`` when the process is done with it (a server's graceful shutdown). If the
/// owner forgets, the client is shut down in the background when the last copy of the
/// backend (and every request in flight, which keeps it) goes away, so it neither leaks
/// nor trips AsyncHTTPClient's debug check; a request started after ``shutdown()`` fails
/// with ``Depot/ServiceError/transport(code:description:)``.
///
/// With ``init(baseURL:client:headers:timeout:maximumResponseBytes:middleware:)`` the
/// backend uses your `HTTPClient` and never shuts it down. Create it with
/// ``recommendedConfiguration()`` (or at least `redirectConfiguration: .disallow`): a
/// client that follows redirects itself follows them with AsyncHTTPClient's rules, not
/// Depot's. The backend sends no `Accept-Encoding` of its own on such a client (it cannot
/// tell whether the client decompresses); set one in ``headers`` when it does.
///
/// **Threads.** Completions run on the SwiftNIO event loop that finished the request (so a
/// repository decodes there): cheap for ordinary bodies, and what lets an app that runs Swift
/// concurrency on SwiftNIO's event loops avoid any thread hop. Hop with
/// ``Depot/Future/receive(on:)`` before heavy work in a completion handler; `await` callers
/// resume on their own executor.
///
/// **Transfers.** A ``Depot/BackendRequest/bodyFile`` is streamed from disk, never read
/// whole, with upload progress. A download (``Depot/BackendRequest/destination``) streams
/// its 2xx body into a ``Depot/DownloadFile`` (a partial file, moved into place when
/// complete; ``maximumResponseBytes`` does not apply to it), with download progress, and a
/// resumable one continues a cut transfer with `Range`/`If-Range`, as on
/// `URLSessionBackend`. Their file work (checking, opening, reading, writing, moving and
/// removing the files) runs on `NIOThreadPool.singleton`, never on an event loop, so a
/// slow disk holds up no other request of the loop; at most a megabyte of a download waits
/// for the disk, past that the answer is read no faster than the disk takes it.
public struct AsyncHTTPClientBackend: Backend {
    /// The URL relative paths are resolved against, such as `https://api.example.com/v1/`.
    public let baseURL: URL
    /// The header fields sent with every request, unless the request sets the same name.
    public let headers: HTTPHeaders
    /// The seconds a request may take as a whole (connecting, every redirect and the whole
    /// body included), or `nil` for no deadline (AsyncHTTPClient's connect timeout, 10 s
    /// by default, still applies). A request that takes longer fails with
    /// ``Depot/ServiceError/timedOut``.
    public let timeout: TimeInterval?
    /// The most bytes a response body may have (as delivered, decompressed), or `nil`
    /// (the default) for no limit. A larger body fails with
    /// ``Depot/ServiceError/responseTooLarge(limit:declared:)`` as soon as its
    /// `Content-Length` or the bytes received so far show it; the rest is not read.
    public let maximumResponseBytes: Int?

    private let transport: AsyncHTTPClientTransport
    private let chain: any Backend

    /// Creates a backend with an `HTTPClient` of its own (see ``shutdown()``).
    ///
    /// - Parameters:
    ///   - baseURL: an `http` or `https` URL; relative paths are resolved against it.
    ///     Any other URL makes every request fail with ``Depot/ServiceError/invalidRequest(_:)``.
    ///   - headers: fields sent with every request (an API key, a client version).
    ///   - timeout: the seconds each request may take as a whole (see ``timeout``).
    ///   - maximumResponseBytes: the most bytes a response body may have; `nil` for no
    ///     limit.
    ///   - middleware: steps in front of the network, the first outermost, as with
    ///     `backend.with(...)`.
    public init(
        baseURL: URL,
        headers: HTTPHeaders = [:],
        timeout: TimeInterval? = nil,
        maximumResponseBytes: Int? = nil,
        middleware: [any Middleware] = []
    ) {
        let client = HTTPClient(
            eventLoopGroup: NIOSingletons.posixEventLoopGroup, configuration: Self.recommendedConfiguration())
        self.init(
            baseURL: baseURL, client: ClientBox(client: client, owned: true), headers: headers,
            timeout: timeout,
            maximumResponseBytes: maximumResponseBytes, middleware: middleware)
    }

    /// Creates a backend on an `HTTPClient` you own and shut down yourself (shared with
    /// the rest of a server, say). Create it with ``recommendedConfiguration()``, or at
    /// least with `redirectConfiguration: .disallow`, so that Depot's redirect rule
    /// applies. The other parameters are those of
    /// ``init(baseURL:headers:timeout:maximumResponseBytes:middleware:)``.
    public init(
        baseURL: URL,
        client: HTTPClient,
        headers: HTTPHeaders = [:],
        timeout: TimeInterval? = nil,
        maximumResponseBytes: Int? = nil,
        middleware: [any Middleware] = []
    ) {
        self.init(
            baseURL: baseURL, client: ClientBox(client: client, owned: false), headers: headers,
            timeout: timeout,
            maximumResponseBytes: maximumResponseBytes, middleware: middleware)
    }

    private init(
        baseURL: URL, client: ClientBox, headers: HTTPHeaders, timeout: TimeInterval?,
        maximumResponseBytes: Int?, middleware: [any Middleware]
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.timeout = timeout.map { max(0, $0) }
        self.maximumResponseBytes = maximumResponseBytes.map { max(0, $0) }
        let transport = AsyncHTTPClientTransport(
            client: client, preparation: HTTPRequestPreparation(baseURL: baseURL, headers: headers),
            timeout: self.timeout, maximumResponseBytes: self.maximumResponseBytes)
        self.transport = transport
        self.chain = transport.with(middleware)
    }

    /// The configuration of the client this backend creates, and the one to give a client
    /// you pass in: redirects not followed by the client (Depot follows them, with its
    /// rule), gzip and deflate bodies decompressed (without a size limit of
    /// AsyncHTTPClient's: ``maximumResponseBytes`` is Depot's), a refused connection
    /// failing the request at once instead of retrying until the deadline, and an idle
    /// timeout of 60 seconds (connecting: 10), as `URLSession`'s default: without a
    /// ``timeout``, a server that never answers still ends as `.timedOut`.
    public static func recommendedConfiguration() -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(60)),
            decompression: .enabled(limit: .none))
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// The client requests go through.
    public var client: HTTPClient {
        transport.client.client
    }

    /// Returns a future that sends `request` through the middleware and over the
    /// network each time it starts.
    public func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        chain.send(request)
    }

    /// Shuts down the client this backend created: requests still in flight end with
    /// ``Depot/ServiceError/transport(code:description:)`` (not `.cancelled`: nobody
    /// cancelled them, so an outbox queues such a write and a retry may send it through
    /// another backend), and later requests fail the same way. Call it once the server
    /// has stopped taking work. Does nothing for a client you passed in (shut that one
    /// down yourself). Calling it again does nothing.
    ///
    /// - Throws: the client's error, should shutting it down fail.
    public func shutdown() async throws {
        try await transport.client.shutdown()
    }
}

/// The client of one backend and whether the backend owns it: an owned client is shut
/// down by ``AsyncHTTPClientBackend/shutdown()``, or in the background when the last
/// copy of the backend goes away without it.
final class ClientBox: Sendable {
    let client: HTTPClient
    let owned: Bool
    private let state = NIOLockedValueBox(false)

    init(client: HTTPClient, owned: Bool) {
        self.client = client
        self.owned = owned
    }

    /// Shuts the client down once, if the backend owns it.
    func shutdown() async throws {
        guard owned, claimShutdown() else { return }
        try await client.shutdown()
    }

    /// Whether this call is the first to shut the client down.
    private func claimShutdown() -> Bool {
        state.withLockedValue { shutDown in
            defer { shutDown = true }
            return !shutDown
        }
    }

    deinit {
        // The owner forgot `shutdown()`: shut the client down in the background (the
        // callback keeps it until then) rather than leaking it.
        if owned, claimShutdown() { client.shutdown { _ in } }
    }
}

@_spi(BackendSupport)
extension AsyncHTTPClientBackend: MiddlewareHost {
    /// The middleware in front of the network: a `.live()` in front of this backend finds the
    /// stores among them.
    public var hostedChain: any Backend { chain }
}
