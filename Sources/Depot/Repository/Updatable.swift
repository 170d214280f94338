/// A repository whose entities can be replaced and patched.
public protocol Updatable: Repository where Entity: Codable {
    /// Replaces the stored entity with `entity`: `PUT /name/:id`.
    func update(_ entity: Entity) -> Future<Entity, ServiceError>
    /// Changes only the fields in `changes`: `PATCH /name/:id`.
    func patch<Changes: Encodable & Sendable>(_ id: Entity.ID, with changes: Changes) -> Future<
        Entity, ServiceError
    >
}

extension Updatable {
    /// Replaces the stored entity: `PUT /name/:id` with the entity's JSON.
    public func update(_ entity: Entity) -> Future<Entity, ServiceError> {
        request(.put, resource(for: entity.id), body: .json(entity))
    }

    /// Merges `changes` into the stored entity: `PATCH /name/:id`.
    ///
    /// ```swift
    /// posts.patch(1, with: ["title": "New title"])
    /// ```
    public func patch<Changes: Encodable & Sendable>(_ id: Entity.ID, with changes: Changes) -> Future<
        Entity, ServiceError
    > {
        request(.patch, resource(for: id), body: .json(changes))
    }

    /// Merges `changes` into the stored `entity`: `PATCH /name/:id` with the
    /// entity's id, beside ``update(_:)`` and ``Deletable/delete(_:)`` that also take
    /// the entity.
    ///
    /// ```swift
    /// let renamed = try await posts.patch(post, with: ["title": "New title"]).value
    /// ```
    public func patch<Changes: Encodable & Sendable>(_ entity: Entity, with changes: Changes) -> Future<
        Entity, ServiceError
    > {
        patch(entity.id, with: changes)
    }

    /// Merges the fields of a dictionary literal into the stored entity: `PATCH /name/:id`.
    /// Values may mix JSON literals (strings, numbers, booleans, arrays, objects), and `nil`
    /// sends `null`, which clears the field.
    ///
    /// ```swift
    /// posts.patch(1, with: ["title": "a", "views": 3, "draft": true, "summary": nil])
    /// ```
    public func patch(_ id: Entity.ID, with changes: [String: JSONValue?]) -> Future<Entity, ServiceError> {
        patch(id, with: JSONValue(changes))
    }

    /// Merges the fields of a dictionary literal into the stored `entity`: `PATCH /name/:id`
    /// with the entity's id; `nil` sends `null`.
    ///
    /// ```swift
    /// let renamed = try await posts.patch(post, with: ["title": "New title", "summary": nil]).value
    /// ```
    public func patch(_ entity: Entity, with changes: [String: JSONValue?]) -> Future<Entity, ServiceError> {
        patch(entity.id, with: JSONValue(changes))
    }
}
