import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

/// Transfers pass `.offline(store)` by: a download is neither stored nor served from the
/// store, and an upload from a file is never queued (the file may be gone by a replay).
@Suite("Offline: transfers pass through")
struct OfflineTransferTests {
    @Test("an upload from a file that cannot be sent fails as the network failed, and nothing is queued")
    func fileUploadIsNotQueued() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let photo = folder.file("photo.jpg")
        try Data(repeating: 9, count: 10_000).write(to: photo)
        var request = BackendRequest(method: .post, path: "photos")
        request.bodyFile = photo

        let result = await FailingBackend(error: .cannotConnect).with(.offline(store)).send(request).result

        #expect(result.failure == .cannotConnect)
        #expect(try store.outbox.entries().isEmpty)
    }

    @Test("a download is not stored: the same GET offline later finds nothing to serve")
    func downloadIsNotStored() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let server = try InMemoryBackend(database: Data(#"{"posters": [{"id": 1, "url": "p.png"}]}"#.utf8))
        var download = BackendRequest(path: "posters/1")
        download.destination = DownloadDestination(folder.file("poster.json"))

        let file = try await server.with(.offline(store)).download(download).value
        store.flush()
        let offline = await FailingBackend(error: .cannotConnect).with(.offline(store))
            .send(BackendRequest(path: "posters/1")).result

        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(offline.failure == .cannotConnect)
    }
}
