import Depot
import Foundation

/// What a queued `PUT`, `PATCH` or `DELETE` was made on: the record as reads showed it when
/// the write was queued, and the validators the server gave with it (kept only while they
/// still describe that record: none once queued writes were laid over it).
struct WriteBase: Sendable, Hashable {
    /// The record as the user saw it.
    var record: [String: JSONValue]
    /// The stored answer's strong `ETag` (a weak one proves nothing of a write: RFC 9110
    /// §13.1.1 compares strongly).
    var entityTag: String?
    /// The stored answer's `Last-Modified`.
    var lastModified: String?

    /// The base of a record shown from `stored` with `laidOver` writes on top: the answer's
    /// validators only while no write changed what they describe.
    init(record: [String: JSONValue], stored: BackendResponse?, laidOver: Bool) {
        self.record = record
        guard let stored, !laidOver else { return }
        if let tag = stored.headers["ETag"], !tag.hasPrefix("W/") { entityTag = tag }
        lastModified = stored.headers["Last-Modified"]
    }

    /// A base read back from the outbox's columns.
    init(record: [String: JSONValue], entityTag: String?, lastModified: String?) {
        self.record = record
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Whether a replay can ask the server to check it (`If-Match`, `If-Unmodified-Since`)
    /// instead of reading the record first.
    var hasValidator: Bool { entityTag != nil || lastModified != nil }

    /// `request` made conditional on this base: `If-Match` with its strong `ETag`, else
    /// `If-Unmodified-Since` with its `Last-Modified`.
    func conditional(_ request: BackendRequest) -> BackendRequest {
        var request = request
        if let entityTag {
            request.headers["If-Match"] = entityTag
        } else if let lastModified {
            request.headers["If-Unmodified-Since"] = lastModified
        }
        return request
    }
}
