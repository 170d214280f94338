/// A repository that can add entities.
public protocol Creatable: Repository where Entity: Codable {
    /// Adds `entity` as it is (id included): `POST /name`; answers what the server stored.
    func create(_ entity: Entity) -> Future<Entity, ServiceError>
    /// Adds an entity from a draft without an id: `POST /name`; answers the stored
    /// entity with the id the server chose.
    func create<Draft: Encodable & Sendable>(_ draft: Draft) -> Future<Entity, ServiceError>
}

extension Creatable {
    /// Adds `entity`: `POST /name` with its JSON.
    public func create(_ entity: Entity) -> Future<Entity, ServiceError> {
        request(.post, collectionResource, body: .json(entity))
    }

    /// Adds an entity from `draft`: `POST /name` with the draft's JSON.
    ///
    /// ```swift
    /// struct NewPost: Encodable { var userId: Int; var title: String; var body: String }
    /// let post = try await posts.create(NewPost(userId: 1, title: "Hi", body: "…")).value
    /// ```
    public func create<Draft: Encodable & Sendable>(_ draft: Draft) -> Future<Entity, ServiceError> {
        request(.post, collectionResource, body: .json(draft))
    }
}
