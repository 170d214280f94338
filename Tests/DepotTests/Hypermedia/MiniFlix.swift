import Depot
import DepotInMemory
import Foundation

/// A minimal movie-rental API on ``InMemoryBackend`` routes, in the AcmeFlix grammar:
/// root (`library`, `cart` once one exists), library (movies with `self` and
/// `poster`), movie (`rent` while in stock, `rate` while ratings are open, with a
/// `{rating}` template), cart (`add`, `delete` per item). Links are absolute URLs
/// computed from the state on every request.
enum MiniFlix {
    static let root = URL(string: "https://miniflix.test/api/")!

    /// Alien has one copy, Heat none, Dune two but no ratings yet.
    static func makeBackend() throws -> InMemoryBackend {
        let seed: JSONValue = [
            "movies": [
                ["id": 1, "title": "Alien", "stock": 1, "ratingsOpen": true, "ratings": [4]],
                ["id": 2, "title": "Heat", "stock": 0, "ratingsOpen": true, "ratings": []],
                ["id": 3, "title": "Dune", "stock": 2, "ratingsOpen": false, "ratings": []],
            ]
        ]
        let backend = try InMemoryBackend(seed: seed)
        backend.baseURL = root

        backend.route(.get, "") { context throws(ServiceError) in
            var links = [
                Link(rel: "self", href: context.url()), Link(rel: "library", href: context.url("movies")),
            ]
            if context.object("cart") != nil { links.append(Link(rel: "cart", href: context.url("cart"))) }
            return try .json(encoding: Resource(JSONValue.object([:]), links: links))
        }
        backend.route(.get, "movies") { context throws(ServiceError) in
            let entries = context.records(in: "movies").map { movie in
                Resource(
                    ["id": movie["id"] ?? .null, "title": movie["title"] ?? .null] as JSONValue,
                    links: [
                        Link(rel: "self", href: context.url("movies", text(movie["id"]))),
                        Link(
                            rel: "poster", href: context.url("movies", text(movie["id"]), "poster"),
                            type: "image/png"),
                    ])
            }
            return try .json(encoding: Resource(JSONValue.object([:])).embedding("movies", entries))
        }
        backend.route(.get, "movies/:id") { context throws(ServiceError) in
            try .json(encoding: movieDocument(movie(context.parameters["id"], context), context))
        }
        backend.route(.post, "movies/:id/ratings") { context throws(ServiceError) in
            let movie = try movie(context.parameters["id"], context)
            guard let rating = context.body?["rating"]?.intValue, (1...5).contains(rating) else {
                return .error(422, "rating must be 1 to 5")
            }
            let ratings = (movie["ratings"]?.arrayValue ?? []) + [.int(rating)]
            let updated = try context.patch(
                in: "movies", id: text(movie["id"]), with: ["ratings": .array(ratings)])
            return try .json(encoding: movieDocument(updated, context))
        }
        backend.route(.get, "cart") { context throws(ServiceError) in
            try .json(encoding: cartDocument(context))
        }
        backend.route(.post, "cart/items") { context throws(ServiceError) in
            let movie = try movie(context.body?["movieId"].map(text), context)
            let stock = movie["stock"]?.intValue ?? 0
            guard stock > 0 else { return .error(409, "out of stock") }
            try context.patch(in: "movies", id: text(movie["id"]), with: ["stock": .int(stock - 1)])
            if context.object("cart") == nil { try context.setObject(["owner": "test"], for: "cart") }
            try context.insert(["movieId": movie["id"] ?? .null], into: "cartItems")
            return try .json(encoding: cartDocument(context), status: 201)
        }
        backend.route(.delete, "cart/items/:id") { context throws(ServiceError) in
            let item = try context.delete(from: "cartItems", id: context.parameters["id"] ?? "")
            let movie = try movie(item["movieId"].map(text), context)
            try context.patch(
                in: "movies", id: text(movie["id"]),
                with: ["stock": .int((movie["stock"]?.intValue ?? 0) + 1)])
            return try .json(encoding: cartDocument(context))
        }
        return backend
    }

    private static func text(_ value: JSONValue?) -> String {
        switch value {
        case .int(let number): return String(number)
        case .string(let string): return string
        default: return ""
        }
    }

    private static func movie(_ id: String?, _ context: RouteContext) throws(ServiceError) -> JSONValue {
        guard let id, let movie = context.record(in: "movies", id: id) else {
            throw .notFound(FailureResponse(status: 404, message: "no such movie"))
        }
        return movie
    }

    private static func movieDocument(_ movie: JSONValue, _ context: RouteContext) -> Resource<JSONValue> {
        let id = text(movie["id"])
        var links = [Link(rel: "self", href: context.url("movies", id))]
        if movie["stock"]?.intValue ?? 0 > 0 {
            links.append(
                Link(
                    rel: "rent", href: context.url("cart", "items"), method: .post,
                    parameters: ["movieId": movie["id"] ?? .null])
            )
        }
        if movie["ratingsOpen"] == true {
            links.append(
                Link(
                    rel: "rate", href: context.url("movies", id, "ratings"), method: .post,
                    parameters: ["rating": "{rating}"]))
        }
        return Resource(movie, links: links)
    }

    private static func cartDocument(_ context: RouteContext) throws(ServiceError) -> Resource<JSONValue> {
        let items = context.records(in: "cartItems").map { item in
            Resource(
                item,
                links: [
                    Link(rel: "delete", href: context.url("cart", "items", text(item["id"])), method: .delete)
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

/// A movie as MiniFlix serves it.
struct MiniMovie: Decodable, Sendable, Equatable {
    var id: Int
    var title: String
    var stock: Int?
    var ratings: [Int]?
}

/// MiniFlix's cart.
struct MiniCart: Decodable, Sendable {
    var itemCount: Int
}
