import Depot
import DepotInMemory
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// InMemoryBackend's json-server queries at scale, next to what a user would write over
/// photos already decoded into a `[Photo]` (issue 16): filtering and sorting must cost near
/// plain Swift, not near a scan of every stored record.
enum InMemoryQueryCases {
    static let all: [BenchmarkCase] = [filter(1_000), filter(100_000), sortPage(100_000)]
    static let figures: [FigureCase] = [memory]

    /// The hand-written side's data: the photos decoded once, and each photo's own JSON, so
    /// that the matches can be decoded from bytes as the backend's answer is.
    private struct Decoded: Sendable {
        let photos: [Photo]
        let bytes: [Data]

        init(_ database: Data) throws {
            let photos = try JSONDecoder().decode([String: [Photo]].self, from: database)["photos"] ?? []
            let encoder = JSONEncoder()
            self.photos = photos
            self.bytes = try photos.map { try encoder.encode($0) }
        }

        /// `count` photos in a repository on an InMemoryBackend, and the same photos decoded.
        static func sides(_ count: Int) throws -> (PhotoRepository, Decoded) {
            let database = try Photos.database(count: count)
            return (PhotoRepository(backend: try InMemoryBackend(database: database)), try Decoded(database))
        }

        /// The photos' positions sorted stably by title, as json-server sorts: by UTF-16 code
        /// units, which for these ASCII titles is byte order.
        func positionsByTitle() -> [Int] {
            photos.indices.sorted {
                let (lhs, rhs) = (photos[$0].title, photos[$1].title)
                return lhs == rhs ? $0 < $1 : lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
            }
        }

        /// The photos at `indices`, decoded from their bytes spliced into one array.
        func decode(_ indices: some Collection<Int>) throws -> [Photo] {
            var data = Data("[".utf8)
            for (offset, index) in indices.enumerated() {
                if offset > 0 { data.append(UInt8(ascii: ",")) }
                data.append(bytes[index])
            }
            data.append(UInt8(ascii: "]"))
            return try JSONDecoder().decode([Photo].self, from: data)
        }
    }

    /// `findAll(query: ["albumId": 7])` (50 hits) vs `filter` over `[Photo]` plus decoding
    /// the hits.
    static func filter(_ count: Int) -> BenchmarkCase {
        let label = count >= 1000 && count % 1000 == 0 ? "\(count / 1000)k" : "\(count)"
        return BenchmarkCase(
            name: "inmemory.filter.\(label)", target: 3.0, rounds: count > 10_000 ? 21 : 41,
            sample: "findAll(query: [\"albumId\": 7]) among \(count) photos (50 hits) vs a Swift filter "
                + "over the decoded [Photo] plus decoding the hits' bytes"
        ) { _ in
            let (photos, decoded) = try Decoded.sides(count)
            return Sides(
                depot: {
                    let hits = try await photos.findAll(query: ["albumId": "7"]).value
                    try check(hits.count == 50 && hits.allSatisfy { $0.albumId == 7 }, "\(hits.count) hits")
                },
                baseline: {
                    let indices = decoded.photos.indices.filter { decoded.photos[$0].albumId == 7 }
                    let hits = try decoded.decode(indices)
                    try check(hits.count == 50, "\(hits.count) hits")
                })
        }
    }

    /// `_sort=title&_page=3&_limit=20` vs `sorted(by:)` over `[Photo]`, the page's slice and
    /// decoding it.
    static func sortPage(_ count: Int) -> BenchmarkCase {
        BenchmarkCase(
            name: "inmemory.sortPage.\(count / 1000)k", target: 1.5, rounds: 11,
            sample: "findAll(query: _sort=title&_page=3&_limit=20) among \(count) photos vs a stable "
                + "sort of the decoded [Photo] by title, the page's slice and decoding it"
        ) { _ in
            let (photos, decoded) = try Decoded.sides(count)
            let query: Query = ["_sort": "title", "_page": "3", "_limit": "20"]
            // Both sides must give the same page.
            let expected = decoded.positionsByTitle()[40..<60].map { decoded.photos[$0].id }
            return Sides(
                depot: {
                    let page = try await photos.findAll(query: query).value
                    try check(page.map(\.id) == expected, "another page")
                },
                baseline: {
                    let page = try decoded.decode(decoded.positionsByTitle()[40..<60])
                    try check(page.map(\.id) == expected, "another page")
                })
        }
    }

    /// Memory an InMemoryBackend holds per record for 100,000 photos, next to the JSON's.
    static let memory = FigureCase(
        name: "inmemory.memory.100k",
        sample: "heap bytes per record that seeding an InMemoryBackend with 100,000 photos adds (glibc's "
            + "mallinfo2, Linux x86_64), and that over the bytes of their JSON"
    ) { _ in
        let database = try Photos.database(count: 100_000)
        guard let before = heapInUse() else { return [] }
        let backend = try InMemoryBackend(database: database)
        guard let after = heapInUse() else { return [] }
        withExtendedLifetime(backend) {}
        let perRecord = Double(after - before) / 100_000
        let jsonPerRecord = Double(database.count) / 100_000
        return [
            Figure(
                name: "inmemory.memory.100k.bytesPerRecord", value: perRecord.rounded(), unit: "bytes",
                detail: "heap in use (mallinfo2: uordblks + hblkhd) that seeding 100,000 photos adds, per "
                    + "record; their JSON is \(Int(jsonPerRecord.rounded())) bytes per record"),
            Figure(
                name: "inmemory.memory.100k.overJSON",
                value: (perRecord / jsonPerRecord * 100).rounded() / 100,
                unit: "x", detail: "heap per record over JSON bytes per record (target <= 2.5)"),
        ]
    }

    /// The heap bytes in use (glibc's `mallinfo2()`: `uordblks + hblkhd`), or `nil` where it
    /// cannot be read. The Swift module for glibc does not import `malloc.h`, so the function
    /// is looked up by name; its `struct mallinfo2` (ten `size_t`) is returned, as the x86_64
    /// System V ABI returns a struct that large, through a buffer whose address the caller
    /// passes first, so this reads it on Linux x86_64 only.
    private static func heapInUse() -> Int? {
        #if os(Linux) && arch(x86_64)
            typealias Mallinfo2 = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
            guard let symbol = dlsym(nil, "mallinfo2") else { return nil }
            let mallinfo2 = unsafeBitCast(symbol, to: Mallinfo2.self)
            var fields = [Int](repeating: 0, count: 10)
            let read = fields.withUnsafeMutableBytes { buffer -> Bool in
                guard let base = buffer.baseAddress else { return false }
                _ = mallinfo2(base)
                return true
            }
            // arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost
            return read ? fields[7] + fields[4] : nil
        #else
            return nil
        #endif
    }
}
