import Depot
import DepotInMemory
import Foundation

/// InMemoryBackend: reading must cost about what decoding the answer costs.
enum InMemoryCases {
    /// Lookups per sample in the findByID cases.
    static let lookups = 1000

    static let all: [BenchmarkCase] = [findAll, findByID, pages, scale, deleteSweep]

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

    /// `DELETE /albums/:id` among 100,000 photos and their 2,000 albums, json-server's sweep of
    /// orphans included (the album's 50 photos go), vs the same removal written by hand over
    /// the decoded records: drop the album, then keep the photos whose `albumId` is in a `Set`
    /// of the albums' ids.
    static let deleteSweep = BenchmarkCase(
        name: "inmemory.delete.100k", target: 2.0, rounds: 41,
        sample: "1 DELETE of an album (the sweep removes its 50 photos) among 100,000 photos and 2,000 "
            + "albums vs removing it from decoded arrays and filtering the photos against a Set of album ids"
    ) { _ in
        let database = try Photos.database(count: 100_000, albums: true)
        let backend = try InMemoryBackend(database: database)
        let albums = AlbumRepository(backend: backend)
        let decoded = try JSONDecoder().decode(Photos.Database.self, from: database)
        let depotNext = Counter()
        let baseline = DecodedDatabase(decoded)
        return Sides(
            depot: { try await albums.delete(id: depotNext.next()).value },
            baseline: { try baseline.delete(album: baseline.next()) },
            settle: {
                // Untimed: the sweep removed the album's 50 photos, and nothing else.
                let query = [
                    URLQueryItem(name: "_page", value: "1"), URLQueryItem(name: "_limit", value: "1"),
                ]
                let answer = try await backend.send(BackendRequest(path: "photos", query: query)).value
                let expected = 100_000 - 50 * depotNext.current
                try check(
                    answer.headers["X-Total-Count"] == String(expected),
                    "\(answer.headers["X-Total-Count"] ?? "no") photos left, not \(expected)")
            })
    }

    private static func lookUp(_ ids: [Int], in photos: PhotoRepository) async throws {
        var sum = 0
        for id in ids { sum &+= try await photos.findByID(id).value.id }
        try check(sum == ids.reduce(0, +), "findByID returned other photos")
    }
}

/// `/albums`: what a user of Depot declares to delete albums.
struct AlbumRepository: Deletable {
    typealias Entity = Photos.Album
    let backend: any Backend
    let name = "albums"
}

/// The next id to delete, 1, 2, 3, …, across samples.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    /// The next value.
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }

    /// The value ``next()`` gave last (0 before).
    var current: Int {
        lock.withLock { value }
    }
}

/// The baseline's decoded records, changed by each sample as the backend's are.
final class DecodedDatabase: @unchecked Sendable {
    private let lock = NSLock()
    private var photos: [Photo]
    private var albums: [Photos.Album]
    private let counter = Counter()

    init(_ database: Photos.Database) {
        photos = database.photos
        albums = database.albums
    }

    func next() -> Int { counter.next() }

    /// Removes album `id`, then every photo whose album is gone.
    func delete(album id: Int) throws {
        try lock.withLock {
            guard let position = albums.firstIndex(where: { $0.id == id }) else {
                throw BenchmarkFailure("no album \(id)")
            }
            albums.remove(at: position)
            let parents = Set(albums.map(\.id))
            let before = photos.count
            photos.removeAll { !parents.contains($0.albumId) }
            try check(before - photos.count == 50, "removed \(before - photos.count) photos")
        }
    }
}
