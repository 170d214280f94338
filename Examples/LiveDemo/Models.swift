import Depot

/// A blog post, as JSONPlaceholder serves it.
struct Post: Codable, Identifiable, Sendable {
    let id: Int
    var userId: Int
    var title: String
}

/// The fields a new post needs; the server picks the id.
struct NewPost: Encodable, Sendable {
    var userId: Int
    var title: String
}

/// `/posts` and `/posts/:id`.
struct PostRepository: CRUDRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
}

/// A user, with only the field this demo shows.
struct User: Codable, Identifiable, Sendable {
    let id: Int
    var name: String
}

/// `/users` and `/users/:id`.
struct UserRepository: CRUDRepository {
    typealias Entity = User
    let backend: any Backend
    let name = "users"
}
