/// A repository whose entities can be deleted.
public protocol Deletable: Repository {
    /// Deletes `entity`: `DELETE /name/:id`.
    func delete(_ entity: Entity) -> Future<Void, ServiceError>
    /// Deletes the entity with `id`: `DELETE /name/:id`; ``ServiceError/notFound(_:)``
    /// when there is none.
    func delete(id: Entity.ID) -> Future<Void, ServiceError>
}

extension Deletable {
    /// Deletes `entity`: `DELETE /name/:id`.
    public func delete(_ entity: Entity) -> Future<Void, ServiceError> {
        delete(id: entity.id)
    }

    /// Deletes the entity with `id`: `DELETE /name/:id`, ignoring any body.
    public func delete(id: Entity.ID) -> Future<Void, ServiceError> {
        send(.delete, resource(for: id)).map { _ in }
    }
}
