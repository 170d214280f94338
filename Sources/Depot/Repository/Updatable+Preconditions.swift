extension Updatable {
    /// Replaces the stored entity only if the server still has the version `entityTag`
    /// names: `PUT /name/:id` with `If-Match`.
    ///
    /// Read the tag from the `ETag` of the answer you edited (or let ``CacheMiddleware``
    /// add it, with `conditionalWrites`). When someone changed the entity meanwhile, the
    /// server answers `412` and the future fails with an error whose
    /// ``ServiceError/isPreconditionFailed`` is `true`, instead of overwriting their change.
    ///
    /// `If-Match` compares tags strongly (RFC 9110 §13.1.1): a weak tag (`W/"…"`, as
    /// Express and json-server send) never matches, so a standards-following server
    /// refuses every such write. Use it with strong tags only.
    ///
    /// ```swift
    /// let response = try await posts.send(.get, posts.segments(for: 1)).value
    /// var post = try posts.coding.decode(Post.self, from: response.body)
    /// post.title = "Edited"
    /// if let tag = response.headers["ETag"], !tag.hasPrefix("W/") {
    ///     let saved = try await posts.update(post, ifMatch: tag).value
    /// }
    /// ```
    public func update(_ entity: Entity, ifMatch entityTag: String) -> Future<Entity, ServiceError> {
        request(.put, resource(for: entity.id), body: .json(entity), headers: ["If-Match": entityTag])
    }
}
