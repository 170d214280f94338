import Foundation

/// A request as a ``Backend`` receives it: method, path, query, headers and body.
///
/// `path` is relative to the backend's base (`"users/1"`, percent-encoded), or an
/// absolute URL of the backend's own origin, as a server's `Link` or `next` value gives
/// it. Build paths from what they address with ``init(method:resource:query:headers:body:)``
/// (or from segments) so that an id such as `"../admin"` stays one segment, and the layers
/// below read what the request means from ``resource``.
public struct BackendRequest: Sendable, Hashable {
    /// The fields, in one box that copies share until one of them changes: a request is
    /// copied by every step that passes it on (a middleware's closure, a backend's log), and
    /// copying one reference costs less than copying a dozen. Safe to send: a box is never
    /// changed while another request holds it.
    nonisolated(unsafe) private var storage: Storage

    /// The HTTP method.
    public var method: HTTPMethod {
        get { storage.read { $0.method } }
        unsafeMutableAddress { address(of: \.method) }
    }
    /// The percent-encoded path relative to the backend's base, or an absolute URL.
    public var path: String {
        get { storage.read { $0.encodedPath } }
        set {
            let fields = unique
            fields.pointee.encodedPath = newValue
            fields.pointee.addressed = Carried(nil)
        }
    }
    /// What the request addresses: as its maker wrote it (a repository knows the collection,
    /// the record's id and the parent scope: ``init(method:resource:query:headers:body:)``), or
    /// read from ``path`` by ``RequestResource/init(path:)`` when it was made from a bare path.
    /// Setting ``path`` forgets what was written.
    public var resource: RequestResource {
        addressed.value?.resource ?? RequestResource(path: encodedPath)
    }
    /// The query items, in order; names may repeat (`id=1&id=2`).
    public var query: [URLQueryItem] {
        get { storage.read { $0.query } }
        unsafeMutableAddress { address(of: \.query) }
    }
    /// The header fields.
    public var headers: HTTPHeaders {
        get { storage.read { $0.headers } }
        unsafeMutableAddress { address(of: \.headers) }
    }
    /// The body, if any.
    public var body: Data? {
        get { storage.read { $0.body } }
        unsafeMutableAddress { address(of: \.body) }
    }
    /// A file whose bytes are the body, streamed from disk instead of held in memory;
    /// `nil` for ``body`` (a request has one or the other).
    ///
    /// The file is read each time the request is sent, so a retry sends it again from
    /// the start. ``RequestBody/file(_:contentType:)`` and a ``MultipartForm`` with file
    /// parts set it for you.
    public var bodyFile: URL? {
        get { storage.read { $0.bodyFile } }
        set { unique.pointee.bodyFile = newValue }
    }
    /// Where the body of a successful answer goes: a file on disk instead of
    /// ``BackendResponse/body``; `nil` (the default) keeps it in memory.
    ///
    /// The answer is streamed to a partial file beside the destination and moved into
    /// place only when it is complete; an error status leaves no file (its body stays in
    /// memory for the ``ServiceError``). See ``DownloadDestination``.
    public var destination: DownloadDestination? {
        get { storage.read { $0.destination } }
        set { unique.pointee.destination = newValue }
    }
    /// Told how many bytes of the body went out and of the answer came in, while they
    /// move: see ``ProgressHandler``.
    public var progress: ProgressHandler? {
        get { storage.read { $0.progress } }
        set { unique.pointee.progress = newValue }
    }
    /// Whether a retry middleware may send this request again after a failure.
    ///
    /// Defaults to the method's ``HTTPMethod/isIdempotent``; set it to `true` to opt
    /// a `POST` in (for example one that carries an idempotency key).
    public var isRetryable: Bool {
        get { storage.read { $0.retryable } ?? method.isIdempotent }
        set { unique.pointee.retryable = newValue }
    }
    /// What the caller wants to learn back (the receipt of where the answer came from, a
    /// watch's record of its reads): taken from the call the request is made in, and passed
    /// on by every middleware that passes the request on. Not part of the request's equality.
    public var context: RequestContext {
        get { storage.read { $0.carried.value } }
        unsafeMutableAddress { address(of: \.carried.value) }
    }
    /// The path as given or as built from segments.
    private var encodedPath: String { storage.read { $0.encodedPath } }
    /// The resource the request addresses, while its maker's word holds.
    private var addressed: Carried<Addressed?> { storage.read { $0.addressed } }

    /// The fields, in a box of this request's own (copied first when another request shares
    /// it), to be changed in place while this request holds the box.
    ///
    /// A pointer, and the fields changed in place through addresses into the box, not
    /// `_modify` accessors: each such accessor, a coroutine, allocated its frame on the heap
    /// for every change made from another module (two for `request.progress = …`). The box
    /// lives as long as the request that changes it, which holds it alone while it does, and
    /// its fields stay at the address `ManagedBuffer` lends (a class instance does not move),
    /// which is why that address may outlive the closure it is lent to. The
    /// fields a caller replaces rather than changes (`progress`, `bodyFile`, `destination`)
    /// have plain setters.
    private var unique: UnsafeMutablePointer<Fields> {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = .make(storage.read { $0 }) }
            return storage.withUnsafeMutablePointerToHeader { $0 }
        }
    }

    /// The address of `field` in a box of this request's own (see ``unique``): a stored
    /// property's, worked out from the fields' layout.
    @inline(__always)
    private mutating func address<Field>(of field: WritableKeyPath<Fields, Field>) -> UnsafeMutablePointer<
        Field
    > {
        guard let address = unique.pointer(to: field) else {
            preconditionFailure("\(field) is not a stored property of the fields")
        }
        return address
    }

    /// The decoded segments of the resource ``path`` was built from, so that a backend reads
    /// them without parsing the path back; `nil` once the path was set as a string, or when a
    /// segment is empty (the path then means what a server makes of it).
    package var segments: [String]? { addressed.value.flatMap { $0.isPath ? $0.resource.segments : nil } }

    /// Creates a request for an already encoded path.
    public init(
        method: HTTPMethod = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HTTPHeaders = [:],
        body: Data? = nil
    ) {
        storage = .make(
            Fields(method: method, encodedPath: path, query: query, headers: headers, body: body))
    }

    /// Creates a request whose path joins `segments`, each percent-encoded on its own, read as
    /// a resource by json-server's convention (``RequestResource/init(segments:)``).
    ///
    /// `["users", "a/b?c"]` becomes `users/a%2Fb%3Fc`: no segment can add a level,
    /// start a query or leave the collection.
    public init(
        method: HTTPMethod = .get,
        segments: [String],
        query: [URLQueryItem] = [],
        headers: HTTPHeaders = [:],
        body: Data? = nil
    ) {
        self.init(
            method: method, resource: RequestResource(segments: segments), query: query, headers: headers,
            body: body)
    }

    /// Creates a request for `resource`: its path joins the resource's segments, each
    /// percent-encoded on its own, and the layers below read the resource as written.
    public init(
        method: HTTPMethod = .get,
        resource: RequestResource,
        query: [URLQueryItem] = [],
        headers: HTTPHeaders = [:],
        body: Data? = nil
    ) {
        self.init(
            method: method, path: PathSegment.join(resource.segments), query: query, headers: headers,
            body: body)
        if !resource.segments.contains(where: \.isEmpty) {
            unique.pointee.addressed = Carried(Addressed(resource: resource, isPath: true))
        }
    }

    /// A request for `path` (a server's URL: a next page's) that addresses `resource`, which
    /// its maker knows: the layers below read the resource, the backend sends the path.
    package init(
        method: HTTPMethod = .get, path: String, query: [URLQueryItem] = [],
        addressing resource: RequestResource
    ) {
        self.init(method: method, path: path, query: query)
        unique.pointee.addressed = Carried(Addressed(resource: resource, isPath: false))
    }

    /// Says the request addresses `resource` (kept by a store with the request, read back),
    /// its ``path`` left as it is: the layers below read `resource`, and a backend reads its
    /// segments when the path is theirs.
    package mutating func address(_ resource: RequestResource) {
        guard !resource.segments.contains(where: \.isEmpty) else { return }
        unique.pointee.addressed = Carried(
            Addressed(resource: resource, isPath: encodedPath == PathSegment.join(resource.segments)))
    }

    /// The request with `path` and `query` in place of its own, the rest kept: the resource
    /// its maker wrote (and whether the new path is that resource's), its context and body.
    /// For a backend's log of what it received, which names a request relative to itself.
    package func readdressed(path: String, query: [URLQueryItem]) -> BackendRequest {
        var copy = self
        let fields = copy.unique
        fields.pointee.encodedPath = path
        fields.pointee.query = query
        if let written = addressed.value {
            fields.pointee.addressed = Carried(
                Addressed(
                    resource: written.resource,
                    isPath: !written.resource.segments.contains(where: \.isEmpty)
                        && path == PathSegment.join(written.resource.segments)))
        }
        return copy
    }

    /// Whether ``path`` is the path of ``resource``: built from it, or a bare path that
    /// reads as exactly it. A layer that changes the resource (a local id rewritten) may then
    /// change the path with it.
    package var pathIsResource: Bool {
        if let addressed = addressed.value { return addressed.isPath }
        return encodedPath == resource.path
    }

    /// Whether the body or the answer moves through a file, or progress is observed:
    /// what a backend that sends everything from memory must handle apart.
    public var isTransfer: Bool {
        bodyFile != nil || destination != nil || progress != nil
    }

    /// Whether the request carries validators (`If-None-Match`, `If-Modified-Since`),
    /// so that a `304 Not Modified` answer counts as success.
    public var isConditional: Bool {
        headers.contains("If-None-Match") || headers.contains("If-Modified-Since")
    }
}

extension BackendRequest {
    /// The `Content-Type` of a body whose request names none: JSON. ``URLSessionBackend``
    /// sends it so, and `InMemoryBackend` reads such a body so.
    static let defaultBodyContentType = "application/json"
    /// The `Content-Type` of a ``bodyFile`` whose request names none: opaque bytes.
    static let defaultFileContentType = "application/octet-stream"

    /// The `Content-Type` a body goes out with when the request names none.
    package var defaultContentType: String {
        bodyFile == nil ? Self.defaultBodyContentType : Self.defaultFileContentType
    }

    /// The media type of the body as it goes out: the `Content-Type` field's type and
    /// subtype, lowercased, without parameters (`application/json` for
    /// `Application/JSON; charset=utf-8`), or ``defaultContentType`` when the request
    /// names none; `nil` without a body.
    package var bodyMediaType: String? {
        guard bodyFile != nil || body?.isEmpty == false else { return nil }
        guard let field = headers["Content-Type"] else { return defaultContentType }
        let type = field.prefix { $0 != ";" }
        return type.trimmingHTTPWhitespace().lowercased()
    }
}

extension BackendRequest {
    /// Requests are equal when their fields are, the resource and the context aside.
    public static func == (lhs: BackendRequest, rhs: BackendRequest) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.read { $0 } == rhs.storage.read { $0 }
    }

    /// Hashes the fields that `==` compares: the resource and the context aside.
    public func hash(into hasher: inout Hasher) {
        storage.read { $0 }.hash(into: &hasher)
    }

    /// What a request holds.
    fileprivate struct Fields: Sendable, Hashable {
        var method: HTTPMethod
        var encodedPath: String
        var query: [URLQueryItem]
        var headers: HTTPHeaders
        var body: Data?
        var bodyFile: URL? = nil
        var destination: DownloadDestination? = nil
        var progress: ProgressHandler? = nil
        var retryable: Bool? = nil
        /// The resource the request addresses, while its maker's word holds, and whether
        /// the path was built from it (else it is a server's URL for the same resource: a
        /// next page's).
        var addressed = Carried<Addressed?>(nil)
        /// The context, outside the request's equality.
        var carried = Carried(RequestContext.entered)
    }

    /// The box of a request's fields (its header; it has no elements). Changed only through
    /// ``unique``, while no other request holds it.
    fileprivate final class Storage: ManagedBuffer<Fields, Void> {
        /// A box holding `fields`.
        static func make(_ fields: Fields) -> Storage {
            unsafeDowncast(create(minimumCapacity: 0) { _ in fields }, to: Storage.self)
        }

        /// What `field` reads of the fields: through a pointer, which (unlike the `header`
        /// property of a class) needs no run-time exclusivity check, and copies that field only.
        @inline(__always)
        func read<Value>(_ field: (Fields) -> Value) -> Value {
            withUnsafeMutablePointerToHeader { field($0.pointee) }
        }
    }
}

extension BackendRequest: CustomReflectable {
    /// The request's fields, as `print`, `dump` and a debugger show a struct's: its box
    /// would show as one opaque member.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method, "path": path, "query": query, "headers": headers, "body": body as Any,
                "bodyFile": bodyFile as Any, "destination": destination as Any, "progress": progress as Any,
                "isRetryable": isRetryable, "resource": resource, "context": context,
            ], displayStyle: .struct)
    }
}

/// The resource a request's maker said it addresses.
private struct Addressed: Sendable {
    var resource: RequestResource
    /// Whether the request's path was built from the resource's segments.
    var isPath: Bool
}

/// A value a request carries beside what it is (its context, the resource its path was built
/// from): never part of its equality or hash, so two requests with the same path are equal
/// however they were made.
private struct Carried<Value: Sendable>: Sendable, Hashable {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }

    static func == (lhs: Carried, rhs: Carried) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// Percent-encoding of single path segments (RFC 3986 §3.3).
public enum PathSegment {
    /// Encodes `segment` so that it stays exactly one path segment.
    ///
    /// Everything but unreserved characters is percent-encoded, and the dot
    /// segments `.` and `..` are encoded too, since a URL parser would resolve them.
    public static func encode(_ segment: String) -> String {
        if segment == "." || segment == ".." {
            return String(repeating: "%2E", count: segment.count)
        }
        // Fast path: ids such as `42` or `post-1` need no encoding (Foundation's
        // percent-encoding costs about a microsecond per call on Linux).
        if segment.utf8.allSatisfy(isUnreserved) { return segment }
        return segment.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// Whether `byte` is an RFC 3986 unreserved character.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Refuses an empty segment (an empty id, say) with
    /// ``ServiceError/invalidRequest(_:)``: `["users", ""]` would go out as `users/`, which
    /// a server reads as the whole collection.
    static func checkNoneEmpty(_ segments: [String]) throws(ServiceError) {
        if let empty = segments.firstIndex(where: \.isEmpty) {
            throw .invalidRequest(
                "path segment \(empty + 1) of \(segments.count) is empty (an empty id or name?): "
                    + "/\(join(segments).prefix(200))")
        }
    }

    /// Encodes each segment and joins them with `/`.
    public static func join(_ segments: [String]) -> String {
        // Usually every segment is plain (`photos`, `42`): the path is then written in one
        // pass into a string of its final size.
        var length = max(segments.count - 1, 0)
        for segment in segments {
            guard isPlain(segment) else { return joinEncoding(segments) }
            length += segment.utf8.count
        }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var count = 0
            for (offset, segment) in segments.enumerated() {
                if offset > 0 {
                    buffer[count] = UInt8(ascii: "/")
                    count += 1
                }
                for byte in segment.utf8 {
                    buffer[count] = byte
                    count += 1
                }
            }
            return count
        }
    }

    /// Whether `segment` stands for itself in a path: unreserved characters only, and not a
    /// dot segment.
    private static func isPlain(_ segment: String) -> Bool {
        segment != "." && segment != ".." && segment.utf8.allSatisfy(isUnreserved)
    }

    /// ``join(_:)`` for segments of which some need encoding.
    private static func joinEncoding(_ segments: [String]) -> String {
        var path = ""
        for (offset, segment) in segments.enumerated() {
            if offset > 0 { path.append("/") }
            path.append(encode(segment))
        }
        return path
    }

    /// Decodes a percent-encoded segment, or returns it unchanged when it is malformed.
    public static func decode(_ segment: String) -> String {
        // Most segments hold no escape: Foundation's decoding, a round trip through an
        // `NSString` on Linux, is skipped for them.
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return segment }
        return segment.removingPercentEncoding ?? segment
    }

    /// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
