import Depot
import Foundation
import JSONServerEngine

/// What a route handler of ``InMemoryBackend/route(_:_:handler:)`` receives: the
/// request, its path parameters, query and JSON body, and read/write access to the
/// backend's store.
///
/// The handler runs while the backend holds its lock, so everything it does through
/// the context is one atomic step with respect to other requests: read a record,
/// decide, write, answer. The store operations take the same (recursive) lock, so
/// they never deadlock, and they stay safe even if a context escapes its handler.
/// Store errors are thrown as the ``Depot/ServiceError`` the network would give for the
/// same HTTP failure (`.notFound`, `.conflict`, `.clientError` for a 400), so a
/// handler can simply `try` and let them reach the caller.
///
/// A movie-rental endpoint whose links depend on state:
///
/// ```swift
/// let backend = try InMemoryBackend(database: Data(#"{"movies": [{"id": 1, "title": "Alien", "stock": 1}]}"#.utf8))
///
/// backend.route(.get, "movies/:id") { context in
///     guard let id = context.parameters["id"], var movie = context.record(in: "movies", id: id)?.objectValue
///     else { return .error(404, "no such movie") }
///     var links: [String: JSONValue] = ["self": ["href": .string(context.url("movies", id))]]
///     if movie["stock"]?.intValue ?? 0 > 0 {
///         links["rent"] = ["href": .string(context.url("movies", id, "rentals")), "method": "POST"]
///     }
///     movie["_links"] = .object(links)
///     return .json(.object(movie))
/// }
///
/// backend.route(.post, "movies/:id/rentals") { context in
///     guard let id = context.parameters["id"], let movie = context.record(in: "movies", id: id) else {
///         return .error(404, "no such movie")
///     }
///     let stock = movie["stock"]?.intValue ?? 0
///     guard stock > 0 else { return .error(409, "out of stock") }
///     try context.patch(in: "movies", id: id, with: ["stock": .int(stock - 1)])
///     let rental = try context.insert(["movieId": movie["id"] ?? .null], into: "rentals")
///     return .json(rental, status: 201)
/// }
/// ```
///
/// Unit tests use routes to stub endpoints the same way:
/// `backend.route(.get, "health") { _ in .json(["status": "ok"]) }`.
public struct RouteContext: Sendable {
    /// The request as the backend received it.
    public let request: BackendRequest
    /// The values of the pattern's `:name` parameters, percent-decoded: for the
    /// pattern `movies/:id` and the path `movies/a%2Fb`, `parameters["id"]` is `"a/b"`.
    public let parameters: [String: String]
    /// The path's segments relative to the backend's base, percent-decoded.
    public let segments: [String]
    /// The query items: those of a query string inside the path first, then the
    /// request's own. `query["weight"]` is the first value of `weight` (`""` for a bare
    /// `?weight`), `query.values(for: "tag")` every value of `tag`, in order.
    public let query: [URLQueryItem]
    /// The body as json-server's body parsers read it, by `Content-Type`: JSON (also
    /// a body without `Content-Type`, sent as JSON), or a URL-encoded form as an
    /// object of strings (`tag=a&tag=b` is `{"tag": ["a", "b"]}`); `nil` when it is
    /// empty, malformed JSON, or of another type (the raw bytes are in `request.body`).
    public let body: JSONValue?
    /// The backend's base URL when the request arrived, for absolute links.
    public let baseURL: URL

    private let store: InMemoryStore
    private let parsedBody: ParsedBody

    init(
        store: InMemoryStore, request: BackendRequest, target: RequestTarget, parameters: [String: String],
        body: ParsedBody, baseURL: URL
    ) {
        self.store = store
        self.request = request
        self.parameters = parameters
        self.segments = target.segments
        self.query = target.query
        self.parsedBody = body
        self.body = body.value
        self.baseURL = baseURL
    }

    // MARK: - The request

    /// The former spelling of `query[name]`.
    @available(*, deprecated, message: "Use query[name]")
    public func queryValue(_ name: String) -> String? {
        query[name]
    }

    /// The former spelling of `query.values(for: name)`.
    @available(*, deprecated, message: "Use query.values(for:)")
    public func queryValues(_ name: String) -> [String] {
        query.values(for: name)
    }

    /// The body decoded as `T`.
    ///
    /// A URL-encoded form decodes as the object ``body`` gives (every value a
    /// string); any other body as JSON, whatever its `Content-Type`.
    ///
    /// - Throws: ``Depot/ServiceError/clientError(_:)`` with status 400, as a server would
    ///   answer, when the body is missing, not JSON, or not a `T`.
    public func decodeBody<T: Decodable>(as type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder())
        throws(ServiceError) -> T
    {
        guard let data = request.body, !data.isEmpty else {
            throw failure(.badRequest("the request has no body"))
        }
        var json = data
        switch parsedBody {
        case .malformed(let reason): throw failure(.badRequest("the body is not valid JSON: \(reason)"))
        case .form(let members): json = JSONWriter.encode(object: members)
        case .none, .json, .unparsed: break
        }
        do {
            return try decoder.decodeChecked(T.self, from: json)
        } catch {
            throw failure(.badRequest("the body is not a valid \(T.self): \(error)"))
        }
    }

    /// The absolute URL of a path under the backend's base, each segment
    /// percent-encoded: `context.url("movies", "1")` is `http://localhost/movies/1`.
    public func url(_ segments: String..., query: [URLQueryItem] = []) -> String {
        BaseLocation(baseURL).url(
            PathSegment.join(segments), query: QueryString.encode(keepingCommas: true, query))
    }

    // MARK: - Collections

    /// The names of the collections and singular objects, in the order they were
    /// seeded or created.
    public var resourceNames: [String] {
        store.withDatabase { $0.names }
    }

    /// Every record of `collection`, in order; empty when there is no such collection.
    public func records(in collection: String) -> [JSONValue] {
        store.withDatabase { $0.collection(collection)?.records.map(\.value) ?? [] }
    }

    /// The record of `collection` whose id has the text of `id` (`"1"` finds `1`),
    /// or `nil`. O(1).
    public func record(in collection: String, id: some CustomStringConvertible) -> JSONValue? {
        let text = id.description
        return store.withDatabase { $0.collection(collection)?.record(id: text)?.value }
    }

    /// Adds `record` (a JSON object) to `collection` as `POST /collection` does (a
    /// missing id becomes the largest integer id plus one, a given id is kept), and
    /// unlike it creates the collection when there is none, so a handler can start
    /// one (`POST /nothing` over HTTP is 404, as json-server answers).
    ///
    /// - Returns: the stored record, id included.
    /// - Throws: ``Depot/ServiceError/conflict(_:)`` for an id that is taken,
    ///   ``Depot/ServiceError/clientError(_:)`` (400) when `record` is not an object.
    @discardableResult
    public func insert(_ record: JSONValue, into collection: String) throws(ServiceError) -> JSONValue {
        let members = try object(record)
        return try write { database throws(Refusal) in try database.create(in: collection, members: members) }
    }

    /// Replaces the record with id `id` by `record` (its id is kept), as `PUT` does.
    ///
    /// - Throws: ``Depot/ServiceError/notFound(_:)`` when there is no such record,
    ///   ``Depot/ServiceError/clientError(_:)`` (400) when `record` is not an object.
    @discardableResult
    public func replace(in collection: String, id: some CustomStringConvertible, with record: JSONValue)
        throws(ServiceError) -> JSONValue
    {
        let members = try object(record)
        let text = id.description
        return try write { database throws(Refusal) in
            try database.replace(in: collection, id: text, members: members)
        }
    }

    /// Merges `changes` (a JSON object) into the record with id `id`, as `PATCH` does.
    ///
    /// - Throws: ``Depot/ServiceError/notFound(_:)`` when there is no such record,
    ///   ``Depot/ServiceError/clientError(_:)`` (400) when `changes` is not an object.
    @discardableResult
    public func patch(in collection: String, id: some CustomStringConvertible, with changes: JSONValue)
        throws(ServiceError) -> JSONValue
    {
        let members = try object(changes)
        let text = id.description
        return try write { database throws(Refusal) in
            try database.patch(in: collection, id: text, changes: members)
        }
    }

    /// Deletes the record with id `id`, as `DELETE` does: then, as json-server does, every
    /// record of the database whose foreign key (`postId`) points at a record that does not
    /// exist goes too, such as the deleted post's comments (one sweep, also when there is
    /// no such record).
    ///
    /// - Returns: the deleted record.
    /// - Throws: ``Depot/ServiceError/notFound(_:)`` when there is no such record.
    @discardableResult
    public func delete(from collection: String, id: some CustomStringConvertible) throws(ServiceError)
        -> JSONValue
    {
        let text = id.description
        return try write { database throws(Refusal) in try database.delete(in: collection, id: text) }
    }

    // MARK: - Singular objects

    /// The singular object `name` (such as `profile`), or `nil`.
    public func object(_ name: String) -> JSONValue? {
        store.withDatabase { $0.object(name)?.value }
    }

    /// Sets the singular object `name` to `value` (a JSON object), creating it if needed.
    ///
    /// - Throws: ``Depot/ServiceError/clientError(_:)`` (400) when `value` is not an object
    ///   or `name` is a collection.
    @discardableResult
    public func setObject(_ value: JSONValue, for name: String) throws(ServiceError) -> JSONValue {
        let members = try object(value)
        return try write { database throws(Refusal) in try database.setObject(name, members: members) }
    }

    // MARK: - Default behaviour and coding

    /// What the backend would answer this request with if no route matched: its
    /// json-server behaviour, any status, unclassified. A handler can decorate it
    /// (add headers or links) or fall back to it.
    public func jsonServerResponse() -> BackendResponse {
        jsonServerResponse(for: request)
    }

    /// What the backend's json-server behaviour answers `request` with (no routes,
    /// no injected faults), any status, unclassified.
    public func jsonServerResponse(for request: BackendRequest) -> BackendResponse {
        store.jsonServerResponse(request)
    }

    /// `value` as a ``Depot/JSONValue``, for storing typed values.
    ///
    /// - Throws: ``Depot/ServiceError/invalidRequest(_:)`` when it cannot be encoded.
    public func encode(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws(ServiceError)
        -> JSONValue
    {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw .invalidRequest("could not encode \(type(of: value)) as JSON: \(error)")
        }
        switch JSONParser.parse(data, depth: JSONParser.recordDepth) {
        case .success(let json): return json
        case .failure(let error):
            throw .invalidRequest("the encoder wrote invalid JSON: \(error.description)")
        }
    }

    /// A stored ``Depot/JSONValue`` decoded as `T`, for reading typed values.
    ///
    /// - Throws: ``Depot/ServiceError/decoding(_:)`` when it is not a `T`.
    public func decode<T: Decodable>(
        _ value: JSONValue, as type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()
    )
        throws(ServiceError) -> T
    {
        do {
            return try decoder.decodeChecked(T.self, from: JSONWriter.encode(value))
        } catch {
            throw .decoding(DecodingFailure(type: "\(T.self)", codingPath: "", description: "\(error)"))
        }
    }

    // MARK: - Internals

    private func object(_ value: JSONValue) throws(ServiceError) -> [String: JSONValue] {
        guard case .object(let members) = value else {
            throw failure(.badRequest("a record must be a JSON object, not a \(JSONParser.kind(of: value))"))
        }
        return members
    }

    private func write(_ body: (Database) throws(Refusal) -> StoredRecord) throws(ServiceError) -> JSONValue {
        do throws(Refusal) {
            return try store.withDatabase(body).value
        } catch {
            throw failure(error)
        }
    }

    /// `refusal` as the error the network would give for it.
    private func failure(_ refusal: Refusal) -> ServiceError {
        ServiceError(response: refusal.response, for: request) ?? .invalidRequest(refusal.message)
    }
}
