/// A repository whose entities can be listed and read by id.
public protocol Readable: Repository where Entity: Decodable {
    /// Every entity: `GET /name`.
    func findAll() -> Future<[Entity], ServiceError>
    /// The entities that match `query`: `GET /name?userId=1`.
    func findAll(query: Query) -> Future<[Entity], ServiceError>
    /// The entity with `id`: `GET /name/:id`; ``ServiceError/notFound(_:)`` when there is none.
    func findByID(_ id: Entity.ID) -> Future<Entity, ServiceError>
}

extension Readable {
    /// Every entity: `GET /name`.
    public func findAll() -> Future<[Entity], ServiceError> {
        findAll(query: Query())
    }

    /// The entities that match `query`: `GET /name?…`.
    public func findAll(query: Query) -> Future<[Entity], ServiceError> {
        request(.get, collectionResource, query: query)
    }

    /// The entity with `id`: `GET /name/:id`.
    public func findByID(_ id: Entity.ID) -> Future<Entity, ServiceError> {
        request(.get, resource(for: id))
    }
}
