import Depot
import DepotInMemory
import Foundation

/// Live queries: telling 1,000 watches of a collection about a write must cost about what
/// reading the collection 1,000 times costs, and watching a read must cost about what making
/// it costs.
enum LiveCases {
    /// Watches of the fan-out case.
    static let watchers = 1000
    /// Watched reads per sample of the findByID case.
    static let lookups = 50

    static let all: [BenchmarkCase] = [fanOut, findByID]

    /// One write, then every one of 1,000 watches of `GET /posts` has its new snapshot, vs the
    /// same write, then 1,000 `findAll()` made at once.
    static let fanOut = BenchmarkCase(
        name: "live.fanout.1000", target: 1.2, rounds: 21,
        sample: "1 PATCH /posts/1 on InMemoryBackend, then until 1,000 watches of findAll() (100 posts) each "
            + "have their new snapshot, vs the same PATCH, then 1,000 findAll() at once"
    ) { _ in
        let watched = try InMemoryBackend(database: Photos.database)
        let plain = try InMemoryBackend(database: Photos.database)
        let backend = watched.with(.live())
        let posts = PostRepository(backend: backend)
        let plainPosts = PostRepository(backend: plain)
        let arrivals = Arrivals()
        let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let watching = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<watchers {
                    group.addTask {
                        var first = true
                        for await snapshot in posts.watch({ try await $0.findAll().value }) {
                            guard snapshot.value?.count == 100 else { continue }
                            if first {
                                first = false
                                readyContinuation.yield()
                            } else {
                                arrivals.arrive()
                            }
                        }
                    }
                }
            }
        }
        var started = 0
        for await _ in ready {
            started += 1
            if started == watchers { break }
        }
        let round = Locked(0)
        return Sides(
            depot: {
                let number = round.withLock {
                    $0 += 1
                    return $0
                }
                let all = arrivals.expect(watchers)
                _ = try await posts.patch(1, with: ["title": "round \(number)"]).value
                await all.wait()
            },
            baseline: {
                let number = round.withLock {
                    $0 += 1
                    return $0
                }
                _ = try await plainPosts.patch(1, with: ["title": "round \(number)"]).value
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<watchers { group.addTask { try await plainPosts.findAll().value.count } }
                    for try await count in group {
                        try check(count == 100, "findAll returned \(count) posts")
                    }
                }
            },
            finish: {
                watching.cancel()
                return []
            })
    }

    /// A watched findByID's first snapshot (the network's) over loopback vs a plain findByID.
    static let findByID = BenchmarkCase(
        name: "live.findByID", target: 1.10, rounds: 31,
        sample: "\(lookups) GET /photos/:id one after the other over loopback: the first snapshot of "
            + "watch { findByID } through .live() vs findByID on the same backend without it",
        requestsPerSample: lookups, needsServer: true
    ) { environment in
        guard let baseURL = environment.baseURL else { throw BenchmarkFailure("no --base-url") }
        let network = URLSessionBackend(baseURL: baseURL)
        let watched = PhotoRepository(backend: network.with(.live()))
        let plain = PhotoRepository(backend: network)
        let ids = Photos.ids(lookups, in: 5000)
        let expected = ids.reduce(0, +)
        return Sides(
            depot: {
                var sum = 0
                for id in ids {
                    var iterator = watched.watch { try await $0.findByID(id).value }.makeAsyncIterator()
                    guard let snapshot = await iterator.next(), let photo = snapshot.value else {
                        throw BenchmarkFailure("the watch of photo \(id) gave no value")
                    }
                    sum &+= photo.id
                }
                try check(sum == expected, "the watches returned other photos")
            },
            baseline: {
                var sum = 0
                for id in ids { sum &+= try await plain.findByID(id).value.id }
                try check(sum == expected, "findByID returned other photos")
            })
    }
}

/// JSONPlaceholder's posts, as the fan-out case reads them.
struct Post: Codable, Identifiable, Sendable, Equatable {
    let id: Int
    var userId: Int
    var title: String
    var body: String
}

/// `/posts` and `/posts/:id`.
struct PostRepository: CRUDRepository {
    typealias Entity = Post
    let backend: any Backend
    let name = "posts"
}

/// Counts snapshots as they arrive, and lets a sample wait for a number of them.
final class Arrivals: Sendable {
    private let state = Locked((count: 0, target: Int.max, waiter: CheckedContinuation<Void, Never>?.none))

    /// One snapshot arrived.
    func arrive() {
        let done = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            guard state.count >= state.target, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        done?.resume()
    }

    /// Starts counting `count` new arrivals (set before the write that causes them).
    func expect(_ count: Int) -> Expectation {
        state.withLock { state in
            state.count = 0
            state.target = count
        }
        return Expectation(arrivals: self)
    }

    /// Waits until the expected arrivals are in.
    struct Expectation: Sendable {
        let arrivals: Arrivals

        func wait() async {
            await withCheckedContinuation { continuation in
                let now = arrivals.state.withLock { state -> Bool in
                    if state.count >= state.target { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }
}
