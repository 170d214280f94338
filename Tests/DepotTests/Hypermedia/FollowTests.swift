import Depot
import Foundation
import Testing

@Suite("Following links")
struct FollowTests {
    let stub = HypermediaStub()
    var client: HypermediaClient { HypermediaClient(backend: stub, root: HypermediaStub.root) }

    @Test("fetchRoot sends GET to the root itself")
    func fetchRoot() async throws {
        let root = try await client.fetchRoot().value
        #expect(root.relations == ["self"])
        let request = try #require(stub.requests.first)
        #expect(request.method == .get)
        #expect(request.path == "")
        #expect(request.body == nil)
    }

    @Test(
        "Hrefs of the root's origin become paths relative to the root",
        arguments: [
            ("movies/1", "movies/1"),
            ("/api/movies/1", "movies/1"),
            ("https://acmeflix.example/api/movies/1", "movies/1"),
            ("HTTPS://AcmeFlix.Example:443/api/movies/1", "movies/1"),
            ("//acmeflix.example/api/movies/1", "movies/1"),
            ("https://acmeflix.example/api", ""),
            ("/api/", ""),
            ("/api/movies/Am%C3%A9lie", "movies/Am%C3%A9lie"),
            ("/assets/logo.png", "https://acmeflix.example/assets/logo.png"),
        ])
    func sameOrigin(href: String, path: String) async throws {
        _ = try await client.send(Link(rel: "next", href: href)).value
        #expect(stub.requests.map(\.path) == [path])
    }

    @Test("A query in the href becomes the request's query items")
    func hrefQuery() async throws {
        _ = try await client.send(Link(rel: "next", href: "/api/movies?page=2&size=10#top")).value
        let request = try #require(stub.requests.first)
        #expect(request.path == "movies")
        #expect(
            request.query == [
                URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "size", value: "10"),
            ])
    }

    @Test(
        "Links to another origin are refused before anything is sent",
        arguments: [
            "https://evil.example/api/movies/1",
            "http://acmeflix.example/api/movies/1",
            "https://acmeflix.example:8443/api/movies/1",
            "//cdn.example/posters/1.jpg",
            "mailto:support@acmeflix.example",
        ])
    func foreignOrigin(href: String) async {
        let result = await client.send(Link(rel: "poster", href: href)).result
        guard case .failure(.invalidRequest(let message)) = result else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(message.contains("\"poster\" link"))
        #expect(stub.requests.isEmpty)
    }

    @Test("A client that allows foreign origins sends their absolute URL")
    func foreignOriginAllowed() async throws {
        let client = HypermediaClient(backend: stub, root: HypermediaStub.root, allowsForeignOrigins: true)
        _ = try await client.send(Link(rel: "poster", href: "https://cdn.example/posters/1.jpg?w=300")).value
        let request = try #require(stub.requests.first)
        #expect(request.path == "https://cdn.example/posters/1.jpg")
        #expect(request.query == [URLQueryItem(name: "w", value: "300")])
    }

    @Test("follow uses the link's method and sends its parameters as the JSON body, templates filled")
    func parametersBody() async throws {
        let rate = Link(
            rel: "rate", href: "/api/movies/1/ratings", method: .post,
            parameters: [
                "rating": "{rating}", "movieId": 1, "note": "Rated {rating} by {user}", "source": "app",
            ])
        _ = try await client.send(rate, with: ["rating": 5, "user": "ada"]).value
        let request = try #require(stub.requests.first)
        #expect(request.method == .post)
        #expect(request.path == "movies/1/ratings")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.sentJSON == ["rating": 5, "movieId": 1, "note": "Rated 5 by ada", "source": "app"])
    }

    @Test("A whole-value template keeps the caller's JSON type")
    func typedTemplates() async throws {
        let add = Link(
            rel: "add", href: "cart/items", method: .put,
            parameters: ["ids": "{ids}", "gift": "{gift}", "options": ["price": "{price}"]])
        _ = try await client.send(add, with: ["ids": [1, 2], "gift": true, "price": 2.5]).value
        #expect(stub.requests.first?.sentJSON == ["ids": [1, 2], "gift": true, "options": ["price": 2.5]])
        #expect(stub.requests.first?.method == .put)
    }

    @Test("A parameter template without a value is refused before anything is sent")
    func missingValue() async {
        let rate = Link(
            rel: "rate", href: "ratings", method: .post, parameters: ["rating": "{rating}", "by": "{user}"])
        let result = await client.send(rate, with: ["user": "ada"]).result
        #expect(result.failure == .invalidRequest("the \"rate\" link needs a value for {rating}"))
        #expect(stub.requests.isEmpty)
    }

    @Test("Braces around text that is no variable name stay literal, next to variables that are")
    func literalBraces() throws {
        let link = Link(
            rel: "note", href: "notes", method: .post,
            parameters: ["text": "{ {a b} {x}{rating}{} {{rating}} {user", "json": #"{"k":"{rating}"}"#])
        let request = try client.request(for: link, with: ["rating": 4, "x": "X"])
        #expect(request.sentJSON == ["text": "{ {a b} X4{} {4} {user", "json": #"{"k":"4"}"#])
    }

    /// Found by depot-fuzz (target uri-template): each `{` looked for the next `}` anew,
    /// so 30 000 unclosed braces in a server's link parameter took seconds to fill.
    @Test("Filling parameters is linear in unclosed braces")
    func manyUnclosedBraces() throws {
        let text = String(repeating: "{a", count: 30_000) + "{rating}"
        let link = Link(rel: "rate", href: "ratings", method: .post, parameters: ["p": .string(text)])
        let started = Date()
        let request = try client.request(for: link, with: ["rating": 4])
        #expect(request.sentJSON == ["p": .string(String(repeating: "{a", count: 30_000) + "4")])
        #expect(-started.timeIntervalSinceNow < 2)
    }

    @Test("A caller's body replaces the link's parameters")
    func explicitBody() async throws {
        let rate = Link(rel: "rate", href: "ratings", method: .post, parameters: ["rating": "{rating}"])
        _ = try await client.send(rate, body: .json(["rating": 4, "comment": "Fine"] as JSONValue)).value
        #expect(stub.requests.first?.sentJSON == ["rating": 4, "comment": "Fine"])
    }

    @Test("A templated href is expanded with RFC 6570 from the same values")
    func templatedHref() async throws {
        let find = Link(rel: "find", href: "/api/movies/{id}{?fields*}{&lang}", templated: true)
        _ = try await client.send(find, with: ["id": 7, "fields": ["title", "year"], "lang": "fr CA"]).value
        let request = try #require(stub.requests.first)
        #expect(request.path == "movies/7")
        #expect(
            request.query == [
                URLQueryItem(name: "fields", value: "title"), URLQueryItem(name: "fields", value: "year"),
                URLQueryItem(name: "lang", value: "fr CA"),
            ])
    }

    @Test("A GET link's parameters go to the query, not the body")
    func getParameters() async throws {
        let search = Link(rel: "search", href: "movies", parameters: ["title": "{title}", "limit": 5])
        _ = try await client.send(search, with: ["title": "Alien"]).value
        let request = try #require(stub.requests.first)
        #expect(request.body == nil)
        #expect(
            request.query == [
                URLQueryItem(name: "limit", value: "5"), URLQueryItem(name: "title", value: "Alien"),
            ])
    }

    @Test("The link's type is sent as Accept")
    func acceptType() async throws {
        _ = try await client.send(Link(rel: "poster", href: "posters/1", type: "image/jpeg")).value
        #expect(stub.requests.first?.headers["Accept"] == "image/jpeg")
    }

    @Test("Following a relation the resource does not offer fails without sending")
    func missingCapability() async throws {
        let movie = Resource(HyperMovie(id: 1, title: "Alien"), links: [Link(rel: "self", href: "movies/1")])
        let result = await client.follow("rent", from: movie, as: LinksOnly.self).result
        #expect(result.failure == .invalidRequest("no \"rent\" link to follow: the resource offers self"))
        let raw = await client.send("rent", from: movie).result
        #expect(raw.failure != nil)
        #expect(stub.requests.isEmpty)
    }

    @Test("The server's refusal arrives as the backend's ServiceError")
    func serverError() async {
        let stub = HypermediaStub { _ in
            BackendResponse(status: 409, body: Data(#"{"message": "sold out"}"#.utf8))
        }
        let client = HypermediaClient(backend: stub, root: HypermediaStub.root)
        let result = await client.follow(
            Link(rel: "rent", href: "cart/items", method: .post), as: LinksOnly.self
        )
        .result
        #expect(result.failure?.statusCode == 409)
        #expect(result.failure?.message == "sold out")
    }

    @Test("follow on a Backend: relative hrefs without an origin, absolute ones checked against it")
    func backendExtension() async throws {
        let movie = try await stub.follow(Link(rel: "self", href: "/movies/1"), as: LinksOnly.self).value
        #expect(movie.relations == ["self"])
        #expect(stub.requests.last?.path == "movies/1")

        let absolute = Link(rel: "self", href: "https://acmeflix.example/api/movies/1")
        let refused = await stub.follow(absolute, as: LinksOnly.self).result
        guard case .failure(.invalidRequest) = refused else {
            Issue.record("expected invalidRequest without an origin, got \(refused)")
            return
        }
        _ = try await stub.follow(absolute, origin: HypermediaStub.root, as: LinksOnly.self).value
        #expect(stub.requests.last?.path == "movies/1")
        #expect(stub.requests.count == 2)
    }

    @Test("request(for:) shows the request without sending it")
    func requestPreview() throws {
        let request = try client.request(
            for: Link(rel: "delete", href: "/api/cart/items/3", method: .delete))
        #expect(request.method == .delete)
        #expect(request.path == "cart/items/3")
        #expect(stub.requests.isEmpty)
    }
}
