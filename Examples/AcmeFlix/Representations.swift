// What the client knows of AcmeFlix's documents: their members, never their URLs.
// The links come with each document, in `Resource<…>`.

/// The library: how many movies it holds; the movies themselves are embedded.
struct Library: Decodable, Sendable {
    let count: Int
}

/// A movie as the library lists it.
struct MovieSummary: Decodable, Sendable {
    let id: Int
    let title: String
    let year: Int
}

/// A movie in full.
struct Movie: Decodable, Sendable {
    let id: Int
    let title: String
    let year: Int
    let copiesAvailable: Int
    /// The average rating, once someone has rated the movie.
    let rating: Double?
    let ratingCount: Int
}

/// The cart: its items are embedded.
struct Cart: Decodable, Sendable {
    let itemCount: Int
}

/// A movie in the cart.
struct CartItem: Decodable, Sendable {
    let movieId: Int
    let title: String
}
