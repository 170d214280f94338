import Depot
import DepotBackendConformance

// The posts and users every folder's tests read: in memory and from the DRF app.

/// A post as JSONPlaceholder serves it: the shared suites' post, so that the paging tests
/// in memory and over HTTP read the same type.
typealias Post = ServedPost

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

/// A user, reduced to what the tests read.
struct User: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
    var email: String
}

/// The repository a user of Depot would write for `/users`.
struct UserRepository: Readable {
    typealias Entity = User
    let backend: any Backend
    let name = "users"

    /// A custom endpoint: `GET /users/:id/posts`.
    func posts(of userID: Int) -> Future<[Post], ServiceError> {
        request(.get, ["users", String(userID), "posts"])
    }
}
