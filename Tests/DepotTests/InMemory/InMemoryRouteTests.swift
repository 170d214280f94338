import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend routes")
struct InMemoryRouteTests {
    @Test("a route answers its pattern with path parameters, query and body, before json-server")
    func parametersQueryBody() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.post, "/posts/:id/votes/:kind") { context in
            .json(
                [
                    "id": .string(context.parameters["id"] ?? ""),
                    "kind": .string(context.parameters["kind"] ?? ""),
                    "weight": .string(context.query["weight"] ?? ""),
                    "tags": .array(context.query.values(for: "tag").map { .string($0) }),
                    "body": context.body ?? .null, "segments": .array(context.segments.map { .string($0) }),
                ], status: 201)
        }
        let answer = await memorySend(
            backend, .post, "posts/a%2Fb/votes/up?weight=2", query: [("tag", "x"), ("tag", "y")],
            body: #"{"n": 1}"#)
        #expect(answer.memoryResponse?.status == 201)
        #expect(answer.memoryResponse?.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(
            answer.memoryJSON == [
                "id": "a/b", "kind": "up", "weight": "2", "tags": ["x", "y"], "body": ["n": 1],
                "segments": ["posts", "a/b", "votes", "up"],
            ])
        // Other paths and methods still get json-server.
        #expect(await memorySend(backend, .get, "posts/1").memoryJSON?["id"] == 1)
        #expect(memoryKind(await memorySend(backend, .get, "posts/1/votes/up").memoryError) == "notFound")
    }

    @Test("routes are tried in registration order and override json-server; a GET route answers HEAD")
    func order() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.get, "posts/:id") { context in
            context.parameters["id"] == "1" ? .json(["first": true]) : .error(404, "hidden")
        }
        backend.route(.get, "posts/:other") { _ in .json(["second": true]) }
        #expect(await memorySend(backend, .get, "posts/1").memoryJSON == ["first": true])
        #expect(await memorySend(backend, .get, "posts/2").memoryError?.message == "hidden")
        let head = await memorySend(backend, .head, "posts/1").memoryResponse
        #expect(head?.status == 200)
        #expect(head?.body.isEmpty == true)
    }

    @Test(
        "what a handler returns is classified like any response",
        arguments: [
            (409, "conflict"), (422, "clientError"), (500, "serverError"), (404, "notFound"),
            (401, "unauthorized"),
        ])
    func classified(status: Int, kind: String) async throws {
        let backend = InMemoryBackend()
        backend.route(.put, "things/:id") { _ in .error(status, "nope \(status)") }
        let error = await memorySend(backend, .put, "things/1", body: "{}").memoryError
        #expect(memoryKind(error) == kind)
        #expect(error?.message == "nope \(status)")
    }

    @Test("what a handler throws reaches the caller as is")
    func thrown() async throws {
        let backend = InMemoryBackend()
        backend.route(.get, "broken") { _ throws(ServiceError) in throw .timedOut }
        #expect(await memorySend(backend, .get, "broken").memoryError == .timedOut)
        #expect(backend.requests.count == 1)
    }

    @Test("the context reads and writes the store like the HTTP interface does")
    func storeAccess() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.post, "posts/:id/publish") { context throws(ServiceError) in
            let id = context.parameters["id"] ?? ""
            guard let post = context.record(in: "posts", id: id) else { return .error(404, "no post \(id)") }
            let patched = try context.patch(in: "posts", id: id, with: ["published": true])
            let event = try context.insert(
                ["postId": post["id"] ?? .null, "kind": "published"], into: "events")
            return .json([
                "post": patched, "event": event, "count": .int(context.records(in: "events").count),
            ])
        }
        let answer = await memorySend(backend, .post, "posts/3/publish")
        #expect(answer.memoryJSON?["post"]?["published"] == true)
        #expect(answer.memoryJSON?["event"] == ["id": 1, "postId": 3, "kind": "published"])
        #expect(answer.memoryJSON?["count"] == 1)
        #expect(await memorySend(backend, .get, "posts/3").memoryJSON?["published"] == true)
        #expect(await memorySend(backend, .get, "events/1").memoryJSON?["postId"] == 3)
        #expect(await memorySend(backend, .post, "posts/300/publish").memoryError?.message == "no post 300")
    }

    @Test("store errors in a handler are the errors the network would give")
    func storeErrors() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.post, "ops/:op") { context throws(ServiceError) in
            switch context.parameters["op"] {
            case "duplicate": try context.insert(["id": 1], into: "posts")
            case "missing": try context.replace(in: "posts", id: 999, with: [:])
            case "patch-missing": try context.patch(in: "nope", id: 1, with: [:])
            case "delete-missing": try context.delete(from: "posts", id: "x")
            case "not-object": try context.insert([1, 2], into: "posts")
            case "object-into-collection": try context.setObject(["a": 1], for: "posts")
            default: break
            }
            return .json([:])
        }
        let cases = [
            ("duplicate", "conflict", 409), ("missing", "notFound", 404), ("patch-missing", "notFound", 404),
            ("delete-missing", "notFound", 404), ("not-object", "clientError", 400),
            ("object-into-collection", "clientError", 400),
        ]
        for (op, kind, status) in cases {
            let error = await memorySend(backend, .post, "ops/\(op)").memoryError
            #expect(memoryKind(error) == kind, "\(op)")
            #expect(error?.statusCode == status, "\(op)")
        }
        #expect(backend.records(in: "posts") == MemoryFixture.posts())
    }

    @Test("replace, delete and singular objects through the context")
    func moreStoreAccess() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.post, "reset") { context throws(ServiceError) in
            try context.replace(in: "users", id: 1, with: ["name": "Ada"])
            let removed = try context.delete(from: "posts", id: 100)
            try context.setObject(["name": "Grace"], for: "settings")
            return .json([
                "removed": removed["id"] ?? .null, "profile": context.object("profile") ?? .null,
                "names": .array(context.resourceNames.sorted().map { .string($0) }),
            ])
        }
        let answer = await memorySend(backend, .post, "reset")
        #expect(answer.memoryJSON?["removed"] == 100)
        #expect(answer.memoryJSON?["profile"] == ["name": "Ada", "theme": "dark"])
        #expect(answer.memoryJSON?["names"] == ["comments", "posts", "profile", "settings", "users"])
        #expect(backend.records(in: "users").first == ["id": 1, "name": "Ada"])
        #expect(backend.object("settings") == ["name": "Grace"])
        #expect(await memorySend(backend, .get, "settings").memoryJSON == ["name": "Grace"])
    }

    @Test("a handler can decorate the json-server answer")
    func decorate() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.get, "posts") { context in
            var response = context.jsonServerResponse()
            response.headers["X-Decorated"] = "yes"
            return response
        }
        let answer = await memorySend(backend, .get, "posts", query: [("_page", "2")])
        #expect(answer.memoryIDs == Array(11...20))
        #expect(answer.memoryResponse?.headers["X-Decorated"] == "yes")
        #expect(answer.memoryResponse?.headers["X-Total-Count"] == "100")
    }

    @Test("decodeBody decodes the JSON body, and a bad body is a 400")
    func decodeBody() async throws {
        struct Vote: Codable, Sendable {
            var stars: Int
        }
        let backend = InMemoryBackend()
        backend.route(.post, "votes") { context throws(ServiceError) in
            let vote = try context.decodeBody(as: Vote.self)
            let stored = try context.insert(try context.encode(vote), into: "votes")
            return try .json(encoding: try context.decode(stored, as: Vote.self), status: 201)
        }
        #expect(await memorySend(backend, .post, "votes", body: #"{"stars": 4}"#).memoryJSON == ["stars": 4])
        #expect(backend.records(in: "votes") == [["id": 1, "stars": 4]])
        for body in [nil, "{", #"{"stars": "many"}"#] {
            let error = await memorySend(backend, .post, "votes", body: body).memoryError
            #expect(error?.statusCode == 400, "\(String(describing: body))")
            #expect(error?.message?.isEmpty == false)
        }
    }

    @Test("context.url builds absolute links under the base URL")
    func links() async throws {
        let backend = InMemoryBackend()
        backend.baseURL = try #require(URL(string: "https://acmeflix.example/api/"))
        backend.route(.get, "") { context in
            .json([
                "self": .string(context.url()),
                "movie": .string(
                    context.url("movies", "a b", query: [URLQueryItem(name: "page", value: "2")])),
            ])
        }
        let answer = await memorySend(backend, .get, "https://acmeflix.example/api/")
        #expect(
            answer.memoryJSON == [
                "self": "https://acmeflix.example/api/",
                "movie": "https://acmeflix.example/api/movies/a%20b?page=2",
            ])
    }

    @Test("a handler may use the backend itself without deadlocking")
    func reentrancy() async throws {
        let backend = try MemoryFixture.backend()
        backend.route(.get, "summary") { [backend] _ in
            .json([
                "posts": .int(backend.records(in: "posts").count), "requests": .int(backend.requests.count),
            ])
        }
        #expect(await memorySend(backend, .get, "summary").memoryJSON == ["posts": 100, "requests": 1])
    }

    @Test("the documented movie-rental routes serve links computed from state")
    func movieRental() async throws {
        let backend = try InMemoryBackend(
            database: Data(#"{"movies": [{"id": 1, "title": "Alien", "stock": 1}]}"#.utf8))
        backend.route(.get, "movies/:id") { context in
            guard let id = context.parameters["id"],
                var movie = context.record(in: "movies", id: id)?.objectValue
            else { return .error(404, "no such movie") }
            var links: [String: JSONValue] = ["self": ["href": .string(context.url("movies", id))]]
            if movie["stock"]?.intValue ?? 0 > 0 {
                links["rent"] = ["href": .string(context.url("movies", id, "rentals")), "method": "POST"]
            }
            movie["_links"] = .object(links)
            return .json(.object(movie))
        }
        backend.route(.post, "movies/:id/rentals") { context throws(ServiceError) in
            guard let id = context.parameters["id"], let movie = context.record(in: "movies", id: id) else {
                return .error(404, "no such movie")
            }
            let stock = movie["stock"]?.intValue ?? 0
            guard stock > 0 else { return .error(409, "out of stock") }
            try context.patch(in: "movies", id: id, with: ["stock": .int(stock - 1)])
            let rental = try context.insert(["movieId": movie["id"] ?? .null], into: "rentals")
            return .json(rental, status: 201)
        }
        let before = await memorySend(backend, .get, "movies/1").memoryJSON
        #expect(before?["_links"]?["rent"]?["href"] == "http://localhost/movies/1/rentals")
        let rent = try #require(before?["_links"]?["rent"]?["href"]?.stringValue)
        #expect(await memorySend(backend, .post, rent).memoryJSON == ["id": 1, "movieId": 1])
        #expect(await memorySend(backend, .get, "movies/1").memoryJSON?["_links"]?["rent"] == nil)
        #expect(memoryKind(await memorySend(backend, .post, rent).memoryError) == "conflict")
        #expect(memoryKind(await memorySend(backend, .get, "movies/2").memoryError) == "notFound")
    }

    @Test("the response helpers set the JSON content type and encode values")
    func responseHelpers() throws {
        let json = BackendResponse.json(["b": 1, "a": [true, .null]], status: 202, headers: ["X-A": "1"])
        #expect(json.status == 202)
        #expect(json.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(json.headers["X-A"] == "1")
        #expect(String(decoding: json.body, as: UTF8.self) == #"{"a":[true,null],"b":1}"#)
        let hal = BackendResponse.json([:], headers: ["Content-Type": "application/hal+json"])
        #expect(hal.headers.values(for: "Content-Type") == ["application/hal+json"])
        let encoded = try BackendResponse.json(encoding: ["x": 1.5])
        #expect(try JSONDecoder().decode([String: Double].self, from: encoded.body) == ["x": 1.5])
        #expect(throws: ServiceError.self) { try BackendResponse.json(encoding: [Double.infinity]) }
        let error = BackendResponse.error(418, "teapot")
        #expect(error.status == 418)
        #expect(ServiceError(response: error, for: BackendRequest(path: "x"))?.message == "teapot")
    }
}
