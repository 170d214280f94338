import Depot
import Foundation

extension InMemoryBackend {
    /// A backend seeded with ``JSONPlaceholderData``: JSONPlaceholder's six collections
    /// (10 users, 100 posts, 500 comments, 100 albums, 5000 photos, 200 todos), generated
    /// the same on every run for the same `seed`.
    ///
    /// The one-line seed for an app's tests and previews:
    ///
    /// ```swift
    /// let backend = InMemoryBackend.jsonPlaceholder()
    /// let post = try await PostRepository(backend: backend).findByID(1).value
    /// ```
    ///
    /// Each call returns a backend of its own: writes to one are not seen by another.
    public static func jsonPlaceholder(seed: UInt64 = 1) -> InMemoryBackend {
        do {
            return try InMemoryBackend(database: JSONPlaceholderData.database(seed: seed))
        } catch {
            // The data is generated here, never read from outside: always a valid db.json.
            preconditionFailure("the generated JSONPlaceholder database did not load: \(error)")
        }
    }
}
