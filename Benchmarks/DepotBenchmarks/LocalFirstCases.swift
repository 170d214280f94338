import Depot
import DepotInMemory
import DepotOffline
import Foundation

/// Local-first reads: laying the writes waiting in the outbox over a stored answer must cost
/// little next to reading that answer.
///
/// Both sides read through `.offline(store)` while every request fails with `.cannotConnect`,
/// each from a store of its own holding the same stored answers; the Depot side's store also
/// holds 100 queued writes (34 creates, 33 patches, 33 deletes of photos).
enum LocalFirstCases {
    /// The writes queued in the Depot side's store.
    static let pendingWrites = 100

    static let all: [BenchmarkCase] = [listing, entity]

    /// `findAll()` of the stored 5000 photos with 100 pending writes laid over it vs the same
    /// read with none.
    static let listing = BenchmarkCase(
        name: "offline.overlay.read", target: 1.25, rounds: 41,
        sample: "1 findAll of 5000 stored photos with 100 pending writes (creates, patches, deletes) "
            + "laid over it vs 1 findAll of the same stored photos with none"
    ) { _ in
        let pending = try await Side.make("overlay-read", queued: true, reads: ["photos"])
        let plain = try await Side.make("overlay-plain", queued: false, reads: ["photos"])
        let expected = 5000 - 33 + 34
        return Sides(
            depot: {
                let all = try await pending.photos.findAll().value
                try check(
                    all.count == expected && all.last?.id == -34, "findAll returned \(all.count) photos")
            },
            baseline: {
                let all = try await plain.photos.findAll().value
                try check(all.count == 5000 && all.last?.id == 5000, "findAll returned \(all.count) photos")
            },
            finish: {
                pending.scratch.remove()
                plain.scratch.remove()
                return []
            })
    }

    /// `findByID(4000)` from the store with 100 pending writes to other photos vs with none.
    static let entity = BenchmarkCase(
        name: "offline.overlay.entity", target: 1.10, rounds: 51,
        sample: "100 findByID(4000) answered by the store with 100 pending writes to other photos vs "
            + "100 with none"
    ) { _ in
        let pending = try await Side.make("overlay-entity", queued: true, reads: ["photos/4000"])
        let plain = try await Side.make("overlay-entity-plain", queued: false, reads: ["photos/4000"])
        @Sendable func lookUp(_ side: Side) async throws {
            for _ in 0..<100 {
                let photo = try await side.photos.findByID(4000).value
                try check(photo.id == 4000, "findByID returned photo \(photo.id)")
            }
        }
        return Sides(
            depot: { try await lookUp(pending) },
            baseline: { try await lookUp(plain) },
            finish: {
                pending.scratch.remove()
                plain.scratch.remove()
                return []
            })
    }

    /// One side: a store holding the answers to `reads`, offline, with the pending writes or
    /// without.
    struct Side: Sendable {
        let scratch: ScratchStore
        let photos: PhotoRepository

        static func make(_ label: String, queued: Bool, reads: [String]) async throws -> Side {
            let scratch = try ScratchStore(label)
            let network = SwitchableBackend(try InMemoryBackend(database: Photos.database))
            let backend = network.with(.offline(scratch.store))
            for path in reads { _ = try await backend.send(BackendRequest(path: path)).value }
            scratch.store.flush()
            network.isOnline = false
            let photos = PhotoRepository(backend: backend)
            if queued {
                var writes: [BackendRequest] = []
                for index in 0..<34 {
                    let photo = Photo(
                        id: 0, albumId: 1, title: "new \(index)", url: "https://example.com/\(index)",
                        thumbnailUrl: "https://example.com/t/\(index)")
                    writes.append(
                        BackendRequest(method: .post, path: "photos", body: try JSONEncoder().encode(photo)))
                }
                for index in 0..<33 {
                    writes.append(
                        BackendRequest(
                            method: .patch, path: "photos/\(100 + index)",
                            body: Data(#"{"title": "patched"}"#.utf8)))
                    writes.append(BackendRequest(method: .delete, path: "photos/\(200 + index)"))
                }
                for write in writes {
                    let result = await backend.send(write).result
                    guard case .failure(.queued) = result else {
                        throw BenchmarkFailure("not queued: \(result)")
                    }
                }
                try check(
                    scratch.store.outbox.queuedCount == pendingWrites,
                    "\(scratch.store.outbox.queuedCount) queued")
            }
            return Side(scratch: scratch, photos: photos)
        }
    }
}
