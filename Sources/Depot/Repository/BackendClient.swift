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
    @inlinable
    public func send(
        _ method: HTTPMethod,
        _ segments: [String],
        query: Query = Query(),
        body: RequestBody = .none,
        headers: HTTPHeaders = [:]
    ) -> Future<BackendResponse, ServiceError> {
        if let empty = segments.firstIndex(where: { $0.isEmpty }) {
            return .failure(
                .invalidRequest(
                    "path segment \(empty + 1) of \(segments.count) is empty (an empty id or name?): "
                        + "/\(PathSegment.join(segments).prefix(200))"))
        }
        var request = BackendRequest(method: method, segments: segments, query: query.items, headers: headers)
        do {
            if let (data, contentType) = try body.encoded(with: coding) {
                request.body = data
                if !request.headers.contains("Content-Type") { request.headers["Content-Type"] = contentType }
            }
        } catch {
            return .failure(error)
        }
        return backend.send(request)
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
        as type: Response.Type = Response.self
    ) -> Future<Response, ServiceError> {
        let coding = coding
        return send(method, segments, query: query, body: body, headers: headers)
            .tryMap { response throws(ServiceError) in try coding.decode(Response.self, from: response.body) }
    }
}
