extension ServiceError {
    /// Whether the server refused a conditional request because the resource changed
    /// since it was read: `412 Precondition Failed`, the answer to an `If-Match` or
    /// `If-Unmodified-Since` that no longer holds.
    ///
    /// Read the resource again, reapply the change (or ask the user), and retry:
    ///
    /// ```swift
    /// do throws(ServiceError) {
    ///     _ = try await posts.update(edited, ifMatch: etag).value
    /// } catch let error where error.isPreconditionFailed {
    ///     reloadAndAskTheUser(edited)
    /// } catch {
    ///     show(error.localizedDescription)
    /// }
    /// ```
    public var isPreconditionFailed: Bool {
        if case .clientError(let response) = self { return response.status == 412 }
        return false
    }

    /// Whether the server requires a conditional request (`428 Precondition
    /// Required`): send the write again with `If-Match` (see ``CacheMiddleware``'s
    /// `conditionalWrites`).
    public var isPreconditionRequired: Bool {
        if case .clientError(let response) = self { return response.status == 428 }
        return false
    }
}
