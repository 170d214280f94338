import Depot
import Testing

@testable import DepotOffline

/// The three-way merge as a table: base, mine (`nil`: a delete), theirs (`nil`: gone), and
/// what the replay does.
@Suite("Conflicts: the three-way merge")
struct ThreeWayMergeTests {
    typealias Record = [String: JSONValue]

    static let base: Record = ["id": 1, "title": "T", "body": "B", "views": 1]

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var base: Record = ThreeWayMergeTests.base
        var mine: Record?
        var theirs: Record?
        var expected: ThreeWayMerge.Outcome
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "nobody else changed it", mine: ["id": 1, "title": "Mine", "body": "B", "views": 1],
            theirs: base, expected: .unchanged),
        Case(name: "a delete of an unchanged record", mine: nil, theirs: base, expected: .unchanged),
        Case(
            name: "other fields changed on each side",
            mine: ["id": 1, "title": "Mine", "body": "B", "views": 1],
            theirs: ["id": 1, "title": "T", "body": "Theirs", "views": 1],
            expected: .merged(
                record: ["id": 1, "title": "Mine", "body": "Theirs", "views": 1], changes: ["title": "Mine"])),
        Case(
            name: "the same field to the same value, another changed by theirs",
            mine: ["id": 1, "title": "Same", "body": "B", "views": 1],
            theirs: ["id": 1, "title": "Same", "body": "B", "views": 2], expected: .alreadyApplied),
        Case(
            name: "the write applied before a crash",
            mine: ["id": 1, "title": "Mine", "body": "B", "views": 1],
            theirs: ["id": 1, "title": "Mine", "body": "B", "views": 1], expected: .alreadyApplied),
        Case(
            name: "the same field to different values",
            mine: ["id": 1, "title": "Mine", "body": "B", "views": 5],
            theirs: ["id": 1, "title": "Theirs", "body": "B", "views": 9],
            expected: .conflict(.sameFields, fields: ["title", "views"])),
        Case(
            name: "a field mine removes that theirs changed",
            mine: ["id": 1, "title": "T", "views": 1],
            theirs: ["id": 1, "title": "T", "body": "Theirs", "views": 1],
            expected: .conflict(.sameFields, fields: ["body"])),
        Case(
            name: "a field mine removes, another theirs adds",
            mine: ["id": 1, "title": "T", "views": 1],
            theirs: ["id": 1, "title": "T", "body": "B", "views": 1, "tags": ["a"]],
            expected: .merged(record: ["id": 1, "title": "T", "views": 1, "tags": ["a"]], changes: [:])),
        Case(
            name: "a delete of a changed record", mine: nil,
            theirs: ["id": 1, "title": "Theirs", "body": "B", "views": 1],
            expected: .conflict(.deletedWhereChanged, fields: [])),
        Case(
            name: "an edit of a deleted record", mine: ["id": 1, "title": "Mine", "body": "B", "views": 1],
            theirs: nil, expected: .conflict(.changedWhereDeleted, fields: [])),
        Case(name: "deleted on both sides", mine: nil, theirs: nil, expected: .alreadyGone),
        Case(
            name: "an id in mine that differs is no change",
            mine: ["id": 2, "title": "T", "body": "B", "views": 1],
            theirs: ["id": 1, "title": "T", "body": "B", "views": 7],
            expected: .alreadyApplied),
        Case(
            name: "nested values compare whole", base: ["id": 1, "meta": ["a": 0]],
            mine: ["id": 1, "meta": ["a": 1]], theirs: ["id": 1, "meta": ["a": 2]],
            expected: .conflict(.sameFields, fields: ["meta"])),
    ]

    @Test("each case", arguments: cases)
    func merge(_ row: Case) {
        #expect(ThreeWayMerge.merge(base: row.base, mine: row.mine, theirs: row.theirs) == row.expected)
    }
}
