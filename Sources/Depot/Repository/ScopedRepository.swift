/// A repository nested under a parent: the same entities, listed and created at
/// `/users/1/posts` instead of `/posts`, with every operation its base has. Get one from the
/// base repository rather than building it:
///
/// ```swift
/// let hers = posts.scoped(to: user, in: users)   // or .scoped(to: 1, in: users)
/// try await hers.findAll().value                 // GET /users/1/posts
/// try await hers.findByID(5).value               // GET /posts/5: shallow, as json-server routes it
/// ```
///
/// What each operation addresses, on json-server and elsewhere: the article *Defining repositories*.
public struct ScopedRepository<Base: Repository>: Repository {
    /// The base repository's entity.
    public typealias Entity = Base.Entity

    /// The repository this one nests.
    public let base: Base
    /// The parent's path segments, before the base's collection path: `["users", "1"]`.
    public let parentPath: [String]
    /// Whether operations on one entity address it where the base does (`/posts/5`,
    /// `true`, the default) or under the parent (`/users/1/posts/5`).
    public let isShallow: Bool

    /// Nests `base` under `parentPath`; prefer ``Repository/scoped(under:shallow:)``.
    public init(_ base: Base, under parentPath: [String], shallow: Bool = true) {
        self.base = base
        self.parentPath = parentPath
        self.isShallow = shallow
    }

    /// The base's backend.
    public var backend: any Backend { base.backend }

    /// The base's coding.
    public var coding: JSONCoding { base.coding }

    /// The base's collection name.
    public var name: String { base.name }

    /// The parent's path followed by the base's collection path: `["users", "1", "posts"]`.
    public var collectionPath: [String] { parentPath + base.collectionPath }

    /// Where the entity with `id` is read, changed and deleted: the base's path for it
    /// (`["posts", "5"]`) when shallow, else that path under the parent
    /// (`["users", "1", "posts", "5"]`).
    public func segments(for id: Entity.ID) -> [String] {
        isShallow ? base.segments(for: id) : parentPath + base.segments(for: id)
    }

    /// The base's collection nested under the parent: `users/1/posts`.
    public var collectionResource: RequestResource {
        let inBase = base.collectionResource
        return .collection(Array(inBase.collection), under: parentPath + inBase.parent)
            .referencing(inBase.foreignKeys)
    }

    /// The base's foreign keys.
    public var foreignKeys: ForeignKeys { base.foreignKeys }

    /// The record with `id` where ``segments(for:)`` puts it, under the parent when not
    /// shallow.
    public func resource(for id: Entity.ID) -> RequestResource {
        isShallow
            ? base.resource(for: id)
            : .record(at: segments(for: id), parentCount: parentPath.count).referencing(foreignKeys)
    }
}

extension ScopedRepository: Readable where Base: Readable {}

extension ScopedRepository: Creatable where Base: Creatable {}

extension ScopedRepository: Updatable where Base: Updatable {}

extension ScopedRepository: Deletable where Base: Deletable {}

extension ScopedRepository: PagedRepository where Base: PagedRepository {
    /// The base's paging convention.
    public var pagination: Pagination { base.pagination }
}

extension Repository {
    /// This repository nested under the path `segments`: `posts.scoped(under: ["users", "1"])`
    /// lists and creates at `/users/1/posts`.
    ///
    /// Operations on one entity address it where this repository does (`/posts/5`)
    /// unless `shallow` is `false` (see ``ScopedRepository``). Each segment is
    /// percent-encoded when sent; an empty one fails with ``ServiceError/invalidRequest(_:)``.
    public func scoped(under segments: [String], shallow: Bool = true) -> ScopedRepository<Self> {
        ScopedRepository(self, under: segments, shallow: shallow)
    }

    /// This repository nested under `parent`, an entity of `parents`:
    /// `posts.scoped(to: user, in: users)` lists and creates at `/users/1/posts`.
    ///
    /// The parent's path is where `parents` reads it (``Repository/segments(for:)``),
    /// so a parent that is itself scoped still gives `/posts/5/comments`.
    public func scoped<Parents: Repository>(
        to parent: Parents.Entity, in parents: Parents, shallow: Bool = true
    ) -> ScopedRepository<Self> {
        scoped(under: parents.segments(for: parent.id), shallow: shallow)
    }

    /// This repository nested under the entity of `parents` with id `parentID`:
    /// `posts.scoped(to: 1, in: users)` lists and creates at `/users/1/posts`.
    public func scoped<Parents: Repository>(
        to parentID: Parents.Entity.ID, in parents: Parents, shallow: Bool = true
    ) -> ScopedRepository<Self> {
        scoped(under: parents.segments(for: parentID), shallow: shallow)
    }
}
