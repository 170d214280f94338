import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// The download of the Transfers article, run on ``InMemoryBackend`` as it is written there:
/// one route serves the bytes.
@Suite struct DownloadRouteTests {
    @Test("a route serving bytes lets the article's download run in memory, with progress to the total")
    func articleDownload() async throws {
        let caches = try TemporaryFolder()
        defer { caches.remove() }
        // About 300 KB, so the progress comes in several slices.
        let png = Data((0..<300_000).map { UInt8($0 % 251) })

        let backend = InMemoryBackend()
        backend.route(.get, "posts/:id/cover") { _ in
            BackendResponse(status: 200, headers: ["Content-Type": "image/png"], body: png)
        }
        let posts = PostRepository(backend: backend)
        let log = ProgressLog()
        let cover = try await posts.download(
            ["posts", "1", "cover"], to: caches.url.appending(path: "covers/1.png"), progress: log.handler
        ).value

        #expect(cover == caches.url.appending(path: "covers/1.png"))
        #expect(try Data(contentsOf: cover) == png)
        log.expectMonotonic(.download, endingAt: Int64(png.count), total: Int64(png.count))
        #expect(log.values(.download).count > 2)
        #expect(log.values(.download).last?.fractionCompleted == 1)
        #expect(backend.requests.map(\.path) == ["posts/1/cover"])
    }
}
