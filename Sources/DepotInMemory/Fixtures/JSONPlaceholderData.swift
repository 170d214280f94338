import Foundation

/// A generated data set in JSONPlaceholder's shape, the same on every run.
///
/// 10 users, 100 posts (10 per user), 500 comments (5 per post), 100 albums
/// (10 per user), 5000 photos (50 per album) and 200 todos (20 per user), with
/// JSONPlaceholder's field names and id ranges. The text is pseudo-Latin from a
/// seeded generator, so tests and benchmarks can rely on exact counts and ids.
public enum JSONPlaceholderData {
    /// The whole data set as a db.json document: `{"users": [...], "posts": [...], ...}`.
    public static func database(seed: UInt64 = 1) -> Data {
        let object: [String: Any] = collections(seed: seed)
        // Plain dictionaries, arrays, strings, numbers and booleans always serialize.
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            ?? Data("{}".utf8)
    }

    /// One collection as a JSON array, e.g. `collection("photos")`.
    public static func collection(_ name: String, seed: UInt64 = 1) -> Data {
        let array = collections(seed: seed)[name] ?? []
        return (try? JSONSerialization.data(withJSONObject: array, options: [.sortedKeys])) ?? Data("[]".utf8)
    }

    /// The collections as Foundation objects, keyed by name.
    static func collections(seed: UInt64) -> [String: [[String: Any]]] {
        var random = SplitMix64(seed: seed)
        var users: [[String: Any]] = []
        for id in 1...10 {
            let first = names[id - 1]
            let last = surnames[id - 1]
            users.append([
                "id": id,
                "name": "\(first) \(last)",
                "username": "\(first.prefix(1))\(last)".lowercased(),
                "email": "\(first.lowercased())@\(last.lowercased()).example",
                "address": [
                    "street": "\(random.words(1).capitalized) Street", "suite": "Apt. \(100 + id * 7)",
                    "city": random.words(1).capitalized, "zipcode": String(format: "%05d", 10_000 + id * 137),
                    "geo": [
                        "lat": String(format: "%.4f", random.unit() * 180 - 90),
                        "lng": String(format: "%.4f", random.unit() * 360 - 180),
                    ],
                ] as [String: Any],
                "phone": "1-555-\(String(format: "%03d", id))-\(String(format: "%04d", id * 101))",
                "website": "\(last.lowercased()).example",
                "company": ["name": "\(last) Group", "catchPhrase": random.words(3), "bs": random.words(3)],
            ])
        }
        var posts: [[String: Any]] = []
        var comments: [[String: Any]] = []
        var albums: [[String: Any]] = []
        var photos: [[String: Any]] = []
        var todos: [[String: Any]] = []
        for id in 1...100 {
            posts.append([
                "userId": (id - 1) / 10 + 1, "id": id, "title": random.words(5), "body": random.sentences(4),
            ])
            albums.append(["userId": (id - 1) / 10 + 1, "id": id, "title": random.words(4)])
        }
        for id in 1...500 {
            let name = random.words(1)
            comments.append([
                "postId": (id - 1) / 5 + 1, "id": id, "name": random.words(4),
                "email": "\(name)@\(random.words(1)).example", "body": random.sentences(3),
            ])
        }
        for id in 1...5000 {
            let color = String(format: "%06x", Int(random.next() % 0xFFFFFF))
            photos.append([
                "albumId": (id - 1) / 50 + 1, "id": id, "title": random.words(5),
                "url": "https://via.placeholder.example/600/\(color)",
                "thumbnailUrl": "https://via.placeholder.example/150/\(color)",
            ])
        }
        for id in 1...200 {
            todos.append([
                "userId": (id - 1) / 20 + 1, "id": id, "title": random.words(4),
                "completed": random.next() % 2 == 0,
            ])
        }
        return [
            "users": users, "posts": posts, "comments": comments, "albums": albums, "photos": photos,
            "todos": todos,
        ]
    }

    private static let names = [
        "Ada", "Brook", "Carmen", "Dmitri", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    ]
    private static let surnames = [
        "Lovell", "Okafor", "Reyes", "Volkov", "Demir", "Haddad", "Hopper", "Tanaka", "Costa", "Berg",
    ]
}

/// A small, fast, seeded pseudo-random generator (SplitMix64): the same numbers for the same
/// seed on every platform, for generated data, the fuzzer and the crash-safety test.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose numbers follow from `seed` alone.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next number.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }

    mutating func words(_ count: Int) -> String {
        (0..<count).map { _ in Self.lorem[Int(next() % UInt64(Self.lorem.count))] }.joined(separator: " ")
    }

    mutating func sentences(_ count: Int) -> String {
        (0..<count).map { _ in words(6 + Int(next() % 6)) }.joined(separator: "\n")
    }

    private static let lorem = """
        lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore \
        et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip \
        ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla \
        pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim \
        id est laborum
        """.split(separator: " ").map(String.init)
}
