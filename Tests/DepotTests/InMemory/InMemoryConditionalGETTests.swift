import Foundation
import Testing

@testable import Depot
@testable import DepotInMemory

/// json-server answers through Express, which tags every `GET` answer with a weak `ETag`
/// and answers a matching `If-None-Match` with `304`: so does ``InMemoryBackend``.
@Suite("InMemoryBackend conditional GET")
struct InMemoryConditionalGETTests {
    private static func backend() throws -> InMemoryBackend {
        try InMemoryBackend(
            database: Data(#"{"posts": [{"id": 1, "title": "Hello"}, {"id": 2, "title": "Bye"}]}"#.utf8))
    }

    private static func get(_ path: String, _ headers: HTTPHeaders = [:]) -> BackendRequest {
        BackendRequest(path: path, headers: headers)
    }

    @Test func aGETCarriesAWeakETagThatFollowsTheBody() async throws {
        let backend = try Self.backend()

        let one = try await backend.send(Self.get("posts/1")).value
        let same = try await backend.send(Self.get("posts/1")).value
        let other = try await backend.send(Self.get("posts/2")).value
        let list = try await backend.send(Self.get("posts")).value

        let tag = try #require(one.headers["ETag"])
        #expect(tag.hasPrefix("W/\"") && tag.hasSuffix("\""))
        #expect(same.headers["ETag"] == tag)
        #expect(other.headers["ETag"] != tag)
        #expect(list.headers["ETag"] != nil)

        // A change that keeps the body's length still changes the tag.
        var tags: [String?] = []
        var lengths: [Int] = []
        for title in ["Hallo", "Hullo"] {
            _ = try await backend.send(
                BackendRequest(method: .patch, path: "posts/1", body: Data(#"{"title": "\#(title)"}"#.utf8))
            ).value
            let changed = try await backend.send(Self.get("posts/1")).value
            tags.append(changed.headers["ETag"])
            lengths.append(changed.body.count)
        }
        #expect(lengths[0] == lengths[1])
        #expect(tags[0] != nil && tags[0] != tags[1])
    }

    @Test func aRecordsStoredTagIsTheTagOfItsBodyAndHEADCarriesNone() async throws {
        let backend = try Self.backend()
        let one = try await backend.send(Self.get("posts/1")).value
        #expect(one.headers["ETag"] == ConditionalGET.entityTag(for: one.body))
        #expect(one.headers.values(for: "ETag").count == 1)
        let embedded = try await backend.send(Self.get("posts/1?_embed=comments")).value
        #expect(embedded.headers["ETag"] == ConditionalGET.entityTag(for: embedded.body))
        let head = try await backend.send(BackendRequest(method: .head, path: "posts/1")).value
        #expect(head.headers["ETag"] == nil)

        _ = try await backend.send(
            BackendRequest(method: .put, path: "posts/1", body: Data(#"{"title": "Replaced"}"#.utf8))
        ).value
        let replaced = try await backend.send(Self.get("posts/1")).value
        #expect(replaced.headers["ETag"] == ConditionalGET.entityTag(for: replaced.body))
        #expect(replaced.headers["ETag"] != one.headers["ETag"])
    }

    @Test func aMatchingIfNoneMatchIsA304WithoutABody() async throws {
        let backend = try Self.backend()
        let tag = try #require(try await backend.send(Self.get("posts/1")).value.headers["ETag"])

        let strong = String(tag.dropFirst(2))  // weak comparison: W/"x" matches "x"
        let answers = try await [
            backend.send(Self.get("posts/1", ["If-None-Match": tag])).value,
            backend.send(Self.get("posts/1", ["If-None-Match": "\"other\", " + tag])).value,
            backend.send(Self.get("posts/1", ["If-None-Match": strong])).value,
            backend.send(Self.get("posts/1", ["If-None-Match": "*"])).value,
        ]

        for answer in answers {
            #expect(answer.status == 304)
            #expect(answer.body.isEmpty)
            #expect(answer.headers["ETag"] == tag)
            #expect(answer.headers["Content-Type"] == nil)
        }
    }

    @Test(
        arguments: [
            ["If-None-Match": "W/\"stale\""],
            ["If-None-Match": "*", "Cache-Control": "no-cache"],
            ["If-Modified-Since": "Tue, 15 Nov 1994 12:45:26 GMT"],  // json-server sends no Last-Modified
        ] as [HTTPHeaders])
    func otherwiseTheFullAnswerComes(headers: HTTPHeaders) async throws {
        let backend = try Self.backend()

        let answer = try await backend.send(Self.get("posts/1", headers)).value

        #expect(answer.status == 200)
        #expect(answer.body.isEmpty == false)
    }

    @Test func aChangeChangesTheTag() async throws {
        let backend = try Self.backend()
        let tag = try #require(try await backend.send(Self.get("posts/1")).value.headers["ETag"])

        _ = try await backend.send(
            BackendRequest(method: .patch, path: "posts/1", body: Data(#"{"title":"Edited"}"#.utf8))
        ).value
        let answer = try await backend.send(Self.get("posts/1", ["If-None-Match": tag])).value

        #expect(answer.status == 200)
        #expect(answer.headers["ETag"] != tag)
    }

    @Test func writesErrorsAndHeadCarryNoTag() async throws {
        let backend = try Self.backend()

        let created = try await backend.send(
            BackendRequest(method: .post, path: "posts", body: Data(#"{"title":"New"}"#.utf8))
        ).value
        let head = try await backend.send(BackendRequest(method: .head, path: "posts/1")).value
        let missing = await backend.send(Self.get("posts/99", ["If-None-Match": "*"])).result

        #expect(created.headers["ETag"] == nil)
        #expect(head.headers["ETag"] == nil)
        #expect(missing.failure?.statusCode == 404)
    }

    @Test func aRouteWithLastModifiedAnswersIfModifiedSince() async throws {
        let backend = InMemoryBackend()
        backend.route(.get, "report") { _ in
            .json(["total": 3], headers: ["Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT"])
        }

        let same = try await backend.send(
            Self.get("report", ["If-Modified-Since": "Tue, 15 Nov 1994 12:45:26 GMT"])
        ).value
        let older = try await backend.send(
            Self.get("report", ["If-Modified-Since": "Mon, 14 Nov 1994 12:45:26 GMT"])
        ).value

        #expect(same.status == 304)
        #expect(older.status == 200)
    }

    @Test func aDelayedAnswerIsTaggedToo() async throws {
        let backend = try Self.backend()
        backend.latency = 0.01
        let tag = try #require(try await backend.send(Self.get("posts/1")).value.headers["ETag"])

        let answer = try await backend.send(Self.get("posts/1", ["If-None-Match": tag])).value

        #expect(answer.status == 304)
    }

    @Test func theCacheMiddlewareWorksInProcessAndARepositoryDecodesOncePerCall() async throws {
        let backend = try Self.backend()
        let tap = NetworkTap()
        let counter = DecodeCounter()
        let cache = CacheMiddleware()
        let posts = CountedPostRepository(backend: backend.with(cache, tap), coding: counter.coding)

        let first = try await posts.findByID(1).value
        let second = try await posts.findByID(1).value

        #expect(first == second)
        #expect(counter.count == 2)
        let answers = tap.responses
        #expect(answers.map(\.status) == [200, 304])
        #expect(answers.last?.body.isEmpty == true)
        #expect(backend.requests.last?.headers["If-None-Match"] == answers.first?.headers["ETag"])

        // After a write through the same backend, the next read is a full 200.
        _ = try await posts.update(CountedPost(id: 1, title: "Edited")).value
        let edited = try await posts.findByID(1).value
        #expect(edited.title == "Edited")
        #expect(tap.responses.last?.status == 200)
        #expect(backend.requests.last?.isConditional == false)
    }
}
