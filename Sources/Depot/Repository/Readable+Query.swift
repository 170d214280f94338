extension Readable {
    /// The entity with `id`, read with `query`: `GET /name/:id?…`.
    ///
    /// For parameters a server reads on one entity, such as json-server's
    /// `_embed` and `_expand`, decoded by an entity type that has the added fields:
    ///
    /// ```swift
    /// struct PostWithComments: Decodable, Identifiable, Sendable {
    ///     var id: Int
    ///     var title: String
    ///     var comments: [Comment]
    /// }
    /// let post = try await postsWithComments.findByID(1, query: Query().embed("comments")).value
    /// ```
    public func findByID(_ id: Entity.ID, query: Query) -> Future<Entity, ServiceError> {
        request(.get, resource(for: id), query: query)
    }
}
