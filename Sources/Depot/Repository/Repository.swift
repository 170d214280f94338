/// A collection of entities behind a backend, at `/name` and `/name/:id`.
///
/// Adopt the capabilities a collection has — ``Readable``, ``Creatable``,
/// ``Updatable``, ``Deletable``, ``PagedRepository``, or ``CRUDRepository`` for the
/// first four — and their methods come with them:
///
/// ```swift
/// struct PostRepository: CRUDRepository, PagedRepository {
///     typealias Entity = Post
///     let backend: any Backend
///     let name = "posts"
/// }
/// ```
public protocol Repository: BackendClient {
    /// The type of the collection's items.
    associatedtype Entity: Identifiable & Sendable

    /// The collection's path segment: `"users"` gives `/users` and `/users/:id`.
    var name: String { get }

    /// The path segments of the collection itself; `[name]` unless the repository is
    /// nested under a parent (`["users", "1", "posts"]`, see ``Repository/scoped(under:shallow:)``).
    ///
    /// Every built-in operation addresses the collection through this, so a nested
    /// repository lists, pages, creates and reads under its parent.
    var collectionPath: [String] { get }

    /// The path segments of the entity with `id`, which every built-in per-entity
    /// operation (`findByID`, `update`, `patch`, `delete`) addresses:
    /// ``collectionPath`` + `"\(id)"` unless a repository says otherwise (a
    /// ``ScopedRepository`` answers its base's, `/posts/5`, as json-server routes them).
    func segments(for id: Entity.ID) -> [String]

    /// What listing, paging and creating address: the collection at ``collectionPath``, with
    /// the parent it is nested under (see ``RequestResource``). Every request carries it, so
    /// the live change rules never guess it from the path.
    var collectionResource: RequestResource { get }

    /// What the built-in per-entity operations address: the record with `id`, at
    /// ``segments(for:)``.
    func resource(for id: Entity.ID) -> RequestResource

    /// The members of the entity that hold another record's id: json-server's convention
    /// (every member whose name ends in `Id`) unless you name them (`["author"]`).
    ///
    /// DepotOffline reads them from the requests (``RequestResource/foreignKeys``): when a
    /// record created offline gets the server's id, a queued write that names it by its
    /// local id in one of these members is rewritten before it is sent. The default
    /// ``collectionResource`` and ``resource(for:)`` put them on the resources they give; a
    /// repository that writes its own adds them with ``RequestResource/referencing(_:)``.
    var foreignKeys: ForeignKeys { get }
}

extension Repository {
    /// `[name]`: the collection at the backend's root.
    @inlinable
    public var collectionPath: [String] {
        // Room for an id: ``segments(for:)`` appends one without growing the array.
        var path: [String] = []
        path.reserveCapacity(2)
        path.append(name)
        return path
    }

    /// The path segments of the entity with `id`: ``collectionPath`` + `"\(id)"`.
    ///
    /// Ids are rendered with `String(describing:)`: `42`, `"abc"`, a UUID's string.
    @inlinable
    public func segments(for id: Entity.ID) -> [String] {
        var segments = collectionPath
        segments.reserveCapacity(segments.count + 1)
        segments.append(Self.text(of: id))
        return segments
    }

    /// The collection at ``collectionPath``, nested under a parent record when the path reads
    /// as one by json-server's convention (``RequestResource/collection(atPath:)``).
    @inlinable
    public var collectionResource: RequestResource {
        .collection(atPath: collectionPath).referencing(foreignKeys)
    }

    /// The record at ``segments(for:)``: its last segment is the id, in the collection
    /// ``collectionResource`` names (nested under the same parent record).
    @inlinable
    public func resource(for id: Entity.ID) -> RequestResource {
        let segments = segments(for: id)
        let parentCount = RequestResource.parentCount(ofCollectionPath: segments.count - 1)
        return .record(at: segments, parentCount: parentCount).referencing(foreignKeys)
    }

    /// json-server's convention: every member whose name ends in `Id`.
    @inlinable
    public var foreignKeys: ForeignKeys { .jsonServer }

    /// `String(describing: id)`, without the generic description machinery for the usual
    /// id types (an `Int` or a `String`), which costs more than the rest of the path.
    @inlinable
    static func text(of id: Entity.ID) -> String {
        switch id {
        case let number as Int: return String(number)
        case let text as String: return text
        default: return String(describing: id)
        }
    }
}

/// A repository that can list, query, create, replace, patch and delete.
public typealias CRUDRepository = Readable & Creatable & Updatable & Deletable
