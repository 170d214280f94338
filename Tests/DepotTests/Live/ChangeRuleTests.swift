import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// The live change rules as a table: what a write (or `invalidate`) to one resource makes
/// watches of another read again. The resources are typed, as repositories write them on their
/// requests, so ids that look like names, names that look like ids, nested and singular
/// resources and custom endpoints are what they are, not what their paths suggest; rows with a
/// bare path read it by json-server's convention (`RequestResource(path:)`).
@Suite("Live: which reads a change touches")
struct ChangeRuleTests {
    struct Row: CustomTestStringConvertible, Sendable {
        /// The write's method; `nil`: `invalidate`.
        var method: HTTPMethod?
        var change: RequestResource
        var touched: [RequestResource]
        var untouched: [RequestResource]
        var testDescription: String { "\(method.map(\.rawValue) ?? "invalidate") \(change)" }
    }

    static let posts = RequestResource.collection(["posts"])
    static func post(_ id: String) -> RequestResource { .record(id, in: ["posts"]) }

    static let rows: [Row] = [
        // A string id that looks like a number is a record of its collection, and a collection
        // whose name is a number is a collection.
        Row(
            method: .patch, change: .record("42", in: ["tags"]),
            touched: [.record("42", in: ["tags"]), .collection(["tags"])],
            untouched: [.record("43", in: ["tags"]), .collection(["42"]), .record("42", in: ["posts"])]),
        Row(
            method: nil, change: .collection(["2024"], under: ["reports", "r1"]),
            touched: [
                .collection(["2024"], under: ["reports", "r1"]), .collection(["2024"]),
                .record("r1", in: ["reports"]),
            ],
            untouched: [.record("2024", in: ["reports"]), .collection(["reports", "2024"]).appending("x")]),
        // A string id that is not a number: `invalidate` names a record.
        Row(
            method: nil, change: post("abc"),
            touched: [post("abc"), post("abc").appending("comments"), posts],
            untouched: [post("abd"), .collection(["users"])]),
        // A collection under a path segment that is not a parent record (`v2/posts`).
        Row(
            method: .post, change: .collection(["v2", "posts"]),
            touched: [.collection(["v2", "posts"]), .collection(["posts"], under: ["users", "1"])],
            untouched: [
                .record("7", in: ["v2", "posts"]), .collection(["v2"]), .record("v2", in: ["api"]),
            ]),
        Row(
            method: .delete, change: .record("7", in: ["v2", "posts"]),
            touched: [.record("7", in: ["v2", "posts"]), .collection(["v2", "posts"]), post("7")],
            untouched: [.record("8", in: ["v2", "posts"]), .collection(["v2"])]),
        // A scoped repository's create: its listings everywhere, and its parent record.
        Row(
            method: .post, change: .collection(["posts"], under: ["users", "1"]),
            touched: [
                .collection(["posts"], under: ["users", "1"]), posts, .record("1", in: ["users"]),
                .collection(["users"]),
            ],
            untouched: [post("1"), .record("2", in: ["users"]), .collection(["comments"])]),
        // A record changed under a parent: the same record anywhere, its listings anywhere.
        Row(
            method: .put, change: .record("3", in: ["posts"], under: ["users", "1"]),
            touched: [post("3"), posts, .collection(["posts"], under: ["users", "2"])],
            untouched: [.record("1", in: ["users"]), .collection(["users"]), post("4")]),
        // A singular resource: itself, nothing listed.
        Row(
            method: .put, change: .singular(["profile"]),
            touched: [.singular(["profile"]), .singular(["profile"]).appending("avatar")],
            untouched: [.collection(["profiles"]), .record("profile", in: ["users"])]),
        // A custom endpoint under a record: what a change of the record touches.
        Row(
            method: .post, change: post("7").appending("publish"),
            touched: [
                post("7"), posts, .collection(["posts"], under: ["users", "1"]),
                post("7").appending("publish"),
            ],
            untouched: [post("8"), .collection(["publishers"])]),
        // A write to a whole collection: its records and listings.
        Row(
            method: .delete, change: posts,
            touched: [posts, post("1"), .collection(["posts"], under: ["users", "1"])],
            untouched: [.collection(["users"]), .singular(["posts-summary"])]),
        // Bare paths, read by json-server's convention.
        Row(
            method: .patch, change: RequestResource(path: "/posts/7"),
            touched: ["posts/7", "posts", "users/1/posts", "users/1/posts/7", "posts/7/comments"].map(
                RequestResource.init(path:)),
            untouched: ["users", "users/7", "posts/8", "comments"].map(RequestResource.init(path:))),
        Row(
            method: nil, change: RequestResource(path: "posts/abc"),
            touched: [post("abc"), posts, post("abc").appending("comments")],
            untouched: [post("abd"), .collection(["abc"])]),
        Row(
            method: nil, change: RequestResource(path: "posts/7/comments"),
            touched: ["posts/7/comments", "comments", "posts/7"].map(RequestResource.init(path:)),
            untouched: ["users/7", "posts/8"].map(RequestResource.init(path:))),
    ]

    @Test("each row", arguments: rows)
    func row(_ row: Row) {
        let change = row.method.map { ChangeFeed.Change($0, row.change) } ?? ChangeFeed.Change(row.change)
        for read in row.touched {
            #expect(change.touches(read), "\(row.testDescription) should touch \(read)")
        }
        for read in row.untouched {
            #expect(!change.touches(read), "\(row.testDescription) should not touch \(read)")
        }
    }

    @Test("a feed tells only the subscribers a change touches, until they cancel")
    func feedTellsTouchedSubscribers() {
        let feed = ChangeFeed()
        let told = Locked(0)
        let subscription = feed.subscribe([.collection(["users"])]) { told.withLock { $0 += 1 } }
        feed.publish([ChangeFeed.Change(.patch, Self.post("7"))])
        #expect(told.withLock { $0 } == 0)
        feed.publish([ChangeFeed.Change(.post, path: "/users/")])
        #expect(told.withLock { $0 } == 1)
        subscription.cancel()
        feed.publish([ChangeFeed.Change(.collection(["users"]))])
        #expect(told.withLock { $0 } == 1)
    }

    @Test("requests say what they address: repositories, scopes, singular resources, bare paths")
    func requestsCarryTheirResource() async throws {
        let server = InMemoryBackend()
        let recorded = Locked([(path: String, resource: RequestResource)]())
        let backend = server.with(PathRecorder(seen: recorded))
        let posts = ResourcePostRepository(backend: backend)
        _ = await posts.findByID("42").result
        _ = await posts.scoped(under: ["users", "1"]).findAll().result
        _ = await posts.scoped(under: ["users", "1"], shallow: false).findByID("5").result
        _ = await ResourceProfileRepository(backend: backend).find().result
        _ = await backend.send(BackendRequest(path: "posts/abc/comments?x=1")).result
        #expect(
            recorded.withLock { $0 }.map(\.resource) == [
                .record("42", in: ["posts"]), .collection(["posts"], under: ["users", "1"]),
                .record("5", in: ["posts"], under: ["users", "1"]), .singular(["profile"]),
                .collection(["comments"], under: ["posts", "abc"]),
            ])
    }

    @Test("a page the server links to addresses its collection, so a write to one of its records re-reads it")
    func linkedPagesAddressTheirCollection() async throws {
        let server = InMemoryBackend(collections: ["posts"])
        // Under a base path, as most APIs: the server's links name it (`/api/posts?_page=2`),
        // which no reading of the bare URL could tell from a record `posts` of `api`.
        server.baseURL = try #require(URL(string: "http://localhost/api/"))
        for index in 1...3 { _ = try await server.send(postWrite(index)).value }
        let recorded = Locked([(path: String, resource: RequestResource)]())
        let posts = PagedPostRepository(backend: server.with(PathRecorder(seen: recorded)))
        var pages = 0
        for try await page in posts.pages(size: 1) { pages += page.items.count }
        #expect(pages == 3)
        let seen = recorded.withLock { $0 }
        #expect(seen.count == 3)
        #expect(seen.dropFirst().allSatisfy { $0.path.hasPrefix("http://localhost/api/posts") })
        #expect(seen.allSatisfy { $0.resource == .collection(["posts"]) })
        let write = ChangeFeed.Change(.put, .record("2", in: ["posts"]))
        #expect(seen.allSatisfy { write.touches($0.resource) })
    }

    @Test("a collection's resource keeps every parent: nested scopes, a path that names its parent")
    func nestedScopesKeepTheirParents() {
        let posts = ResourcePostRepository(backend: InMemoryBackend())
        let nested = posts.scoped(under: ["users", "1"]).scoped(under: ["orgs", "3"])
        #expect(nested.collectionResource == .collection(["posts"], under: ["orgs", "3", "users", "1"]))
        #expect(
            ChangeFeed.Change(.post, nested.collectionResource).touches(
                .record("1", in: ["users"], under: ["orgs", "3"])))
        let named = NestedPostRepository(backend: InMemoryBackend())
        #expect(named.collectionResource == .collection(["posts"], under: ["users", "1"]))
        // Its records are in that collection, under the same parent: a write to one re-reads
        // the listing.
        #expect(named.resource(for: 7) == .record("7", in: ["posts"], under: ["users", "1"]))
        #expect(ChangeFeed.Change(.patch, named.resource(for: 7)).touches(named.collectionResource))
        #expect(
            VersionedPostRepository(backend: InMemoryBackend()).collectionResource
                == .collection(["v2", "posts"]))
    }

    @Test("a record path shorter than its parent count is read without trapping")
    func shortRecordPaths() {
        let empty = RequestResource.record(at: [], parentCount: 2)
        #expect(empty.segments.isEmpty)
        #expect(empty.id == nil)
        #expect(empty.parent.isEmpty)
        // Clamped: the id stays last, everything before it is the parent, no collection name.
        let short = RequestResource.record(at: ["posts", "7"], parentCount: 5)
        #expect(short.id == "7")
        #expect(short.parent == ["posts"])
        #expect(short.collection.isEmpty)
        #expect(short.name == nil)
        #expect(short.path == "posts/7")
    }
}

private func postWrite(_ index: Int) -> BackendRequest {
    BackendRequest(method: .post, path: "posts", body: Data(#"{"title": "\#(index)"}"#.utf8))
}

private struct ResourcePost: Codable, Identifiable, Sendable {
    var id: String
}

private struct PagedPost: Codable, Identifiable, Sendable {
    var id: Int
}

private struct PagedPostRepository: PagedRepository {
    typealias Entity = PagedPost
    let backend: any Backend
    let name = "posts"
}

private struct NestedPostRepository: Readable {
    typealias Entity = PagedPost
    let backend: any Backend
    let name = "posts"
    var collectionPath: [String] { ["users", "1", "posts"] }
}

private struct VersionedPostRepository: Readable {
    typealias Entity = PagedPost
    let backend: any Backend
    let name = "posts"
    var collectionPath: [String] { ["v2", "posts"] }
}

/// Notes each request's path and what it addresses.
private struct PathRecorder: Middleware {
    let seen: Locked<[(path: String, resource: RequestResource)]>

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        seen.withLock { $0.append((request.path, request.resource)) }
        return next(request)
    }
}

private struct ResourcePostRepository: CRUDRepository {
    typealias Entity = ResourcePost
    let backend: any Backend
    let name = "posts"
}

private struct ResourceProfileRepository: SingleEntityRepository {
    typealias Entity = ResourcePost
    let backend: any Backend
    let name = "profile"
}
