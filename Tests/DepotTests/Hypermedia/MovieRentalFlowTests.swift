import Depot
import DepotInMemory
import Foundation
import Testing

/// The AcmeFlix flows, driven from the root URL alone against ``MiniFlix``.
@Suite("Hypermedia flows")
struct MovieRentalFlowTests {
    let backend: InMemoryBackend
    let api: HypermediaClient

    init() throws {
        backend = try MiniFlix.makeBackend()
        api = HypermediaClient(backend: backend, root: MiniFlix.root)
    }

    func movie(_ id: Int) async throws -> Resource<MiniMovie> {
        let library = try await api.follow("library", from: api.fetchRoot().value, as: JSONValue.self).value
        let entry = try #require(try library.embedded("movies", as: MiniMovie.self).first { $0.id == id })
        return try await api.follow("self", from: entry, as: MiniMovie.self).value
    }

    @Test("The root offers the library, and a cart only once one exists")
    func root() async throws {
        let root = try await api.fetchRoot().value
        #expect(root.relations == ["self", "library"])
        #expect(!root.has("cart"))
        #expect(backend.requests.map(\.path) == [""])

        _ = try await api.follow("rent", from: movie(1), as: MiniCart.self).value
        #expect(try await api.fetchRoot().value.relations == ["self", "library", "cart"])
    }

    @Test("The library lists every movie with self and poster, and nothing else")
    func library() async throws {
        let library = try await api.follow("library", from: api.fetchRoot().value, as: JSONValue.self).value
        let movies = try library.embedded("movies", as: MiniMovie.self)
        #expect(movies.map(\.title) == ["Alien", "Heat", "Dune"])
        #expect(movies.allSatisfy { $0.relations == ["self", "poster"] })
        #expect(movies.first?.link("poster")?.type == "image/png")
        #expect(backend.requests.last?.path == "movies")
    }

    @Test("Renting the last copy removes the movie's rent link")
    func rentLastCopy() async throws {
        let alien = try await movie(1)
        #expect(alien.relations == ["self", "rent", "rate"])
        let cart = try await api.follow("rent", from: alien, as: MiniCart.self).value
        #expect(cart.itemCount == 1)
        let request = try #require(backend.requests.last)
        #expect(request.method == .post)
        #expect(request.path == "cart/items")
        #expect(request.sentJSON == ["movieId": 1])

        let after = try await api.follow("self", from: alien, as: MiniMovie.self).value
        #expect(after.stock == 0)
        #expect(!after.has("rent"))
        #expect(after.relations == ["self", "rate"])
    }

    @Test("A movie out of stock offers no rent link; following it fails and sends nothing")
    func outOfStock() async throws {
        let heat = try await movie(2)
        #expect(!heat.has("rent"))
        let sent = backend.requests.count
        let result = await api.follow("rent", from: heat, as: MiniCart.self).result
        guard case .failure(.invalidRequest(let reason)) = result else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(reason.contains("no \"rent\" link"))
        #expect(backend.requests.count == sent)
    }

    @Test("The server still refuses a stale rent link with 409")
    func staleLink() async throws {
        let alien = try await movie(1)
        let rent = try #require(alien.link("rent"))
        _ = try await api.follow(rent, as: MiniCart.self).value
        let again = await api.follow(rent, as: MiniCart.self).result
        guard case .failure(.conflict(let response)) = again else {
            Issue.record("expected conflict, got \(again)")
            return
        }
        #expect(response.message == "out of stock")
    }

    @Test("Rating fills the {rating} template with a number; no rate link while ratings are closed")
    func rate() async throws {
        let alien = try await movie(1)
        let rated = try await api.follow("rate", from: alien, with: ["rating": 5], as: MiniMovie.self).value
        #expect(rated.ratings == [4, 5])
        #expect(backend.requests.last?.sentJSON == ["rating": 5])
        #expect(backend.requests.last?.path == "movies/1/ratings")

        let refused = await api.follow("rate", from: alien, with: ["rating": 9], as: MiniMovie.self).result
        #expect(refused.failure?.statusCode == 422)

        let dune = try await movie(3)
        #expect(!dune.has("rate"))
        #expect(dune.has("rent"))
    }

    @Test("Emptying the cart follows each item's delete link and brings the copy back")
    func emptyCart() async throws {
        _ = try await api.follow("rent", from: movie(1), as: MiniCart.self).value
        _ = try await api.follow("rent", from: movie(3), as: MiniCart.self).value

        var cart = try await api.follow("cart", from: api.fetchRoot().value, as: MiniCart.self).value
        #expect(cart.itemCount == 2)
        #expect(cart.relations == ["self", "add"])
        let items = try cart.embedded("items", as: JSONValue.self)
        #expect(items.allSatisfy { $0.link("delete")?.method == .delete })
        for item in items {
            cart = try await api.follow("delete", from: item, as: MiniCart.self).value
        }
        #expect(cart.itemCount == 0)
        #expect(try cart.embedded("items", as: JSONValue.self).isEmpty)
        #expect(
            backend.requests.filter { $0.method == .delete }.map(\.path) == ["cart/items/1", "cart/items/2"])
        #expect(try await movie(1).has("rent"))
    }

    @Test("The cart's add link takes the movie from the caller's values")
    func addWithTemplate() async throws {
        _ = try await api.follow("rent", from: movie(3), as: MiniCart.self).value
        let cart = try await api.follow("cart", from: api.fetchRoot().value, as: MiniCart.self).value
        let added = try await api.follow("add", from: cart, with: ["movieId": 1], as: MiniCart.self).value
        #expect(added.itemCount == 2)
        #expect(backend.requests.last?.sentJSON == ["movieId": 1])
        let missing = await api.follow("add", from: cart, as: MiniCart.self).result
        #expect(missing.failure == .invalidRequest("the \"add\" link needs a value for {movieId}"))
    }
}
