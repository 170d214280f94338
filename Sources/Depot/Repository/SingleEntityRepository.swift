/// A repository for one object at a fixed path, such as `/profile` or `/me`.
///
/// ```swift
/// struct ProfileRepository: SingleEntityRepository {
///     typealias Entity = Profile
///     let backend: any Backend
///     let name = "profile"
/// }
/// let profile = try await ProfileRepository(backend: backend).find().value
/// ```
public protocol SingleEntityRepository: BackendClient {
    /// The object's type.
    associatedtype Entity: Codable & Sendable

    /// The object's path segment: `"profile"` gives `/profile`.
    var name: String { get }

    /// Reads the object: `GET /name`.
    func find() -> Future<Entity, ServiceError>
    /// Replaces the object: `PUT /name`.
    func update(_ entity: Entity) -> Future<Entity, ServiceError>
    /// Changes only the fields in `changes`: `PATCH /name`.
    func patch<Changes: Encodable & Sendable>(with changes: Changes) -> Future<Entity, ServiceError>
}

extension SingleEntityRepository {
    /// Reads the object: `GET /name`.
    public func find() -> Future<Entity, ServiceError> {
        request(.get, .singular([name]))
    }

    /// Replaces the object: `PUT /name`.
    public func update(_ entity: Entity) -> Future<Entity, ServiceError> {
        request(.put, .singular([name]), body: .json(entity))
    }

    /// Merges `changes` into the object: `PATCH /name`.
    public func patch<Changes: Encodable & Sendable>(with changes: Changes) -> Future<Entity, ServiceError> {
        request(.patch, .singular([name]), body: .json(changes))
    }

    /// Merges the fields of a dictionary literal into the object: `PATCH /name`. Values may
    /// mix JSON literals, and `nil` sends `null`.
    ///
    /// ```swift
    /// profile.patch(with: ["name": "Ada", "age": 36, "nickname": nil])
    /// ```
    public func patch(with changes: [String: JSONValue?]) -> Future<Entity, ServiceError> {
        patch(with: JSONValue(changes))
    }
}
