import Depot
import Foundation

/// InMemoryBackend: reading must cost about what decoding the answer costs.
enum InMemoryCases {
    /// Lookups per sample in the findByID cases.
    static let lookups = 1000

    static let all: [BenchmarkCase] = [findAll, findByID, pages, scale]

    /// `findAll()` of 5000 photos vs `JSONDecoder` decoding the bytes the backend answers.
    static let findAll = BenchmarkCase(
        name: "inmemory.findAll.photos5000", target: 1.15, rounds: 41,
        sample: "1 findAll of 5000 photos vs 1 JSONDecoder().decode([Photo].self) of the same bytes"
    ) { _ in
        let backend = try InMemoryBackend(database: Photos.database)
        let photos = PhotoRepository(backend: backend)
        let bytes = try await backend.send(BackendRequest(path: "photos")).value.body
        return Sides(
            depot: {
                let all = try await photos.findAll().value
                try check(all.count == 5000 && all.last?.id == 5000, "findAll returned \(all.count) photos")
            },
            baseline: {
                let all = try JSONDecoder().decode([Photo].self, from: bytes)
                try check(all.count == 5000 && all.last?.id == 5000, "decoded \(all.count) photos")
            })
    }

    /// `findByID` vs decoding that one photo's bytes.
    static let findByID = BenchmarkCase(
        name: "inmemory.findByID", target: 1.5, rounds: 41,
        sample: "\(lookups) findByID (ids spread over 1…5000) vs decoding each of those photos' bytes"
    ) { _ in
        let backend = try InMemoryBackend(database: Photos.database)
        let photos = PhotoRepository(backend: backend)
        let ids = Photos.ids(lookups, in: 5000)
        var bytes: [Data] = []
        for id in ids {
            bytes.append(try await backend.send(BackendRequest(path: "photos/\(id)")).value.body)
        }
        let answers = bytes
        return Sides(
            depot: {
                var sum = 0
                for id in ids { sum &+= try await photos.findByID(id).value.id }
                try check(sum == ids.reduce(0, +), "findByID returned other photos")
            },
            baseline: {
                var sum = 0
                for data in answers { sum &+= try JSONDecoder().decode(Photo.self, from: data).id }
                try check(sum == ids.reduce(0, +), "decoded other photos")
            })
    }

    /// Every page of 50 through `pages(size:)` vs one `findAll()`, on the same backend.
    static let pages = BenchmarkCase(
        name: "inmemory.pages50.photos5000", target: 1.3, rounds: 41,
        sample: "pages(size: 50) to the end (100 pages) vs 1 findAll, both Depot, 5000 photos"
    ) { _ in
        let backend = try InMemoryBackend(database: Photos.database)
        let photos = PhotoRepository(backend: backend)
        return Sides(
            depot: {
                var count = 0
                var pages = 0
                for try await page in photos.pages(size: 50) {
                    count += page.items.count
                    pages += 1
                }
                try check(count == 5000 && pages == 100, "paged \(count) photos in \(pages) pages")
            },
            baseline: {
                let all = try await photos.findAll().value
                try check(all.count == 5000, "findAll returned \(all.count) photos")
            })
    }

    /// `findByID` among 100,000 photos vs among 1,000: lookup by id must be O(1).
    static let scale = BenchmarkCase(
        name: "inmemory.findByID.scale", target: 1.5, rounds: 41,
        sample: "\(lookups) findByID among 100,000 photos vs \(lookups) among 1,000 (ids spread over each)"
    ) { _ in
        let large = PhotoRepository(
            backend: try InMemoryBackend(database: try Photos.database(count: 100_000)))
        let small = PhotoRepository(backend: try InMemoryBackend(database: try Photos.database(count: 1000)))
        let largeIDs = Photos.ids(lookups, in: 100_000)
        let smallIDs = Photos.ids(lookups, in: 1000)
        return Sides(
            depot: { try await lookUp(largeIDs, in: large) },
            baseline: { try await lookUp(smallIDs, in: small) })
    }

    private static func lookUp(_ ids: [Int], in photos: PhotoRepository) async throws {
        var sum = 0
        for id in ids { sum &+= try await photos.findByID(id).value.id }
        try check(sum == ids.reduce(0, +), "findByID returned other photos")
    }
}
