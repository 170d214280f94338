import Foundation

/// What every repository has: a backend to send through and a coding for bodies.
///
/// Its helpers are the one way a repository talks to its backend, so a custom
/// endpoint takes a line:
///
/// ```swift
/// extension UserRepository {
///     func posts(of user: User) -> Future<[Post], ServiceError> {
///         request(.get, ["users", "\(user.id)", "posts"])
///     }
/// }
/// ```
public protocol BackendClient: Sendable {
    /// Where requests go.
    var backend: any Backend { get }
    /// How bodies are encoded and decoded; ``JSONCoding/default`` unless replaced.
    var coding: JSONCoding { get }
}

extension BackendClient {
    /// Foundation's JSON coders, no envelope.
    public var coding: JSONCoding { .default }

    /// Sends a request built from path segments (each percent-encoded) and returns
    /// the raw response, for calls that need headers or no body at all.
    ///
    /// An empty segment (an empty id, say) is refused with
    /// ``ServiceError/invalidRequest(_:)`` rather than sent as `/users/`, which a server
    /// would read as the whole collection.
    ///
    /// A ``RequestBody/file(_:contentType:)`` body, or a ``MultipartForm`` with file parts,
    /// is streamed from disk; `progress` hears how far the body and the answer are.
    ///
    /// The segments are read as a resource by json-server's convention (names and ids
    /// alternate: ``RequestResource/init(segments:)``); pass a ``RequestResource`` to say
    /// otherwise.
    @inlinable
    public func send(
        _ method: HTTPMethod,
        _ segments: [String],
        query: Query = Query(),
        body: RequestBody = .none,
        headers: HTTPHeaders = [:],
        progress: ProgressHandler? = nil
    ) -> Future<BackendResponse, ServiceError> {
        send(
            method, RequestResource(segments: segments), query: query, body: body, headers: headers,
            progress: progress)
    }

    /// Sends a request for `resource` and returns the raw response: for a custom endpoint that
    /// says what it addresses, which the live change rules then read as written.
    ///
    /// ```swift
    /// send(.post, .record("7", in: ["posts"]).appending("publish"))   // POST /posts/7/publish
    /// ```
    @inlinable
    public func send(
        _ method: HTTPMethod,
        _ resource: RequestResource,
        query: Query = Query(),
        body: RequestBody = .none,
        headers: HTTPHeaders = [:],
        progress: ProgressHandler? = nil
    ) -> Future<BackendResponse, ServiceError> {
        do {
            var request = try Self.request(method, resource, query: query, headers: headers)
            request.progress = progress
            return body.send(request, coding: coding, through: backend)
        } catch {
            return .failure(error)
        }
    }

    /// Downloads the answer to `GET` of the path built from `segments` into `file`:
    /// streamed to disk as it arrives (memory stays small whatever its size), moved into
    /// place only when complete, and returned. An error status fails with its
    /// ``ServiceError`` and leaves no file; cancelling removes what was received.
    ///
    /// With `resumable`, a transfer cut short keeps its bytes, and the next download to
    /// the same file (a retry's too) asks the server for the rest only; see
    /// ``DownloadDestination``. `Accept` is `*/*` unless `headers` name one.
    ///
    /// ```swift
    /// let poster = try await movies.download(["movies", "1", "poster"], to: cache.appending(path: "1.png"),
    ///                                        progress: ProgressHandler { print($0.fractionCompleted ?? 0) }).value
    /// ```
    public func download(
        _ segments: [String],
        query: Query = Query(),
        headers: HTTPHeaders = [:],
        to file: URL,
        resumable: Bool = false,
        progress: ProgressHandler? = nil
    ) -> Future<URL, ServiceError> {
        do {
            var request = try Self.request(
                .get, RequestResource(segments: segments), query: query, headers: headers)
            request.destination = DownloadDestination(file, resumable: resumable)
            request.progress = progress
            return backend.download(request)
        } catch {
            return .failure(error)
        }
    }

    /// The request for `segments`, each percent-encoded; an empty segment (an empty id,
    /// say) is refused with ``ServiceError/invalidRequest(_:)`` rather than sent as
    /// `/users/`, which a server would read as the whole collection.
    @usableFromInline
    static func request(
        _ method: HTTPMethod, _ resource: RequestResource, query: Query, headers: HTTPHeaders
    ) throws(ServiceError) -> BackendRequest {
        try PathSegment.checkNoneEmpty(resource.segments)
        return BackendRequest(method: method, resource: resource, query: query.items, headers: headers)
    }

    /// Sends a request built from path segments and decodes the answer as `Response`
    /// with ``coding``.
    ///
    /// ```swift
    /// request(.get, ["users", "1", "posts"], query: ["_sort": "id"], as: [Post].self)
    /// ```
    @inlinable
    public func request<Response: Decodable & Sendable>(
        _ method: HTTPMethod,
        _ segments: [String],
        query: Query = Query(),
        body: RequestBody = .none,
        headers: HTTPHeaders = [:],
        progress: ProgressHandler? = nil,
        as type: Response.Type = Response.self
    ) -> Future<Response, ServiceError> {
        request(
            method, RequestResource(segments: segments), query: query, body: body, headers: headers,
            progress: progress, as: type)
    }

    /// Sends a request for `resource` and decodes the answer as `Response` with ``coding``.
    @inlinable
    public func request<Response: Decodable & Sendable>(
        _ method: HTTPMethod,
        _ resource: RequestResource,
        query: Query = Query(),
        body: RequestBody = .none,
        headers: HTTPHeaders = [:],
        progress: ProgressHandler? = nil,
        as type: Response.Type = Response.self
    ) -> Future<Response, ServiceError> {
        let coding = coding
        return send(method, resource, query: query, body: body, headers: headers, progress: progress)
            .tryMap { response throws(ServiceError) in try coding.decode(Response.self, from: response.body) }
    }
}
