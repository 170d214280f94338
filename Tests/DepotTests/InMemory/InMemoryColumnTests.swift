import Foundation
import JSONServerEngine
import Testing

@testable import Depot
@testable import DepotInMemory

/// The columns InMemoryBackend keeps of the fields queries read: kept in step with every
/// write, they must answer exactly as a backend that reads the same records afresh.
@Suite("InMemoryBackend: query columns")
struct InMemoryColumnTests {
    /// The queries each step checks: filters of every operator, a dotted path, full text,
    /// sorts on several keys with missing and `null` values, pages.
    private static let queries: [[URLQueryItem]] = [
        [.init(name: "group", value: "3")],
        [.init(name: "group", value: "1"), .init(name: "group", value: "7")],
        [.init(name: "group_ne", value: "2")],
        [.init(name: "group_gte", value: "4"), .init(name: "group_lte", value: "6")],
        [.init(name: "name_like", value: "^b")],
        [.init(name: "tag", value: "null")],
        [.init(name: "meta.size", value: "2")],
        [.init(name: "q", value: "ex")],
        [.init(name: "_sort", value: "name,id"), .init(name: "_order", value: "desc,asc")],
        [
            .init(name: "_sort", value: "tag"), .init(name: "_page", value: "2"),
            .init(name: "_limit", value: "7"),
        ],
        [
            .init(name: "group_gte", value: "2"), .init(name: "_sort", value: "meta.size"),
            .init(name: "_start", value: "3"), .init(name: "_end", value: "12"),
        ],
    ]

    private static func record(_ id: Int, _ random: inout SplitMix64) -> String {
        let names = ["alpha", "beta", "Beta", "gamma", "éclair", "\u{E000}x", "😀", "bex", ""]
        let name = names[Int(random.next() % UInt64(names.count))]
        let group = random.next() % 10
        var fields = [#""id": \#(id)"#, #""group": \#(group)"#, #""name": "\#(name)""#]
        switch random.next() % 3 {
        case 0: fields.append(#""tag": null"#)
        case 1: fields.append(#""tag": "t\#(random.next() % 4)""#)
        default: break
        }
        if random.next() % 2 == 0 { fields.append(#""meta": {"size": \#(random.next() % 4)}"#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    @Test("after any mix of writes, every query answers as a backend seeded afresh with the same records")
    func columnsFollowWrites() async throws {
        var random = SplitMix64(seed: 16)
        let seed = (1...120).map { Self.record($0, &random) }.joined(separator: ",")
        let backend = try InMemoryBackend(database: Data(#"{"items": [\#(seed)]}"#.utf8))
        var nextID = 121

        for step in 0..<160 {
            // Read first, so the columns exist before the writes that must keep them.
            let query = Self.queries[step % Self.queries.count]
            let live = try await backend.send(BackendRequest(path: "items", query: query)).value
            let all = try await backend.send(BackendRequest(path: "items")).value.body
            let fresh = try InMemoryBackend(database: Data(#"{"items": "#.utf8) + all + Data("}".utf8))
            let expected = try await fresh.send(BackendRequest(path: "items", query: query)).value
            #expect(live.body == expected.body, "step \(step), query \(query)")
            #expect(live.headers["X-Total-Count"] == expected.headers["X-Total-Count"], "step \(step)")

            let id = Int(random.next() % UInt64(nextID - 1)) + 1
            switch random.next() % 4 {
            case 0:
                _ = await backend.send(
                    BackendRequest(
                        method: .post, path: "items", body: Data(Self.record(nextID, &random).utf8))
                ).result
                nextID += 1
            case 1:
                _ = await backend.send(
                    BackendRequest(
                        method: .put, path: "items/\(id)", body: Data(Self.record(id, &random).utf8))
                ).result
            case 2:
                let patch =
                    random.next() % 2 == 0 ? #"{"group": 3, "tag": null}"# : #"{"name": "bex", "meta": {}}"#
                _ = await backend.send(
                    BackendRequest(method: .patch, path: "items/\(id)", body: Data(patch.utf8))
                )
                .result
            default:
                _ = await backend.send(BackendRequest(method: .delete, path: "items/\(id)")).result
            }
        }
    }

    @Test("strings sort by UTF-16 code units, as JavaScript compares them, whatever their scalars")
    func utf16Order() {
        let pieces = ["", "a", "b", "é", "\u{E000}", "\u{FFFF}", "😀", "\u{10000}", "z", "\u{7F}", "\u{80}"]
        var random = SplitMix64(seed: 7)
        var strings: [String] = []
        for _ in 0..<300 {
            let length = Int(random.next() % 4)
            strings.append(
                (0..<length).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined())
        }
        for (left, right) in zip(strings, strings.shuffled(using: &random)) {
            let expected =
                left.utf16.elementsEqual(right.utf16)
                ? 0 : (left.utf16.lexicographicallyPrecedes(right.utf16) ? -1 : 1)
            #expect(
                JSText.utf16Order(left, right) == expected,
                "\(left.debugDescription) vs \(right.debugDescription)")
        }
        // Where UTF-8 order and UTF-16 order part: U+FFFF sorts after U+10000 in UTF-8.
        #expect(JSText.utf16Order("\u{FFFF}", "\u{10000}") == 1)
        #expect(JSText.utf16Order("a\u{E000}", "a😀") == 1)
    }

    @Test("a field read from a record's bytes is the field a full parse reads, whatever lies before it")
    func memberFromBytes() throws {
        let record = Data(
            #"""
            { "a" : "}\"]{[" , "n":[1,{"x":"]"}, -2.5e3, true, null],"o":{"id":{"id":1}},
              "ti\u0074le" : "esc\\aped", "e":"\u00e9", "last": false }
            """#.utf8)
        let parsed = try #require(try JSONParser.parse(record).get().objectValue)
        for key in ["a", "n", "o", "title", "e", "last", "missing", "ti\\u0074le", "o.id.id"] {
            let read = record.withUnsafeBytes { JSONParser.member(key, in: $0) }
            #expect(read == parsed[key], "\(key)")
        }
        let paths = ["o.id.id", "n.1.x", "n.4", "n.9", "title", "o.missing", "a.b"]
        for path in paths {
            let read = record.withUnsafeBytes { PropertyPath.value(in: $0, path) }
            #expect(read == PropertyPath.value(parsed, path), "\(path)")
        }
        #expect(record.withUnsafeBytes { PropertyPath.value(in: $0, "o.id.id") } == .int(1))
        #expect(Data("[1]".utf8).withUnsafeBytes { JSONParser.member("a", in: $0) } == nil)
        #expect(Data("{}".utf8).withUnsafeBytes { JSONParser.member("a", in: $0) } == nil)
    }

    @Test("a member of a whole object from outside is what a full parse reads: refused where the parse fails")
    func memberOfWholeObject() {
        func id(_ text: String) -> JSONValue? {
            Data(text.utf8).withUnsafeBytes { JSONParser.member("id", inWhole: $0) }
        }
        func nested(_ levels: Int) -> String {
            #"{"id": 2, "a": "# + String(repeating: "[", count: levels)
                + String(repeating: "]", count: levels) + "}"
        }
        let accepted: [(String, JSONValue)] = [
            (#"{"id": 2, "title": "a } \" ]"}"#, .int(2)),
            (#" {"a": {"id": 9}, "list": [{"id": 8}], "id": "7"} "# + "\n", .string("7")),
            (#"{"i\u0064": 3}"#, .int(3)),
            (#"{"id": 1, "id": 2}"#, .int(2)),  // the last, as a full parse keeps it
            (#"{"id": 2, "a": [1, {"b": null}], "c": -0.5e3, "d": true}"#, .int(2)),
            // The object is a level: with it, the deepest nesting a parse accepts.
            (nested(JSONParser.maximumDepth - 1), .int(2)),
        ]
        for (text, expected) in accepted {
            #expect(id(text) == expected, "\(text.prefix(60))")
        }
        // No `id` in an object a parse accepts, or not a whole valid object: cut short, followed
        // by more, a value a parse refuses, nested one level too deep, or no object at all.
        let refused = [
            "{}", #"{"title": "no id"}"#, #"{"id": 2, "title": "cut"#, #"{"id": 2,"#, #"{"id": 2"#,
            #"{"id": 2} {"#, #"{"id": 2}x"#, #"[{"id": 2}]"#, "", #"{"id" 2}"#, #"{"id": 2, "a": [1, 2}}"#,
            #"{"id": 2, "a": NaN}"#, #"{"id": 2, "a": }"#, #"{"id": 2, "a": 01}"#, #"{"id": 2, "a": "\q"}"#,
            #"{"id": 2, "a": tru}"#, "{\"id\": 2, \"a\": \"\u{01}\"}", nested(JSONParser.maximumDepth),
        ]
        for text in refused {
            #expect(id(text) == nil, "\(text.prefix(60))")
        }
        // Whatever it reads, a full parse of the same bytes reads.
        for text in refused + accepted.map(\.0) {
            let parsed = try? JSONParser.parse(Data(text.utf8)).get().objectValue?["id"]
            #expect(id(text) == parsed ?? nil, "\(text.prefix(60))")
        }
    }

    @Test("records written over many times answer whole, each with its latest bytes and nothing of the old")
    func reclaimedBytes() async throws {
        let seed = (1...40).map { #"{"id": \#($0), "postId": \#($0 % 4), "body": "seed \#($0)"}"# }
        let backend = try InMemoryBackend(
            database: Data(#"{"posts": [{"id": 0}, {"id": 1}, {"id": 2}, {"id": 3}], "comments": ["#.utf8)
                + Data(seed.joined(separator: ",").utf8) + Data("]}".utf8))
        var expected: [Int: String] = [:]
        for round in 0..<60 {
            for id in 1...40 {
                let body = String(repeating: "x", count: (round * 7 + id) % 90) + " \(round)"
                expected[id] = body
                let changes = Data(#"{"body": "\#(body)"}"#.utf8)
                _ = try await backend.send(
                    BackendRequest(method: .patch, path: "comments/\(id)", body: changes)
                )
                .value
            }
        }
        for id in 1...40 {
            let answer = try await backend.send(BackendRequest(path: "comments/\(id)")).value.body
            let object = try #require(try JSONParser.parse(answer).get().objectValue)
            #expect(object == ["id": .int(id), "postId": .int(id % 4), "body": .string(expected[id] ?? "")])
        }
        // Deleting post 2 removes its comments (read from the postId column) and nothing else.
        _ = try await backend.send(BackendRequest(method: .delete, path: "posts/2")).value
        let left = try await backend.send(BackendRequest(path: "comments")).value.body
        let ids = try #require(try JSONParser.parse(left).get().arrayValue).compactMap {
            $0.objectValue?["id"]
        }
        #expect(ids == (1...40).filter { $0 % 4 != 2 }.map { JSONValue.int($0) })
    }
}
