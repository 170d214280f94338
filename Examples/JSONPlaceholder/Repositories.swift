import Depot

/// `/users` and `/users/:id`.
struct UserRepository: Readable {
    typealias Entity = User
    let backend: any Backend
    let name = "users"
}

/// `/posts` and `/posts/:id`, with every CRUD call and json-server paging.
struct PostRepository: CRUDRepository, PagedRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"

    /// The posts one user wrote: `GET /posts?userId=:id`.
    func findAll(byUser userID: User.ID) -> Future<[Post], ServiceError> {
        findAll(query: ["userId": userID])
    }
}
