import Foundation

/// Drives a hypermedia API from its root URL alone: fetch the root, then follow the links
/// the server offers, through the same ``Backend`` (and middleware) as everything else.
///
/// ```swift
/// let api = HypermediaClient(backend: URLSessionBackend(baseURL: root), root: root)
/// let home = try await api.fetchRoot().value
/// let library = try await api.follow("library", from: home, as: Library.self).value
/// ```
///
/// What following a link sends, and where hrefs lead: the article *Following Hypermedia Links*.
public struct HypermediaClient: Sendable {
    /// Where requests go; its base URL must be ``root``.
    public let backend: any Backend
    /// The API's root URL: its entry point, and the base for relative hrefs.
    public let root: URL
    /// How resources are decoded and caller bodies encoded.
    public let coding: JSONCoding
    /// Whether links to other origins than ``root``'s are followed (`false` refuses them).
    public let allowsForeignOrigins: Bool

    /// Creates a client for the API whose entry point is `root`, reached through `backend`.
    ///
    /// - Parameters:
    ///   - backend: a backend whose base URL is `root` (or an `InMemoryBackend` that
    ///     serves the API's routes).
    ///   - root: the API's root URL.
    ///   - coding: the JSON coding for resources; ``JSONCoding/default`` unless given.
    ///   - allowsForeignOrigins: follow links to other origins too; off by default.
    public init(
        backend: any Backend, root: URL, coding: JSONCoding = .default, allowsForeignOrigins: Bool = false
    ) {
        self.backend = backend
        self.root = root
        self.coding = coding
        self.allowsForeignOrigins = allowsForeignOrigins
    }

    private var follower: LinkFollower {
        LinkFollower(backend: backend, root: root, coding: coding, allowsForeignOrigins: allowsForeignOrigins)
    }

    /// The root document, whatever its members: usually only `_links`.
    public func fetchRoot() -> Future<Resource<JSONValue>, ServiceError> {
        fetchRoot(as: JSONValue.self)
    }

    /// The root document, its members decoded as `type`.
    public func fetchRoot<U: Decodable & Sendable>(as type: U.Type) -> Future<Resource<U>, ServiceError> {
        follow(Link(rel: "root", href: root.absoluteString), as: type)
    }

    /// Follows `link` and decodes the answer as a resource.
    ///
    /// - Parameters:
    ///   - link: a link the API offered.
    ///   - values: values for the templates in the link's href and parameters
    ///     (`["rating": 5]`).
    ///   - body: a body to send instead of the link's parameters.
    ///   - type: the entity type of the answer.
    /// - Returns: a future that fails with ``ServiceError/invalidRequest(_:)`` without
    ///   sending anything when the link leads to a foreign origin, its href is not a
    ///   valid template or URL, or a parameter template has no value; with the backend's
    ///   error when the server refuses; with ``ServiceError/decoding(_:)`` when the
    ///   answer does not decode.
    public func follow<U: Decodable & Sendable>(
        _ link: Link, with values: [String: JSONValue] = [:], body: RequestBody? = nil,
        as type: U.Type = U.self
    ) -> Future<Resource<U>, ServiceError> {
        follower.follow(link, values: values, body: body, as: type)
    }

    /// Follows the link `resource` offers for `rel`, or fails with
    /// ``ServiceError/invalidRequest(_:)`` without sending anything when it offers none:
    /// the API does not allow that action now.
    ///
    /// ```swift
    /// let cart = try await api.follow("rent", from: movie, as: Cart.self).value
    /// ```
    public func follow<Entity, U: Decodable & Sendable>(
        _ rel: String, from resource: Resource<Entity>, with values: [String: JSONValue] = [:],
        body: RequestBody? = nil, as type: U.Type = U.self
    ) -> Future<Resource<U>, ServiceError> {
        guard let link = resource.link(rel) else { return .failure(Self.missing(rel, in: resource)) }
        return follow(link, with: values, body: body, as: type)
    }

    /// Follows `link` and returns the raw response, for answers that are not a JSON
    /// resource: an empty `204`, an image, a download.
    public func send(
        _ link: Link, with values: [String: JSONValue] = [:], body: RequestBody? = nil
    ) -> Future<BackendResponse, ServiceError> {
        follower.send(link, values: values, body: body)
    }

    /// Follows the link `resource` offers for `rel` and returns the raw response, or
    /// fails with ``ServiceError/invalidRequest(_:)`` without sending anything when it
    /// offers none.
    public func send<Entity>(
        _ rel: String, from resource: Resource<Entity>, with values: [String: JSONValue] = [:],
        body: RequestBody? = nil
    ) -> Future<BackendResponse, ServiceError> {
        guard let link = resource.link(rel) else { return .failure(Self.missing(rel, in: resource)) }
        return send(link, with: values, body: body)
    }

    /// Follows `link` and downloads its answer into `file` (an image, a video, a
    /// document), streamed to disk and moved into place when complete, as
    /// ``BackendClient/download(_:query:headers:to:resumable:progress:)`` does; `Accept`
    /// is the link's `type`, or `*/*`.
    ///
    /// ```swift
    /// let poster = try await api.download("poster", from: movie, to: posters.appending(path: "1.png"),
    ///                                     progress: ProgressHandler { print($0.completedBytes) }).value
    /// ```
    public func download(
        _ link: Link, with values: [String: JSONValue] = [:], to file: URL, resumable: Bool = false,
        progress: ProgressHandler? = nil
    ) -> Future<URL, ServiceError> {
        follower.download(link, values: values, to: file, resumable: resumable, progress: progress)
    }

    /// Downloads what the link `resource` offers for `rel` into `file`, or fails with
    /// ``ServiceError/invalidRequest(_:)`` without sending anything when it offers none.
    public func download<Entity>(
        _ rel: String, from resource: Resource<Entity>, with values: [String: JSONValue] = [:], to file: URL,
        resumable: Bool = false, progress: ProgressHandler? = nil
    ) -> Future<URL, ServiceError> {
        guard let link = resource.link(rel) else { return .failure(Self.missing(rel, in: resource)) }
        return download(link, with: values, to: file, resumable: resumable, progress: progress)
    }

    /// The request that following `link` sends, without sending it: for logging, or to
    /// change it before ``Backend/send(_:)``.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` as ``follow(_:with:body:as:)`` fails.
    public func request(
        for link: Link, with values: [String: JSONValue] = [:], body: RequestBody? = nil
    ) throws(ServiceError) -> BackendRequest {
        try follower.request(for: link, values: values, body: body)
    }

    private static func missing<Entity>(_ rel: String, in resource: Resource<Entity>) -> ServiceError {
        let offered = resource.relations.isEmpty ? "no links" : resource.relations.joined(separator: ", ")
        return .invalidRequest("no \"\(rel)\" link to follow: the resource offers \(offered)")
    }
}
