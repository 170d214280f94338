import Depot
import DepotInMemory
import Foundation

/// An entity keyed by strings, to check that ids stay one path segment.
struct Note: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var text: String
}

struct NoteRepository: CRUDRepository {
    typealias Entity = Note
    let backend: any Backend
    let name = "notes"
}

/// A repository whose entity needs a field the data lacks, to provoke `.decoding`.
struct StrictPost: Codable, Identifiable, Sendable {
    var id: Int
    var rating: Double
}

struct StrictPostRepository: Readable {
    typealias Entity = StrictPost
    let backend: any Backend
    let name = "posts"
}

/// A draft that cannot be encoded as JSON.
struct BrokenDraft: Encodable, Sendable {
    var score = Double.nan
}

enum Seed {
    /// A backend with the generated JSONPlaceholder data set (10 users, 100 posts, …).
    static func placeholder() throws -> InMemoryBackend {
        InMemoryBackend.jsonPlaceholder()
    }

    /// The JSON object a request carried.
    static func json(_ request: BackendRequest?) -> [String: JSONValue]? {
        guard let body = request?.body else { return nil }
        return try? JSONDecoder().decode([String: JSONValue].self, from: body)
    }
}
