import Depot
import Foundation
import Testing

/// A movie as the hypermedia fixtures describe it.
struct HyperMovie: Codable, Sendable, Equatable {
    var id: Int
    var title: String
}

/// A document with no members of its own besides links.
struct LinksOnly: Codable, Sendable, Equatable {}

@Suite("Resource decoding")
struct ResourceTests {
    static func decode<T: Decodable & Sendable>(_ json: String, as type: T.Type = T.self) throws -> Resource<
        T
    > {
        try JSONDecoder().decode(Resource<T>.self, from: Data(json.utf8))
    }

    @Test("HAL object form: a relation holds one link or an array, rel comes from the key")
    func halObjectForm() throws {
        let movie = try Self.decode(
            """
            {"id": 1, "title": "Alien", "_links": {
                "self": {"href": "/movies/1"},
                "rent": {"href": "/cart/items", "method": "POST", "parameters": {"movieId": 1}},
                "poster": [{"href": "/posters/1-small.jpg", "type": "image/jpeg", "title": "Small"},
                           {"href": "/posters/1-large.jpg", "type": "image/jpeg", "title": "Large"}],
                "search": {"href": "/movies{?title}", "templated": true}
            }}
            """, as: HyperMovie.self)
        #expect(movie.entity == HyperMovie(id: 1, title: "Alien"))
        #expect(movie.title == "Alien")
        #expect(movie.relations == ["poster", "rent", "search", "self"])
        #expect(movie.link("self") == Link(rel: "self", href: "/movies/1"))
        #expect(
            movie.link("rent")
                == Link(rel: "rent", href: "/cart/items", method: .post, parameters: ["movieId": 1]))
        #expect(movie.links("poster").map(\.title) == ["Small", "Large"])
        #expect(movie.links("poster").allSatisfy { $0.type == "image/jpeg" && $0.method == .get })
        #expect(movie.link("search")?.templated == true)
    }

    @Test("Array form: rel, href, method, type, parameters, title, deprecation, in document order")
    func arrayForm() throws {
        let movie = try Self.decode(
            """
            {"id": 2, "title": "Heat", "_links": [
                {"rel": "self", "href": "https://acmeflix.example/movies/2"},
                {"rel": "rate", "href": "/movies/2/ratings", "method": "post", "type": "application/json",
                 "parameters": {"rating": "{rating}"}, "title": "Rate it"},
                {"rel": "trailer", "href": "/movies/2/trailer", "deprecation": "https://acmeflix.example/docs/trailers"}
            ]}
            """, as: HyperMovie.self)
        #expect(movie.relations == ["self", "rate", "trailer"])
        #expect(
            movie.link("rate")
                == Link(
                    rel: "rate", href: "/movies/2/ratings", method: .post, type: "application/json",
                    parameters: ["rating": "{rating}"], title: "Rate it"))
        #expect(movie.link("trailer")?.deprecation == "https://acmeflix.example/docs/trailers")
        #expect(movie.link("self")?.method == .get)
    }

    @Test("Relations compare without regard to case; a missing one is absent")
    func capabilities() throws {
        let movie = try Self.decode(
            #"{"id": 3, "title": "Up", "_links": [{"rel": "Rent", "href": "/cart/items", "method": "POST"}]}"#,
            as: HyperMovie.self)
        #expect(movie.has("rent"))
        #expect(movie.link("RENT")?.href == "/cart/items")
        #expect(!movie.has("rate"))
        #expect(movie.link("rate") == nil)
        #expect(movie.links("rate").isEmpty)
    }

    @Test("ifAvailable runs the first closure with the link, or the second when it is absent")
    func ifAvailable() throws {
        let movie = try Self.decode(
            #"{"id": 4, "title": "Jaws", "_links": [{"rel": "rent", "href": "/cart/items", "method": "POST"}]}"#,
            as: HyperMovie.self)
        let rent = movie.ifAvailable("rent") { link in
            "rent via \(link.method.rawValue) \(link.href)"
        } else: {
            "sold out"
        }
        let rate = movie.ifAvailable("rate") { link in
            "rate via \(link.href)"
        } else: {
            "rating disabled"
        }
        #expect(rent == "rent via POST /cart/items")
        #expect(rate == "rating disabled")
    }

    @Test("No _links means no links; a bare entity still decodes")
    func noLinks() throws {
        let movie = try Self.decode(#"{"id": 5, "title": "Rocky"}"#, as: HyperMovie.self)
        #expect(movie.links.isEmpty)
        #expect(movie.relations.isEmpty)
        #expect(movie.embeddedRelations.isEmpty)
    }

    @Test("A JSONValue entity is the document without _links and _embedded")
    func jsonEntity() throws {
        let root = try Self.decode(
            #"{"name": "AcmeFlix", "_links": {"library": {"href": "/movies"}}, "_embedded": {}}"#,
            as: JSONValue.self)
        #expect(root.entity == ["name": "AcmeFlix"])
        #expect(root.relations == ["library"])
    }

    @Test(
        "Bad links are decoding errors with their coding path",
        arguments: [
            (#"{"_links": [{"rel": "rent", "href": "/x", "method": "TELEPORT"}]}"#, "_links[0].method"),
            (#"{"_links": {"rent": {"href": "/x", "method": "FLY"}}}"#, "_links.rent.method"),
            (#"{"_links": {"poster": [{"href": "/a"}, {"type": "image/png"}]}}"#, "_links.poster[1].href"),
            (#"{"_links": [{"href": "/movies/1"}]}"#, "_links[0].rel"),
            (#"{"_links": "nope"}"#, "_links"),
        ])
    func badLinks(json: String, path: String) async {
        let client = HypermediaClient(backend: HypermediaStub(json: json), root: HypermediaStub.root)
        let result = await client.fetchRoot(as: LinksOnly.self).result
        guard case .failure(.decoding(let failure)) = result else {
            Issue.record("expected a decoding error, got \(result)")
            return
        }
        #expect(failure.codingPath == path)
    }

    @Test("_embedded decodes on request into typed resources, with their own links")
    func embedded() throws {
        let library = try Self.decode(
            """
            {"count": 2, "_links": {"self": {"href": "/movies"}}, "_embedded": {
                "movies": [
                    {"id": 1, "title": "Alien", "_links": {"self": {"href": "/movies/1"}, "poster": {"href": "/p/1.jpg"}}},
                    {"id": 2, "title": "Heat", "_links": [{"rel": "self", "href": "/movies/2"}]}
                ],
                "featured": {"id": 2, "title": "Heat"}
            }}
            """, as: JSONValue.self)
        #expect(library.embeddedRelations == ["featured", "movies"])
        let movies = try library.embedded("movies", as: HyperMovie.self)
        #expect(
            movies.map(\.entity) == [HyperMovie(id: 1, title: "Alien"), HyperMovie(id: 2, title: "Heat")])
        #expect(movies.map(\.relations) == [["poster", "self"], ["self"]])
        #expect(try library.embedded("featured", as: HyperMovie.self).map(\.title) == ["Heat"])
        #expect(try library.embedded("absent", as: HyperMovie.self).isEmpty)
    }

    @Test("An embedded document that does not decode names its path under _embedded")
    func embeddedFailure() throws {
        let library = try Self.decode(
            #"{"_embedded": {"movies": [{"id": 1, "title": "Alien"}, {"id": 2}], "featured": {"id": "x"}}}"#,
            as: LinksOnly.self)
        #expect {
            _ = try library.embedded("movies", as: HyperMovie.self)
        } throws: { error in
            guard case .decoding(let failure) = error as? ServiceError else { return false }
            return failure.codingPath == "_embedded.movies[1].title"
        }
        #expect {
            _ = try library.embedded("featured", as: HyperMovie.self)
        } throws: { error in
            guard case .decoding(let failure) = error as? ServiceError else { return false }
            return failure.codingPath == "_embedded.featured.id"
        }
    }

    @Test("Encoding writes _links in the array form and _embedded; decoding reads it back")
    func roundTrip() throws {
        let alien = Resource(
            HyperMovie(id: 1, title: "Alien"),
            links: [
                Link(rel: "self", href: "/movies/1"),
                Link(
                    rel: "rate", href: "/movies/1/ratings", method: .post, parameters: ["rating": "{rating}"]),
            ])
        let library = try Resource(LinksOnly(), links: [Link(rel: "self", href: "/movies")]).embedding(
            "movies", [alien])
        let data = try JSONEncoder().encode(library)
        let object = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(object["_links"] == [["rel": "self", "href": "/movies"]])
        #expect(
            object["_embedded"]?["movies"]?.arrayValue?.first?["_links"]?.arrayValue?.last
                == [
                    "rel": "rate", "href": "/movies/1/ratings", "method": "POST",
                    "parameters": ["rating": "{rating}"],
                ])
        let decoded = try JSONDecoder().decode(Resource<LinksOnly>.self, from: data)
        #expect(decoded == library)
        #expect(try decoded.embedded("movies", as: HyperMovie.self) == [alien])
    }
}
