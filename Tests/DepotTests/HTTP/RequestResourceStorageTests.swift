import Foundation
import Testing

@testable import Depot

/// A request's resource as a store keeps it with a queued write (`stored`, read back by
/// `init(stored:)`).
@Suite("RequestResource: kept with a queued write")
struct RequestResourceStorageTests {
    static let kept: [RequestResource] = [
        .collection(["posts"]),
        .record("7", in: ["posts"]),
        .collection(["posts"], under: ["users", "1"]),
        .record("7", in: ["posts"], under: ["users", "1"]),
        .record("7", in: ["v2", "posts"]),
        .collection(["comments"], under: ["teams", "3", "posts", "-1"]),
        .singular(["profile"]),
        .singular(["me", "settings"]),
        .record("7", in: ["posts"]).appending("publish"),
        .collection(["posts"]).appending("archive-all"),
        .record("a/b c", in: ["files"]),
        .record("7", in: ["reviews"]).referencing(["author", "post"]),
        .collection(["reviews"], under: ["users", "1"]).referencing(["author"]),
        .record("7", in: ["reviews"]).referencing(.none),
        .record("7", in: ["reviews"]).referencing(["author"]).appending("flag"),
    ]

    @Test(
        "read back as it was: segments, parent, collection, id, action, singular, foreign keys",
        arguments: kept)
    func roundTrip(_ resource: RequestResource) throws {
        let back = try #require(RequestResource(stored: resource.stored))
        #expect(back == resource)
        #expect(back.segments == resource.segments)
        #expect(back.parent == resource.parent)
        #expect(back.collection == resource.collection)
        #expect(back.id == resource.id)
        #expect(back.action == resource.action)
        #expect(back.isSingular == resource.isSingular)
        #expect(back.foreignKeys == resource.foreignKeys)
        // Through the JSON text a store writes, too.
        let text = try JSONEncoder().encode(resource.stored)
        #expect(RequestResource(stored: try JSONDecoder().decode(JSONValue.self, from: text)) == resource)
    }

    @Test("the foreign keys are kept as the repository stated them, json-server's convention when none")
    func foreignKeys() throws {
        let named = try #require(
            RequestResource(
                stored: RequestResource.record("7", in: ["reviews"]).referencing(["author"]).stored))
        #expect(named.foreignKeys.contains("author"))
        #expect(!named.foreignKeys.contains("externalId"))
        let convention = try #require(
            RequestResource(stored: RequestResource.record("7", in: ["comments"]).stored))
        #expect(convention.foreignKeys == .jsonServer)
        #expect(convention.foreignKeys.contains("postId"))
        #expect(!convention.foreignKeys.contains("author"))
        let none = try #require(
            RequestResource(stored: RequestResource.record("7", in: ["notes"]).referencing(.none).stored))
        #expect(none.foreignKeys == ForeignKeys.none)
        #expect(!none.foreignKeys.contains("postId"))
    }

    static let damaged: [(String, JSONValue)] = [
        ("not an object", .array([.string("posts")])),
        ("no segments", ["scope": 0, "collection": 1, "id": false, "singular": false]),
        (
            "segments not an array",
            ["segments": "posts", "scope": 0, "collection": 1, "id": false, "singular": false]
        ),
        (
            "a segment not a string",
            ["segments": ["posts", 7], "scope": 0, "collection": 1, "id": true, "singular": false]
        ),
        ("no scope", ["segments": ["posts"], "collection": 1, "id": false, "singular": false]),
        (
            "a negative scope",
            ["segments": ["posts"], "scope": -1, "collection": 1, "id": false, "singular": false]
        ),
        (
            "the scope past the collection",
            [
                "segments": ["users", "1", "posts"], "scope": 3, "collection": 2, "id": false,
                "singular": false,
            ]
        ),
        (
            "the collection past the segments",
            ["segments": ["posts"], "scope": 0, "collection": 2, "id": false, "singular": false]
        ),
        (
            "an id past the segments",
            ["segments": ["posts"], "scope": 0, "collection": 1, "id": true, "singular": false]
        ),
        (
            "id not a bool",
            ["segments": ["posts", "7"], "scope": 0, "collection": 1, "id": 1, "singular": false]
        ),
        ("no singular", ["segments": ["posts", "7"], "scope": 0, "collection": 1, "id": true]),
    ]

    @Test(
        "a damaged stored value reads as nil, never a resource that addresses something else",
        arguments: damaged)
    func damagedIsNil(_ damaged: (String, JSONValue)) {
        #expect(RequestResource(stored: damaged.1) == nil, "\(damaged.0)")
    }
}
