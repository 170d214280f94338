import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// Transfers through middleware: a retry sends the file again from disk, logs count the
/// bytes of files, and the validator cache leaves downloads alone.
@Suite struct TransferMiddlewareTests {
    @Test("a PUT from a file answered 503 is retried, and the retry sends the whole file again")
    func retrySendsTheFileAgain() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try InMemoryBackend(database: Data(#"{"posts": [{"id": 1, "title": "a"}]}"#.utf8))
        server.failNext(1, status: 503)
        let draft = folder.file("post.json")
        try Data(#"{"title": "replaced"}"#.utf8).write(to: draft)
        let backend = server.with(.retry(RetryPolicy(maxAttempts: 2, baseDelay: 0.01)))

        let post: [String: JSONValue] = try await PhotoFiles(backend: backend).request(
            .put, ["posts", "1"], body: .file(draft, contentType: "application/json")
        ).value

        #expect(post == ["id": .int(1), "title": .string("replaced")])
        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { $0.body == (try? Data(contentsOf: draft)) })
    }

    @Test("the log reports an upload's file size and a download's file size")
    func logCountsFiles() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let events = Locked<[LogEvent]>([])
        let server = InMemoryBackend()
        server.route(.post, "photos") { _ in .json(["id": 1], status: 201) }
        server.route(.get, "photos/1/original") { _ in BackendResponse(status: 200, body: Data(count: 70_000))
        }
        let files = PhotoFiles(
            backend: server.with(.logging { event in events.withLock { $0.append(event) } }))
        let photo = try folder.file("photo.jpg", bytes: 12_345)

        _ = try await files.send(.post, ["photos"], body: .file(photo, contentType: "image/jpeg")).value
        _ = try await files.download(["photos", "1", "original"], to: folder.file("original.jpg")).value

        let logged = events.withLock { $0 }
        try #require(logged.count == 4)
        #expect(logged[0].bodySize == 12_345)
        guard case .succeeded(_, _, let downloaded) = logged[3].phase else {
            Issue.record("expected a success, got \(logged[3].phase)")
            return
        }
        #expect(downloaded == 70_000)
    }

    @Test(
        "the validator cache neither revalidates nor stores downloads: each one is a plain GET written to its file"
    )
    func cacheLeavesDownloadsAlone() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try InMemoryBackend(database: Data(#"{"posters": [{"id": 1, "size": 3}]}"#.utf8))
        let files = PhotoFiles(backend: server.with(.cache()))

        let first = try await files.download(["posters", "1"], to: folder.file("a.json")).value
        let second = try await files.download(["posters", "1"], to: folder.file("b.json")).value

        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { !$0.isConditional })
        #expect(try Data(contentsOf: first) == Data(contentsOf: second))
        #expect(!(try Data(contentsOf: second)).isEmpty)
    }
}
