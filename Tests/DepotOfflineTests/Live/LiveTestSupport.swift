import Depot
import Foundation
import Testing

/// A note: the entity of the live-query tests of this target.
struct Note: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var title: String
}

/// A note to create: the server gives it an id.
struct NewNote: Encodable, Sendable {
    var title: String
}

/// `/notes`.
struct NoteRepository: CRUDRepository {
    typealias Entity = Note
    let backend: any Backend
    let name = "notes"
}

/// The next snapshot of `iterator`, failing the test when the watch ended.
func next<Value>(_ iterator: inout LiveWatch<Value>.Iterator) async throws -> Snapshot<Value> {
    try #require(await iterator.next())
}

/// The first of the next (at most 10) snapshots that passes `test`: a change may make more than
/// one snapshot on its way (one per outbox event). Records the ones that did not pass when
/// none does.
func first<Value>(
    _ iterator: inout LiveWatch<Value>.Iterator, where test: (Snapshot<Value>) -> Bool
) async throws -> Snapshot<Value> {
    var seen: [String] = []
    for _ in 0..<10 {
        let snapshot = try await next(&iterator)
        if test(snapshot) { return snapshot }
        seen.append("\(snapshot.source) pending \(snapshot.pendingWrites) \(snapshot.result)")
    }
    Issue.record("no snapshot passed the test among: \(seen)")
    throw CancellationError()
}
