import Depot

// The post every folder's tests read: in memory, over httpbin and from the DRF app.

/// A post as JSONPlaceholder serves it.
struct Post: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var userId: Int
    var title: String
    var body: String
}

/// A post without an id, for `create(_ draft:)`.
struct NewPost: Encodable, Sendable {
    var userId: Int
    var title: String
    var body: String
}

/// The repository a user of Depot would write for `/posts`.
struct PostRepository: CRUDRepository, PagedRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"

    func findAll(byUser userID: Int) -> Future<[Post], ServiceError> {
        findAll(query: ["userId": userID])
    }
}
