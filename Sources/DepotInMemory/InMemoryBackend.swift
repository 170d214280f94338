import Depot
import Foundation
import JSONServerEngine

/// A ``Depot/Backend`` that keeps collections in memory and answers as json-server 0.17
/// (the server behind JSONPlaceholder) does, so a repository cannot tell it from
/// the network: for unit tests, previews and offline demos.
///
/// ```swift
/// let backend = try InMemoryBackend(database: Data(#"{"posts": [{"id": 1, "title": "Hi"}], "profile": {"name": "Ada"}}"#.utf8))
/// let posts = PostRepository(backend: backend)
/// let post = try await posts.findByID(1).value
/// #expect(backend.requests.last?.path == "posts/1")
/// ```
///
/// What it answers:
/// - `GET /name`: filters `field=value` (compared with the field's text, so
///   `userId=1` matches `1`; repeated for OR; dotted paths such as `author.name`),
///   `field_gte`, `field_lte`, `field_ne`, `field_like` (a case-insensitive regular
///   expression), `q` (full text), `_sort=a,b&_order=asc,desc`, `_page`/`_limit`
///   (limit 10 by default) with `X-Total-Count` and an RFC 8288 `Link` header
///   (`first`, `prev`, `next`, `last`), `_start`/`_end` and `_start`/`_limit` with
///   `X-Total-Count`, `_embed=children` and `_expand=parent`. As in json-server, a
///   plain filter on a field that no record has is ignored. Records holding `null`
///   in a sort field, then those lacking it, sort after every value ascending and
///   before every value descending (lodash's `orderBy`).
/// - `GET /name/:id` (O(1), ids compared by their text), `POST /name` (201 with the
///   stored record and `Location`; a missing id becomes the largest integer id plus
///   one, 1 in an empty collection, or a random string when the ids are strings; a
///   given id is kept; a taken id is 409), `PUT` (replace, id kept), `PATCH`
///   (shallow merge, id kept), `DELETE` (200 with `{}`; json-server also deletes the
///   records whose foreign key pointed at it, e.g. a post's comments).
/// - `GET`/`POST /users/1/posts` (through the `userId` foreign key; `POST` sets it),
///   `GET`/`PUT`/`PATCH`/`DELETE /users/1/posts/5` (post 5 when `/users/1/posts`
///   lists it, else 404; json-server answers 404 to every such path), singular
///   objects (`GET`/`PUT`/`PATCH`/`POST /profile`), and `GET /db` (everything).
/// - `HEAD` answers like `GET` without a body; `OPTIONS` answers 204 with `Allow`.
/// - A successful `GET` carries a weak `ETag` computed from its body, and a `GET` whose
///   `If-None-Match` matches it is answered `304` without a body, as Express does for
///   json-server (so ``Depot/CacheMiddleware`` works in process too).
/// - Bodies are read by `Content-Type`, as json-server's body parsers read them:
///   `application/json` (also a body without `Content-Type`, which
///   ``Depot/URLSessionBackend`` sends as JSON), and `application/x-www-form-urlencoded`
///   (``Depot/RequestBody/form(_:)``), whose values are stored as strings
///   (`title=Hi&userId=3` stores `"userId": "3"`; a repeated name is an array). A
///   body of any other type is not read at all: json-server sees `{}`, so a `POST`
///   stores only an id and a `PATCH` changes nothing.
/// - Only the names it holds are routed, as json-server routes only the members of
///   its db.json: any request for an unknown name is 404, `POST` included (seed a
///   collection, even an empty one, to create records in it).
///
/// A request that ``Depot/BackendRequest/validate()`` refuses (a header with CR, LF or NUL,
/// a `GET` with a body) fails with ``Depot/ServiceError/invalidRequest(_:)`` before anything
/// is answered, exactly as ``Depot/URLSessionBackend`` refuses to send it.
///
/// Errors are answered as the network would answer them and classified by
/// ``Depot/ServiceError/init(response:for:)``. As json-server, every 404 (an unknown name,
/// id or path, or a method the resource does not serve, such as `PUT /posts`) has the
/// body `{}`, so ``Depot/ServiceError/message`` is `nil` as it is in production. Where Depot
/// answers better than json-server's 500, a body that is not JSON (or not an object)
/// is 400 and a taken id is 409, with `{"error": "…"}`, which
/// ``Depot/ServiceError/message`` reads.
///
/// Paths are relative to ``baseURL`` (`"posts"`, `"/posts"`, `"posts/1?_embed=comments"`),
/// or absolute URLs of its origin such as a `Link` header gives. Each segment is
/// percent-decoded after the path is split on `/`, so an id such as `a/b?c` (sent as
/// `a%2Fb%3Fc`) is one id and never reaches another collection.
///
/// Every request, failed or not, is logged in ``requests``, relative to ``baseURL``. ``failNext(_:status:headers:body:)``
/// (a status), ``failNext(_:with:)`` and ``failAll(with:)`` (no response: the network taken
/// away, until ``stopFailing()``) and ``latency`` inject faults; ``route(_:_:handler:)`` stubs endpoints or serves
/// state-dependent ones. The backend is thread-safe.
///
/// With no ``latency`` (the default), a request is answered synchronously on the
/// thread that starts it. Records keep their encoded JSON, and a listing splices
/// those bytes, so answering costs far less than decoding the answer.
public final class InMemoryBackend: Backend, Sendable {
    let store: InMemoryStore

    /// The default ``baseURL``: `http://localhost/`.
    public static let defaultBaseURL = URL(string: "http://localhost/") ?? URL(fileURLWithPath: "/")

    /// An empty backend, as json-server with `{}` for a database: every request is
    /// 404, `POST` included, until a route handler inserts records
    /// (``RouteContext/insert(_:into:)``). A backend that tests create records in
    /// starts with its collections: ``init(collections:)``.
    public init() {
        store = InMemoryStore(database: Database(), baseURL: Self.defaultBaseURL)
    }

    /// A backend with the collections `names`, each empty, as a db.json of
    /// `{"posts": [], "users": []}` gives: a `POST` creates the first record.
    ///
    /// ```swift
    /// let backend = InMemoryBackend(collections: ["posts", "users"])
    /// let post = try await PostRepository(backend: backend).create(draft).value   // id 1
    /// ```
    public convenience init(collections names: [String]) {
        self.init(storage: Database(emptyCollections: names))
    }

    /// A backend seeded with a db.json-shaped document: an object whose members are
    /// arrays of objects (collections) or objects (singular resources).
    ///
    /// ```swift
    /// let backend = try InMemoryBackend(database: Data(#"{"users": [{"id": 1}], "posts": [], "profile": {"name": "Ada"}}"#.utf8))
    /// ```
    ///
    /// Records keep the bytes they were given, so they are answered without being
    /// encoded again. What json-server would read differently is repaired first, and
    /// that record written anew: invalid UTF-8 becomes U+FFFD (json-server reads its
    /// file as UTF-8), a number past `Double`'s range becomes `null` (JavaScript's
    /// `Infinity`, written as `null`), an underflowing one `0`, and a lone surrogate
    /// escape such as `\ud800` U+FFFD (json-server would send it back, and Foundation's
    /// decoder refuses it). So every answer is JSON that `JSONDecoder` reads.
    ///
    /// - Throws: ``Depot/ServiceError/decoding(_:)`` when `database` is not JSON (the
    ///   description names the byte offset), nests deeper than 512 arrays or objects
    ///   (counted from the document's root: no client could decode it), or a member is
    ///   neither an array of objects nor an object (the coding path names it).
    public convenience init(database: Data) throws(ServiceError) {
        self.init(storage: try Database(json: database))
    }

    /// A backend seeded with Encodable values, encoded by `encoder`: a struct such as
    /// `struct Seed: Encodable { var users: [User]; var posts: [Post] }`, or a
    /// dictionary such as `["posts": posts]`.
    ///
    /// - Throws: ``Depot/ServiceError/invalidRequest(_:)`` when `seed` cannot be encoded;
    ///   ``Depot/ServiceError/decoding(_:)`` when it does not encode to a db.json shape.
    public convenience init<Seed: Encodable>(seed: Seed, encoder: JSONEncoder = JSONEncoder())
        throws(ServiceError)
    {
        let data: Data
        do {
            data = try encoder.encode(seed)
        } catch {
            throw .invalidRequest("could not encode the seed \(Seed.self) as JSON: \(error)")
        }
        try self.init(database: data)
    }

    init(storage: Database) {
        store = InMemoryStore(database: storage, baseURL: Self.defaultBaseURL)
    }

    /// The URL the backend pretends to live at (`http://localhost/` by default):
    /// `Location` and `Link` headers are absolute URLs under it, and absolute request
    /// paths of its origin are accepted.
    public var baseURL: URL {
        get { store.baseURL }
        set { store.baseURL = newValue }
    }

    /// How long each answer takes. `0` (the default) answers synchronously on the
    /// caller's thread; more answers after that delay on a background queue, and
    /// cancelling meanwhile completes at once with ``Depot/ServiceError/cancelled`` and
    /// leaves the store untouched.
    public var latency: TimeInterval {
        get { store.latency }
        set { store.latency = newValue }
    }

    /// Every request received, in order, failed ones included: a snapshot, for
    /// asserting what a repository sent (method, path, query, headers, body). The log
    /// grows until ``clearRequests()``.
    ///
    /// Requests are recorded relative to the backend, as the app addresses it. One whose
    /// path is an absolute URL under ``baseURL`` (a page followed through the `Link` header,
    /// `http://localhost/posts?_page=2&_limit=10`) is recorded with its path relative to the
    /// base (`posts`) and the URL's query items first in ``Depot/BackendRequest/query``, as a
    /// relative request has them: after three pages, `requests.map(\.path)` is
    /// `["posts", "posts", "posts"]`, and each page's request has page 1's shape. Its method,
    /// headers, body, ``Depot/BackendRequest/resource`` and ``Depot/BackendRequest/context`` are kept. A
    /// request for another origin, or outside the base, is recorded as it was sent, and so
    /// is any path the app wrote itself (`posts?_page=2`, `/posts`).
    public var requests: [BackendRequest] {
        store.requests
    }

    /// Forgets the requests received so far.
    public func clearRequests() {
        store.clearRequests()
    }

    /// Answers the next `count` requests with `status`, `headers` and `body` instead
    /// of serving them (they change nothing); then normal service resumes. The
    /// response is classified as usual, so `failNext(1, status: 503, headers:
    /// ["Retry-After": "2"])` is a ``Depot/ServiceError/serviceUnavailable(_:retryAfter:)``.
    /// Calling again queues more faults after those pending.
    public func failNext(_ count: Int, status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        store.failNext(count, .response(BackendResponse(status: status, headers: headers, body: body)))
    }

    /// Fails the next `count` requests with `error` and no response, as a network that is
    /// down does (they change nothing); then normal service resumes. Meant for transport
    /// errors: ``Depot/ServiceError/noConnection``, ``Depot/ServiceError/cannotConnect``,
    /// ``Depot/ServiceError/timedOut`` (which `DepotOffline` treats as offline, unlike any status).
    /// Like ``failNext(_:status:headers:body:)``, the requests are logged in ``requests``
    /// (they left the app; the network lost them), and calling again queues more faults
    /// after those pending.
    ///
    /// ```swift
    /// backend.failNext(2, with: .noConnection)
    /// ```
    public func failNext(_ count: Int, with error: ServiceError) {
        store.failNext(count, .transport(error))
    }

    /// Fails every request with `error` and no response until ``stopFailing()``: the
    /// network taken away, as in airplane mode. The requests are logged in ``requests``,
    /// as with ``failNext(_:with:)``. With a ``latency``, a request fails or is served as
    /// the backend stands when its answer is due.
    ///
    /// ```swift
    /// backend.failAll(with: .noConnection)
    /// // … reads served from the offline store, writes queued …
    /// backend.stopFailing()
    /// ```
    public func failAll(with error: ServiceError) {
        store.failAll(with: error)
    }

    /// Ends ``failAll(with:)`` and drops the faults ``failNext(_:with:)`` and
    /// ``failNext(_:status:headers:body:)`` left pending: the next request is served.
    public func stopFailing() {
        store.failAll(with: nil)
    }

    /// A snapshot of the records of `collection`, in order, for assertions; empty when
    /// there is no such collection.
    public func records(in collection: String) -> [JSONValue] {
        store.withDatabase { $0.collection(collection)?.records.map(\.value) ?? [] }
    }

    /// A snapshot of the singular object `name` (such as `profile`), or `nil`.
    public func object(_ name: String) -> JSONValue? {
        store.withDatabase { $0.object(name)?.value }
    }

    /// Answers requests for `pattern` with `handler` instead of the json-server
    /// behaviour.
    ///
    /// `pattern` is a path relative to ``baseURL`` whose `:name` segments are
    /// parameters: `"movies/:id"` or `"/movies/:id/rentals"`. Routes are tried in the
    /// order they were added, before the json-server behaviour; a `GET` route also
    /// answers `HEAD`. The handler runs under the backend's lock with a
    /// ``RouteContext`` that reads and writes the store atomically; what it returns is
    /// classified like any response (a 404 becomes ``Depot/ServiceError/notFound(_:)``).
    /// Since the lock is held, a handler must not wait for other threads that use this
    /// backend.
    ///
    /// The handler may `try` anything. A ``Depot/ServiceError`` it throws reaches the caller
    /// as is (so ``Depot/BackendResponse/json(encoding:status:headers:encoder:)`` failing to
    /// encode is ``Depot/ServiceError/invalidRequest(_:)``, and a store operation's
    /// `.notFound` stays `.notFound`); any other error is answered as a server answers
    /// a handler that throws: a `500` whose body `{"error": "…"}` names the route and
    /// the error, which reaches the caller as ``Depot/ServiceError/serverError(_:)`` with
    /// that ``Depot/ServiceError/message``. A closure written `{ _ throws(ServiceError) in … }`
    /// is accepted too.
    ///
    /// ```swift
    /// backend.route(.get, "posts/:id/summary") { context in
    ///     guard let post = context.record(in: "posts", id: context.parameters["id"] ?? "") else {
    ///         return .error(404, "no such post")
    ///     }
    ///     return .json(["title": post["title"] ?? .null])
    /// }
    /// backend.route(.get, "users/:id/todos") { context in
    ///     try .json(encoding: [Todo(id: 1, userId: 1, title: "Write tests", completed: false)])
    /// }
    /// ```
    public func route(
        _ method: HTTPMethod,
        _ pattern: String,
        handler: @escaping @Sendable (RouteContext) throws -> BackendResponse
    ) {
        let description = "\(method.rawValue) \(pattern)"
        store.add(
            Route(method: method, pattern: RoutePattern(pattern)) { context throws(ServiceError) in
                do {
                    return try handler(context)
                } catch let error as ServiceError {
                    throw error
                } catch {
                    return .error(500, "the route \(description) threw \(error)")
                }
            })
    }

    /// Returns a future that answers `request` each time it starts (see the type's
    /// documentation for what it answers).
    public func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        if request.isTransfer { return InMemoryTransfer(backend: self).send(request) }
        let store = self.store
        return Future { completion in
            let body = ParsedBody(request)
            switch store.receive(request, body: body) {
            case .answered(let result):
                completion(result)
                return NotCancellable()
            case .delayed(let delay):
                let latch = CompletionLatch()
                let token = CancellationToken()
                token.onCancel {
                    if latch.claim() { completion(.failure(.cancelled)) }
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                    if latch.claim() {
                        completion(store.answer(request, body: body))
                    }
                }
                return token
            }
        }
    }
}

/// Lets exactly one of a delayed answer (or a transfer's end) and a cancellation complete a
/// request.
final class CompletionLatch: Sendable {
    private let claimed = Locked(false)

    /// `true` for the first caller only.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
