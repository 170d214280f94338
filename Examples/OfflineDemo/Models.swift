import Depot

/// A blog post, as JSONPlaceholder serves it.
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

/// `/posts` and `/posts/:id`: the same repository an app uses online.
struct PostRepository: CRUDRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
}

/// A comment on a post.
struct Comment: Codable, Identifiable, Sendable, Equatable {
    let id: Int
    var postId: Int
    var name: String
    var email: String
    var body: String
}

/// `/comments` and `/comments/:id`.
struct CommentRepository: CRUDRepository {
    typealias Entity = Comment
    let backend: any Backend
    let name = "comments"
}

/// The fields a new comment needs.
struct NewComment: Encodable, Sendable {
    var postId: Int
    var name: String
    var email: String
    var body: String
}
