import Depot
import DepotInMemory
import Foundation

/// The AcmeFlix movie-rental API, served in process by ``InMemoryBackend`` routes that
/// compute each document's links from the current state.
///
/// Every document carries `_links` in the array form, `[{"rel", "href", "method",
/// "type", "parameters"}]`, with absolute hrefs:
///
/// | document | members | links |
/// |---|---|---|
/// | root `GET /api/` | `name` | `self`, `library`, and `cart` once a cart exists |
/// | library `GET /api/movies` | `count`, `_embedded.movies` | `self`; each movie `self`, `poster` |
/// | movie `GET /api/movies/:id` | `id`, `title`, `year`, `copiesAvailable`, `rating`, `ratingCount` | `self`, `poster`, `rent` while a copy is in stock, `rate` while ratings are open |
/// | cart `GET /api/cart` | `itemCount`, `_embedded.items` | `self`, `add`; each item `movie`, `delete` |
///
/// `rent` and `add` are `POST /api/cart/items {"movieId": …}` (409 when no copy is
/// left); `delete` is `DELETE /api/cart/items/:id`, which returns the copy; `rate` is
/// `POST /api/movies/:id/ratings {"rating": "{rating}"}`, the client filling in 1 to 5.
enum AcmeFlixServer {
    /// Where the API pretends to live.
    static let root = URL(string: "https://acmeflix.example/api/")!

    /// A movie as the server stores it.
    struct StoredMovie: Codable {
        var id: Int
        var title: String
        var year: Int
        var copies: Int
        var ratingsOpen: Bool
        var ratings: [Int]
    }

    static let catalog = [
        StoredMovie(id: 1, title: "Alien", year: 1979, copies: 1, ratingsOpen: true, ratings: [4, 5]),
        StoredMovie(id: 2, title: "Heat", year: 1995, copies: 0, ratingsOpen: true, ratings: [5]),
        StoredMovie(id: 3, title: "Amélie", year: 2001, copies: 3, ratingsOpen: true, ratings: []),
        StoredMovie(id: 4, title: "Dune: Part Three", year: 2026, copies: 2, ratingsOpen: false, ratings: []),
    ]

    /// A backend seeded with ``catalog`` that answers the AcmeFlix grammar.
    static func makeBackend() throws(ServiceError) -> InMemoryBackend {
        let backend = try InMemoryBackend(seed: ["movies": catalog])
        backend.baseURL = root

        backend.route(.get, "") { context throws(ServiceError) in
            var links = [
                Link(rel: "self", href: context.url()),
                Link(rel: "library", href: context.url("movies"), title: "Browse the library"),
            ]
            if context.object("cart") != nil { links.append(Link(rel: "cart", href: context.url("cart"))) }
            return try .json(encoding: Resource(["name": "AcmeFlix"] as JSONValue, links: links))
        }

        backend.route(.get, "movies") { context throws(ServiceError) in
            let movies = try context.records(in: "movies").map { json throws(ServiceError) in
                try context.decode(json, as: StoredMovie.self)
            }
            let entries = movies.map { movie in
                Resource(
                    ["id": .int(movie.id), "title": .string(movie.title), "year": .int(movie.year)]
                        as JSONValue,
                    links: [selfLink(movie, context), posterLink(movie, context)])
            }
            let library = Resource(
                ["count": .int(movies.count)] as JSONValue,
                links: [
                    Link(rel: "self", href: context.url("movies"))
                ])
            return try .json(encoding: library.embedding("movies", entries))
        }

        backend.route(.get, "movies/:id") { context throws(ServiceError) in
            try .json(encoding: movieDocument(movie(context.parameters["id"], context), context))
        }

        backend.route(.get, "movies/:id/poster") { context throws(ServiceError) in
            let movie = try movie(context.parameters["id"], context)
            return BackendResponse(
                status: 200, headers: ["Content-Type": "image/svg+xml"], body: poster(for: movie))
        }

        backend.route(.post, "movies/:id/ratings") { context throws(ServiceError) in
            var movie = try movie(context.parameters["id"], context)
            guard movie.ratingsOpen else { return .error(403, "\(movie.title) cannot be rated yet") }
            guard let rating = context.body?["rating"]?.intValue, (1...5).contains(rating) else {
                return .error(422, "a rating is a whole number from 1 to 5")
            }
            movie.ratings.append(rating)
            try context.patch(
                in: "movies", id: movie.id, with: ["ratings": .array(movie.ratings.map { .int($0) })])
            return try .json(encoding: movieDocument(movie, context))
        }

        backend.route(.get, "cart") { context throws(ServiceError) in
            guard context.object("cart") != nil else { return .error(404, "no cart yet: rent a movie first") }
            return try .json(encoding: cartDocument(context))
        }

        backend.route(.post, "cart/items") { context throws(ServiceError) in
            let movie = try movie(context.body?["movieId"]?.intValue.map(String.init), context)
            guard movie.copies > 0 else { return .error(409, "no copy of \(movie.title) is left") }
            try context.patch(in: "movies", id: movie.id, with: ["copies": .int(movie.copies - 1)])
            if context.object("cart") == nil { try context.setObject(["owner": "guest"], for: "cart") }
            try context.insert(["movieId": .int(movie.id), "title": .string(movie.title)], into: "cartItems")
            return try .json(encoding: cartDocument(context), status: 201)
        }

        backend.route(.delete, "cart/items/:id") { context throws(ServiceError) in
            let item = try context.delete(from: "cartItems", id: context.parameters["id"] ?? "")
            let movie = try movie(item["movieId"]?.intValue.map(String.init), context)
            try context.patch(in: "movies", id: movie.id, with: ["copies": .int(movie.copies + 1)])
            return try .json(encoding: cartDocument(context))
        }

        return backend
    }

    // MARK: Documents and their links

    static func movie(_ id: String?, _ context: RouteContext) throws(ServiceError) -> StoredMovie {
        guard let id, let json = context.record(in: "movies", id: id) else {
            throw .notFound(FailureResponse(status: 404, message: "no movie \(id ?? "")"))
        }
        return try context.decode(json, as: StoredMovie.self)
    }

    static func selfLink(_ movie: StoredMovie, _ context: RouteContext) -> Link {
        Link(rel: "self", href: context.url("movies", String(movie.id)), title: movie.title)
    }

    /// A poster as an SVG of a few hundred kilobytes (a grid of tiles shaded by the
    /// movie's id, its title on top): large enough for a download to show progress.
    static func poster(for movie: StoredMovie) -> Data {
        var svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="600" height="900">"#
        for row in 0..<90 {
            for column in 0..<60 {
                let shade = (row * 7 + column * 3 + movie.id * 40) % 256
                svg +=
                    #"<rect x="\#(column * 10)" y="\#(row * 10)" width="10" height="10" fill="rgb(\#(shade),40,90)"/>"#
            }
        }
        svg += #"<text x="20" y="60" font-size="48" fill="white">\#(movie.title)</text></svg>"#
        return Data(svg.utf8)
    }

    static func posterLink(_ movie: StoredMovie, _ context: RouteContext) -> Link {
        Link(rel: "poster", href: context.url("movies", String(movie.id), "poster"), type: "image/svg+xml")
    }

    /// A movie with the links its state allows: `rent` only while a copy is left,
    /// `rate` only while ratings are open.
    static func movieDocument(_ movie: StoredMovie, _ context: RouteContext) -> Resource<JSONValue> {
        var links = [selfLink(movie, context), posterLink(movie, context)]
        if movie.copies > 0 {
            links.append(
                Link(
                    rel: "rent", href: context.url("cart", "items"), method: .post,
                    parameters: ["movieId": .int(movie.id)]))
        }
        if movie.ratingsOpen {
            links.append(
                Link(
                    rel: "rate", href: context.url("movies", String(movie.id), "ratings"), method: .post,
                    parameters: ["rating": "{rating}"]))
        }
        let average =
            movie.ratings.isEmpty ? nil : Double(movie.ratings.reduce(0, +)) / Double(movie.ratings.count)
        let document: JSONValue = [
            "id": .int(movie.id), "title": .string(movie.title), "year": .int(movie.year),
            "copiesAvailable": .int(movie.copies), "rating": average.map(JSONValue.double) ?? .null,
            "ratingCount": .int(movie.ratings.count),
        ]
        return Resource(document, links: links)
    }

    /// The cart, its items embedded, each with the link that removes it.
    static func cartDocument(_ context: RouteContext) throws(ServiceError) -> Resource<JSONValue> {
        let items = context.records(in: "cartItems").map { item in
            Resource(
                item,
                links: [
                    Link(
                        rel: "movie",
                        href: context.url("movies", item["movieId"]?.intValue.map(String.init) ?? "")),
                    Link(
                        rel: "delete",
                        href: context.url("cart", "items", item["id"]?.intValue.map(String.init) ?? ""),
                        method: .delete),
                ])
        }
        let links = [
            Link(rel: "self", href: context.url("cart")),
            Link(
                rel: "add", href: context.url("cart", "items"), method: .post,
                parameters: ["movieId": "{movieId}"]),
        ]
        return try Resource(["itemCount": .int(items.count)] as JSONValue, links: links).embedding(
            "items", items)
    }
}
