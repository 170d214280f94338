extension Updatable {
    /// Replaces the stored entity only if the server still has the version `entityTag`
    /// names: `PUT /name/:id` with `If-Match`.
    ///
    /// Read the tag from the `ETag` of the answer you edited (or let ``CacheMiddleware``
    /// add it, with `conditionalWrites`). When someone changed the entity meanwhile, the
    /// server answers `412` and the future fails with an error whose
    /// ``ServiceError/isPreconditionFailed`` is `true`, instead of overwriting their change.
    ///
    /// ```swift
    /// let response = try await posts.send(.get, posts.segments(for: 1)).value
    /// var post = try posts.coding.decode(Post.self, from: response.body)
    /// post.title = "Edited"
    /// let saved = try await posts.update(post, ifMatch: response.headers["ETag"] ?? "*").value
    /// ```
    public func update(_ entity: Entity, ifMatch entityTag: String) -> Future<Entity, ServiceError> {
        request(.put, segments(for: entity.id), body: .json(entity), headers: ["If-Match": entityTag])
    }
}
