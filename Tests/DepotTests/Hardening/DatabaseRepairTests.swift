import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// `InMemoryBackend(database:)` reads a db.json as json-server reads its file, and never
/// answers bytes that are not JSON `JSONDecoder` reads.
@Suite("InMemoryBackend database repair")
struct DatabaseRepairTests {
    /// A db.json with `record` as the only post.
    private func database(_ record: [UInt8]) -> Data {
        Data(#"{"posts": ["#.utf8) + Data(record) + Data("]}".utf8)
    }

    /// Every answer a reader could ask for, each decoded by Foundation.
    private func answersDecode(_ backend: InMemoryBackend) async throws {
        for path in ["posts", "posts/1", "db", "posts?q=a", "posts?_page=1"] {
            let response = try await backend.send(BackendRequest(path: path)).value
            #expect(throws: Never.self, "GET /\(path)") {
                _ = try JSONSerialization.jsonObject(with: response.body)
                _ = try JSONDecoder().decode(JSONValue.self, from: response.body)
            }
        }
    }

    @Test func invalidUTF8BecomesTheReplacementCharacterAsInNode() async throws {
        // 0xFF is never UTF-8; 0xC3 starts a sequence that the quote cuts short.
        let record =
            Array(#"{"id": 1, "title": "a"#.utf8) + [0xFF] + Array("b".utf8) + [0xC3]
            + Array(#"", "body": "ok"}"#.utf8)
        let backend = try InMemoryBackend(database: database(record))

        let post = try await backend.send(BackendRequest(path: "posts/1")).value
        let value = try JSONDecoder().decode(JSONValue.self, from: post.body)

        #expect(value["title"] == .string("a\u{FFFD}b\u{FFFD}"))
        #expect(value["body"] == .string("ok"))
        try await answersDecode(backend)
    }

    @Test func aLoneSurrogateEscapeBecomesTheReplacementCharacter() async throws {
        let record = Array(#"{"id": 1, "title": "x\ud800y", "body": "\udc00", "ok": "\ud83d\ude00"}"#.utf8)
        let backend = try InMemoryBackend(database: database(record))

        let value = try await JSONDecoder().decode(
            JSONValue.self, from: backend.send(BackendRequest(path: "posts/1")).value.body)

        #expect(value["title"] == .string("x\u{FFFD}y"))
        #expect(value["body"] == .string("\u{FFFD}"))
        #expect(value["ok"] == .string("😀"))
        try await answersDecode(backend)
    }

    @Test func numbersPastDoubleBecomeNullAndUnderflowBecomesZeroAsJSONStringifyWrites() async throws {
        let record = Array(#"{"id": 1, "big": 1e400, "small": -1e400, "fine": 1.5e300}"#.utf8)
        let backend = try InMemoryBackend(database: database(record))

        let value = try await JSONDecoder().decode(
            JSONValue.self, from: backend.send(BackendRequest(path: "posts/1")).value.body)

        #expect(value["big"] == .null)
        #expect(value["small"] == .null)
        #expect(value["fine"] == .double(1.5e300))
        try await answersDecode(backend)
    }

    private struct Measurement: Decodable {
        var id: Int
        var tiny: Double
    }

    @Test func aNumberThatUnderflowsIsWrittenAsZero() async throws {
        // Alone in its record, so nothing else forces the record to be written anew.
        let backend = try InMemoryBackend(database: database(Array(#"{"id": 1, "tiny": 1e-400}"#.utf8)))

        let body = try await backend.send(BackendRequest(path: "posts/1")).value.body

        #expect(try JSONDecoder().decode(Measurement.self, from: body).tiny == 0)
    }

    @Test func aRepeatedKeyKeepsItsLastValueForQueriesAndAnswersAlike() async throws {
        let record = Array(#"{"id": 1, "status": "old", "status": "new"}"#.utf8)
        let backend = try InMemoryBackend(database: database(record))

        let matches = try await backend.send(
            BackendRequest(path: "posts", query: [URLQueryItem(name: "status", value: "new")])
        ).value.body
        let value = try JSONDecoder().decode([JSONValue].self, from: matches)

        #expect(value.count == 1)
        #expect(value.first?["status"] == .string("new"))
    }

    @Test func manyCollectionsDoNotAddUpToDepth() throws {
        let names = (0..<600).map { #""c\#($0)": []"# }
        let backend = try InMemoryBackend(database: Data(("{" + names.joined(separator: ",") + "}").utf8))
        #expect(backend.records(in: "c599").isEmpty)
    }

    @Test func theDeepestAcceptedChildStaysDecodableWhenEmbedded() async throws {
        let deep = String(repeating: "[", count: 508) + String(repeating: "]", count: 508)
        let document =
            #"{"posts": [{"id": 1}], "#
            + #""tags": [{"id": 1, "postId": 1, "t": "# + deep + "}]}"
        let backend = try InMemoryBackend(database: Data(document.utf8))

        for path in ["posts?_embed=tags", "posts/1?_embed=tags", "tags?_expand=post", "db"] {
            let body = try await backend.send(BackendRequest(path: path)).value.body
            #expect(throws: Never.self, "GET /\(path)") {
                _ = try JSONDecoder().decode(JSONValue.self, from: body)
            }
        }
    }

    @Test func aCleanRecordKeepsItsOwnBytes() async throws {
        let text = #"{"title": "é ☃", "id": 1}"#
        let backend = try InMemoryBackend(database: database(Array(text.utf8)))

        let body = try await backend.send(BackendRequest(path: "posts/1")).value.body

        #expect(String(decoding: body, as: UTF8.self) == text)
    }

    @Test func nestingNoClientCouldDecodeIsRefusedAtItsOffset() throws {
        // The level `_embed` adds, root object, collection and record: 4 levels, then 509
        // more reach 513.
        let open = #"{"posts": [{"id": 1, "t": "# + String(repeating: "[", count: 509)
        let document = open + String(repeating: "]", count: 509) + "}]}"
        let error = #expect(throws: ServiceError.self) { try InMemoryBackend(database: Data(document.utf8)) }

        let description = error?.decodingDetails?.description ?? ""
        #expect(description.contains("nesting deeper than 512"))
        #expect(description.contains("at byte \(open.utf8.count - 1)"))
    }

    @Test func theDeepestAcceptedRecordIsAnsweredDecodably() async throws {
        let document =
            #"{"posts": [{"id": 1, "t": "# + String(repeating: "[", count: 508)
            + String(repeating: "]", count: 508) + "}]}"
        let backend = try InMemoryBackend(database: Data(document.utf8))

        try await answersDecode(backend)
    }

    @Test func aWrittenRecordNestsNoDeeperThanASeededOne() async throws {
        let backend = try InMemoryBackend(database: Data(#"{"posts": []}"#.utf8))
        func record(_ levels: Int) -> Data {
            Data(
                (#"{"t": "# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
                    + "}").utf8)
        }

        let refused = await backend.send(BackendRequest(method: .post, path: "posts", body: record(509)))
            .result
        let stored = await backend.send(BackendRequest(method: .post, path: "posts", body: record(508)))
            .result

        #expect(refused.failure?.statusCode == 400)
        #expect(stored.value?.status == 201)
        #expect(backend.records(in: "posts").count == 1)
    }
}
