import Depot
import DepotInMemory
import Foundation

// A screen's list, watched: each snapshot is printed as it arrives, while another task writes.
//
//   swift run LiveDemo
//
// The server is an in-memory json-server that answers after 20 ms, as a nearby server would.
// `.live()` first in the chain tells watches what each write touched and lets identical reads
// in flight share one request; `.cache()` gives a watch a stored answer to show at once.
let server = InMemoryBackend.jsonPlaceholder()
server.latency = 0.02
let live = LiveMiddleware()
let backend = server.with(live, .cache())
let posts = PostRepository(backend: backend)
let users = UserRepository(backend: backend)

/// How many `GET /posts…` the server has answered.
func postReads() -> Int {
    server.requests.filter { $0.method == .get && $0.path.hasPrefix("posts") }.count
}

/// One line for a snapshot of user 1's posts.
func describe(_ snapshot: Snapshot<[Post]>) -> String {
    let source =
        switch snapshot.source {
        case .network: "from the server"
        case .stored: "stored"
        }
    let refreshing = snapshot.isRefreshing ? ", refreshing" : ""
    guard let list = snapshot.value else {
        return "error \(snapshot.error.map { "\($0)" } ?? "")"
    }
    let ids = list.map { String($0.id) }.joined(separator: " ")
    let first = list.first.map { " #\($0.id): \"\($0.title.prefix(24))\"" } ?? ""
    return "\(list.count) posts (\(source)\(refreshing)): \(ids);\(first)"
}

print("== An earlier screen read user 1's posts: the cache holds the answer")
_ = try await posts.findAll(query: ["userId": 1]).value

/// The screen watches user 1's posts while this function writes, one write per drawing.
func watchWhileWriting() async throws {
    print("\n== The screen watches user 1's posts; another task writes")
    // The screen says when it has drawn a snapshot, so the writer's lines and its own come in order.
    let (drawn, draw) = AsyncStream.makeStream(of: Void.self)
    let screen = Task {
        for await snapshot in posts.watch({ try await $0.findAll(query: ["userId": 1]).value }) {
            print("  screen: \(describe(snapshot))")
            draw.yield()
        }
    }
    var drawings = drawn.makeAsyncIterator()
    await drawings.next()  // the stored answer, at once
    await drawings.next()  // the server's

    print("  writer: POST /posts for user 1")
    _ = try await posts.create(NewPost(userId: 1, title: "Written while you watch")).value
    await drawings.next()

    print("  writer: PATCH /posts/1")
    _ = try await posts.patch(1, with: ["title": "Edited while you watch"]).value
    await drawings.next()

    print("  writer: DELETE /posts/2")
    _ = try await posts.delete(id: 2).value
    await drawings.next()

    let before = postReads()
    print("  writer: PATCH /users/1 (the screen shows no user)")
    _ = try await users.patch(1, with: ["name": "Renamed"]).value
    print("    GET /posts sent since: \(postReads() - before)")
    screen.cancel()
}

try await watchWhileWriting()

print("\n== 100 more screens open the same list at once")
let before = postReads()
let opened = await withTaskGroup(of: Int.self) { group in
    for _ in 0..<100 {
        group.addTask {
            var snapshots = posts.watch { try await $0.findAll(query: ["userId": 2]).value }
                .makeAsyncIterator()
            return await snapshots.next()?.value?.count ?? 0
        }
    }
    var counts: [Int] = []
    for await count in group { counts.append(count) }
    return counts
}
print("  \(opened.count) screens show \(Set(opened).map(String.init).joined(separator: ", ")) posts")
print("  GET /posts?userId=2 sent: \(postReads() - before)")

print("\nThe Live Queries article (Sources/Depot/Depot.docc/LiveQueries.md) tells the rest.")
