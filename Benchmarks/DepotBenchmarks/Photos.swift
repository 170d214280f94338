import Depot
import DepotInMemory
import Foundation

/// A photo, as JSONPlaceholder serves it: the type both sides decode.
struct Photo: Codable, Identifiable, Sendable, Equatable {
    let id: Int
    var albumId: Int
    var title: String
    var url: String
    var thumbnailUrl: String
}

/// `/photos`, `/photos/:id` and json-server paging: what a user of Depot declares.
struct PhotoRepository: PagedRepository {
    typealias Entity = Photo
    let backend: any Backend
    let name = "photos"
}

/// The benchmark's data sets.
enum Photos {
    /// JSONPlaceholder's 5000 photos as a JSON array (the fixture's bytes).
    static let fixture = JSONPlaceholderData.collection("photos")

    /// The whole JSONPlaceholder data set as a db.json document.
    static let database = JSONPlaceholderData.database()

    /// A db.json document with `count` photos in JSONPlaceholder's shape (50 per album),
    /// ids 1…count, for the scale case: the fixture's photos repeated with new ids.
    static func database(count: Int) throws -> Data {
        let base = try JSONDecoder().decode([Photo].self, from: fixture)
        try check(!base.isEmpty, "the fixture has no photos")
        let photos = (0..<count).map { index in
            var photo = base[index % base.count]
            photo = Photo(
                id: index + 1, albumId: index / 50 + 1, title: photo.title, url: photo.url,
                thumbnailUrl: photo.thumbnailUrl)
            return photo
        }
        return try JSONEncoder().encode(["photos": photos])
    }

    /// An album, as JSONPlaceholder serves it.
    struct Album: Codable, Identifiable, Sendable, Equatable {
        let id: Int
        var userId: Int
        var title: String
    }

    /// A db.json document of photos and albums.
    struct Database: Codable {
        var photos: [Photo]
        var albums: [Album]
    }

    /// A db.json document with `count` photos (as ``database(count:)``) and, when `albums`,
    /// the albums they belong to (`count / 50`, ids 1…, 100 per user).
    static func database(count: Int, albums: Bool) throws -> Data {
        guard albums else { return try database(count: count) }
        let photos = try JSONDecoder().decode([String: [Photo]].self, from: try database(count: count))[
            "photos"]
        let albums = (0..<(count + 49) / 50).map { index in
            Album(id: index + 1, userId: index / 100 + 1, title: "album \(index + 1)")
        }
        return try JSONEncoder().encode(Database(photos: photos ?? [], albums: albums))
    }

    /// `count` ids in 1…`range`, spread over the range in a fixed pseudo-random order, so
    /// that lookups do not walk memory in order.
    static func ids(_ count: Int, in range: Int) -> [Int] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(range)) + 1
        }
    }

    /// The server's data: one photo per line, each the fixture's bytes for that photo,
    /// so that `[` + the lines joined with `,` + `]` is the fixture itself.
    static func serverLines() throws -> Data {
        let objects = try JSONSerialization.jsonObject(with: fixture) as? [Any] ?? []
        var lines = Data()
        var pieces: [Data] = []
        for object in objects {
            let piece = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            pieces.append(piece)
            lines.append(piece)
            lines.append(UInt8(ascii: "\n"))
        }
        var joined = Data("[".utf8)
        for (offset, piece) in pieces.enumerated() {
            if offset > 0 { joined.append(UInt8(ascii: ",")) }
            joined.append(piece)
        }
        joined.append(UInt8(ascii: "]"))
        try check(joined == fixture, "re-serialized photos differ from the fixture's bytes")
        return lines
    }
}
