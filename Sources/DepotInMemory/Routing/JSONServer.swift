import Depot
import Foundation
import JSONServerEngine

/// The body of a request, parsed once before the store is locked, by its
/// `Content-Type` as json-server 0.17's body parsers read it
/// (`bodyParser.json()` and `bodyParser.urlencoded({ extended: false })`).
enum ParsedBody: Sendable {
    /// No body, or an empty one.
    case none
    /// An `application/json` body (also a body without `Content-Type`, which
    /// ``Depot/URLSessionBackend`` sends as `application/json`).
    case json(JSONValue)
    /// An `application/x-www-form-urlencoded` body: every value a string, a repeated
    /// name an array of strings, as Node's `querystring` reads it.
    case form([String: JSONValue])
    /// A JSON body that does not parse, with the parser's explanation.
    case malformed(String)
    /// A body of a type neither parser reads (`text/plain`, `multipart/form-data`,
    /// `application/merge-patch+json`): json-server sees `{}`.
    case unparsed

    /// Parses the body of `request`.
    init(_ request: BackendRequest) {
        guard let type = request.bodyMediaType, let data = request.body else {
            self = .none
            return
        }
        switch type {
        case "application/json":
            switch JSONParser.parse(data, depth: JSONParser.recordDepth) {
            case .success(let value): self = .json(value)
            case .failure(let error): self = .malformed(error.description)
            }
        case "application/x-www-form-urlencoded":
            self = .form(Self.form(data))
        default:
            self = .unparsed
        }
    }

    /// The members of a URL-encoded form: `title=form&userId=3` is
    /// `{"title": "form", "userId": "3"}`, `tag=a&tag=b` is `{"tag": ["a", "b"]}`, a
    /// name without `=` is `""`. Names and values are decoded leniently, as query
    /// strings are (``QueryString/parse(_:)``); bytes that are not UTF-8 become U+FFFD.
    private static func form(_ data: Data) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for item in QueryString.parse(Substring(String(decoding: data, as: UTF8.self))) {
            let value = JSONValue.string(item.value ?? "")
            switch members[item.name] {
            case nil: members[item.name] = value
            case .array(let values)?: members[item.name] = .array(values + [value])
            case let first?: members[item.name] = .array([first, value])
            }
        }
        return members
    }

    /// The body as json-server's handlers see `req.body`, when it was parsed: the JSON
    /// value, or the form as an object.
    var value: JSONValue? {
        switch self {
        case .json(let value): return value
        case .form(let members): return .object(members)
        case .none, .malformed, .unparsed: return nil
        }
    }
}

/// json-server 0.17's router over a ``Database``: which resource a path names, and
/// what each method does to it. Answers every outcome as a response (a 404 as `{}`,
/// as json-server's last handler answers whatever no route served; a 400 or 409 as
/// `{"error": …}`); the backend classifies it.
struct JSONServer {
    let database: Database
    let base: BaseLocation

    /// The answer to `method` on `target` with `body`.
    func respond(_ method: HTTPMethod, _ target: RequestTarget, body: ParsedBody) -> BackendResponse {
        do throws(Refusal) {
            return try route(method, target, body: body)
        } catch {
            return error.response
        }
    }

    private func route(_ method: HTTPMethod, _ target: RequestTarget, body: ParsedBody) throws(Refusal)
        -> BackendResponse
    {
        let segments = target.segments
        switch segments.count {
        case 1:
            return try resource(method, segments[0], target: target, body: body)
        case 2:
            return try record(method, segments[0], id: segments[1], target: target, body: body)
        case 3:
            return try nested(
                method, parent: segments[0], parentID: segments[1], child: segments[2], target, body)
        case 4:
            let (parent, parentID, child, id) = (segments[0], segments[1], segments[2], segments[3])
            return try nestedRecord(
                method, parent: parent, parentID: parentID, child: child, id: id, target, body)
        default:
            throw .notFound
        }
    }

    // MARK: - /name

    private func resource(_ method: HTTPMethod, _ name: String, target: RequestTarget, body: ParsedBody)
        throws(Refusal) -> BackendResponse
    {
        switch database.resource(name) {
        case .collection(let collection)?:
            switch method {
            case .get, .head:
                return try Listing.respond(
                    collection, named: name, scope: nil, at: location(target), database: database)
            case .post:
                return try create(in: name, members: try Self.object(body), target: target)
            case .options:
                return Self.options(Self.collectionMethods)
            default:
                // json-server's router has no such route: its 404 handler answers `{}`.
                throw .notFound
            }
        case .object(let object)?:
            switch method {
            case .get, .head:
                return Self.ok(object.bytes)
            case .put, .post:
                let stored = try database.setObject(name, members: try Self.object(body))
                guard method == .post else { return Self.ok(stored.bytes) }
                var headers = BackendResponse.jsonHeaders()
                headers["Location"] = base.url(target.encodedPath)
                return BackendResponse(status: 201, headers: headers, body: stored.bytes)
            case .patch:
                return Self.ok(try database.patchObject(name, changes: try Self.object(body)).bytes)
            case .options:
                return Self.options(Self.objectMethods)
            case .delete:
                throw .notFound
            }
        case nil:
            // json-server routes only the names its database has: `POST /nothing` is 404.
            if name == "db" && (method == .get || method == .head) { return Self.ok(database.body) }
            throw .noCollection(name)
        }
    }

    // MARK: - /name/:id

    private func record(
        _ method: HTTPMethod, _ name: String, id: String, target: RequestTarget, body: ParsedBody
    )
        throws(Refusal) -> BackendResponse
    {
        guard case .collection(let collection)? = database.resource(name) else {
            throw database.resource(name) == nil ? .noCollection(name) : .notFound
        }
        switch method {
        case .get, .head:
            guard let record = collection.record(id: id) else { throw .notFound }
            if target.query.isEmpty {
                var response = Self.ok(record.bytes)
                // The tag ConditionalGET would compute from these bytes, kept with them (a
                // `HEAD` answer carries none).
                if method == .get, let tag = record.entityTag { response.headers["ETag"] = tag }
                return response
            }
            let query = JSONServerQuery(target.query)
            let relations = Relations(
                collection: name, embed: query.embed, expand: query.expand, database: database)
            return Self.ok(relations.bytes(of: record))
        case .put:
            return Self.ok(try database.replace(in: name, id: id, members: try Self.object(body)).bytes)
        case .patch:
            return Self.ok(try database.patch(in: name, id: id, changes: try Self.object(body)).bytes)
        case .delete:
            try database.delete(in: name, id: id)
            return Self.ok(Data("{}".utf8))
        case .options:
            return Self.options(Self.recordMethods)
        case .post:
            throw .notFound
        }
    }

    // MARK: - /parent/:id/children

    /// json-server 0.17's nested routes, which rewrite the request to the child
    /// resource: `GET /users/1/posts?…` is `GET /posts?…&userId=1` (the route's
    /// `userId` replacing the query's), `POST /users/1/posts` is `POST /posts` with
    /// `userId` set in the body. The parent need not exist. A singular child
    /// (`/users/1/profile`) is answered as `/profile` is. A nested `POST`'s `Location`
    /// is the request's URL plus the new id (`/users/1/posts/101`), as json-server
    /// builds it.
    ///
    /// Where Depot differs on purpose: the foreign key is stored as the parent's id
    /// is (`1`), where json-server 0.17 stores the URL's text (`"1"`, which then
    /// neither matches `_embed` nor decodes as a number: typicode/json-server#925).
    private func nested(
        _ method: HTTPMethod, parent: String, parentID: String, child: String, _ target: RequestTarget,
        _ body: ParsedBody
    ) throws(Refusal) -> BackendResponse {
        let scope = Listing.Scope(parent: parent, id: parentID)
        let resource = database.resource(child)
        switch method {
        case .get, .head:
            switch resource {
            case .collection(let collection)?:
                return try Listing.respond(
                    collection, named: child, scope: scope,
                    at: location(target), database: database)
            case .object?:
                return try self.resource(method, child, target: target, body: body)
            case nil:
                throw .notFound
            }
        case .post:
            var members = try Self.object(body)
            members[scope.key] = parentIDValue(parent, parentID)
            switch resource {
            case .collection?: return try create(in: child, members: members, target: target)
            case .object?:
                return try self.resource(method, child, target: target, body: .json(.object(members)))
            case nil: throw .notFound
            }
        case .options:
            return Self.options(Self.collectionMethods)
        default:
            throw .notFound
        }
    }

    // MARK: - /parent/:id/children/:id

    /// `/users/1/posts/5`, which json-server 0.17 answers 404 (it routes no such path
    /// unless given a routes file); Depot routes it for repositories scoped with
    /// `shallow: false`, as an API that routes entities only under their parent does:
    /// the record is answered (read, replaced, patched, deleted) as `/posts/5` is, when
    /// the nested listing `/users/1/posts` holds it, and is 404 otherwise, so
    /// `/users/1/posts/15` for a post of user 2 is 404. `PUT` and `PATCH` store the
    /// parent's id in the foreign key, as a nested `POST` does, so the record stays
    /// where it was written.
    private func nestedRecord(
        _ method: HTTPMethod, parent: String, parentID: String, child: String, id: String,
        _ target: RequestTarget, _ body: ParsedBody
    ) throws(Refusal) -> BackendResponse {
        let scope = Listing.Scope(parent: parent, id: parentID)
        guard method != .post, case .collection(let collection)? = database.resource(child),
            let record = collection.record(id: id), scope.holds(record, in: collection)
        else { throw .notFound }
        guard method == .put || method == .patch else {
            return try self.record(method, child, id: id, target: target, body: body)
        }
        var members = try Self.object(body)
        members[scope.key] = parentIDValue(parent, parentID)
        return try self.record(method, child, id: id, target: target, body: .json(.object(members)))
    }

    /// The parent's id as stored (`1`, not `"1"`), or the text read as an integer
    /// when it can be, else the text.
    private func parentIDValue(_ parent: String, _ id: String) -> JSONValue {
        if let stored = database.collection(parent)?.record(id: id)?.member("id") { return stored }
        if let number = Int(id) { return .int(number) }
        return .string(id)
    }

    // MARK: - Writing

    /// `POST` to collection `name`: 201 with the record, and `Location` the request's
    /// path plus the new id (`/posts/101`, `/users/1/posts/101`), as json-server sends
    /// `${fullURL}/${id}`. Unlike json-server, which appends the id to the URL as sent
    /// (after any query string), the path is rebuilt from its decoded segments and the
    /// id percent-encoded, so `Location` is always a well-formed URL of the record.
    private func create(in name: String, members: [String: JSONValue], target: RequestTarget) throws(Refusal)
        -> BackendResponse
    {
        let record = try database.create(in: name, members: members)
        var headers = BackendResponse.jsonHeaders()
        headers["Location"] = base.url(PathSegment.join(target.segments + [record.idText ?? ""]))
        return BackendResponse(status: 201, headers: headers, body: record.bytes)
    }

    /// The body as an object: no body, or one of a type json-server's parsers skip, is
    /// `{}` (its `req.body`); a form is its fields, as strings.
    ///
    /// - Throws: 400 for a JSON body that does not parse, or is not an object.
    static func object(_ body: ParsedBody) throws(Refusal) -> [String: JSONValue] {
        switch body {
        case .none, .unparsed: return [:]
        case .form(let members): return members
        case .malformed(let reason): throw .badRequest("the body is not valid JSON: \(reason)")
        case .json(let value):
            guard case .object(let members) = value else {
                throw .badRequest("the body must be a JSON object, not a \(JSONParser.kind(of: value))")
            }
            return members
        }
    }

    // MARK: - Answers

    private func location(_ target: RequestTarget) -> Listing.Location {
        Listing.Location(base: base, path: target.encodedPath, query: target.query)
    }

    static func ok(_ body: Data) -> BackendResponse {
        BackendResponse(status: 200, headers: BackendResponse.jsonHeaders(), body: body)
    }

    private static let collectionMethods: [HTTPMethod] = [.get, .head, .post]
    private static let recordMethods: [HTTPMethod] = [.get, .head, .put, .patch, .delete]
    private static let objectMethods: [HTTPMethod] = [.get, .head, .post, .put, .patch]

    /// `OPTIONS`: 204 with `Allow` naming the methods the resource serves.
    private static func options(_ methods: [HTTPMethod]) -> BackendResponse {
        BackendResponse(
            status: 204, headers: ["Allow": (methods + [.options]).map(\.rawValue).joined(separator: ", ")])
    }
}
