/// A user, as JSONPlaceholder serves it (the fields this example needs).
struct User: Codable, Identifiable, Sendable {
    let id: Int
    var name: String
    var username: String
    var email: String
}

/// A blog post.
struct Post: Codable, Identifiable, Sendable, Equatable {
    let id: Int
    var userId: Int
    var title: String
    var body: String
}

/// The fields a new post needs; the server picks the id.
struct NewPost: Encodable, Sendable {
    var userId: Int
    var title: String
    var body: String
}
