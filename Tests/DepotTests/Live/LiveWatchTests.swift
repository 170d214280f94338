import DepotInMemory
import Foundation
import Observation
import Testing

@testable import Depot

private struct LivePost: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var userId: Int
    var title: String
}

private struct NewLivePost: Encodable, Sendable {
    var userId: Int
    var title: String
}

private struct LiveUser: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
}

private struct LivePostRepository: CRUDRepository {
    typealias Entity = LivePost
    let backend: any Backend
    let name = "posts"
}

private struct LiveUserRepository: CRUDRepository {
    typealias Entity = LiveUser
    let backend: any Backend
    let name = "users"
}

private func server() throws -> InMemoryBackend {
    try InMemoryBackend(
        database: Data(
            #"""
            {"posts": [{"id": 1, "userId": 1, "title": "One"}, {"id": 7, "userId": 1, "title": "Seven"}],
             "users": [{"id": 1, "name": "Ann"}]}
            """#.utf8))
}

/// The next snapshot of `iterator`, failing the test when the watch ended.
private func next<Value>(_ iterator: inout LiveWatch<Value>.Iterator) async throws -> Snapshot<
    Value
> {
    try #require(await iterator.next())
}

/// Yields until `condition` holds, for at most 30 seconds (a bound, not a pause: it returns
/// as soon as the condition holds); whether it came to hold.
private func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        await Task.yield()
    }
    return true
}

/// How many `GET`s of `path` the server received.
private func gets(_ server: InMemoryBackend, _ path: String) -> Int {
    server.requests.filter { $0.method == .get && StoredResponseKey.resource(of: $0.path) == path }.count
}

@Suite("Live queries: watched reads", .timeLimit(.minutes(2)))
struct LiveWatchTests {
    @Test("network first, then a new snapshot after a write through the chain")
    func networkThenWrite() async throws {
        let server = try server()
        let posts = LivePostRepository(backend: server.with(.live()))
        var iterator = posts.watch { try await $0.findAll().value }.makeAsyncIterator()
        let first = try await next(&iterator)
        #expect(first.value?.map(\.id) == [1, 7])
        #expect(first.source == .network)
        #expect(!first.isRefreshing)

        _ = try await posts.create(NewLivePost(userId: 1, title: "New")).value
        let second = try await next(&iterator)
        #expect(second.value?.map(\.id) == [1, 7, 8])

        // Answers of the same length that differ only in one byte are told apart.
        for title in ["Round 1", "Round 2", "Round 3"] {
            _ = try await posts.patch(8, with: ["title": title]).value
            #expect(try await next(&iterator).value?.last?.title == title)
        }
    }

    @Test(
        "a watch subscribes when it waits: none after its first snapshot, and a write made before it waits is read, even behind more changes than the feed remembers"
    )
    func subscribesWhenItWaits() async throws {
        let server = try server()
        let live = LiveMiddleware()
        let posts = LivePostRepository(backend: server.with(live))
        let watch = posts.watch { try await $0.findAll().value }
        var iterator = watch.makeAsyncIterator()
        #expect(try await next(&iterator).value?.count == 2)
        #expect(live.feed.subscriberCount == 0)
        // Not subscribed to refreshes either: a refresh asked for now is read at the wait.
        watch.refresh()
        let refreshed = try await next(&iterator)
        #expect(refreshed.value?.count == 2 && !refreshed.isRefreshing)
        #expect(gets(server, "posts") == 2)
        // Subscribed at that wait, released when the next run began: a write now is asked of
        // the feed at the next wait.
        #expect(live.feed.subscriberCount == 0)
        _ = try await posts.create(NewLivePost(userId: 1, title: "Unwatched")).value
        for _ in 0..<(ChangeFeed.remembered + 10) { live.invalidate(path: "users/1") }
        #expect(try await next(&iterator).value?.count == 3)
        #expect(gets(server, "posts") == 3)
    }

    @Test(
        "a loop body that outlasts publications that touch nothing read: none costs a read, but more than the feed remembers cost one, not told"
    )
    func readsOnceMoreBehindManyPublications() async throws {
        let server = try server()
        let live = LiveMiddleware()
        let posts = LivePostRepository(backend: server.with(live))
        let watch = posts.watch { try await $0.findAll().value }
        let (counts, sink) = AsyncStream.makeStream(of: Int.self)
        let (steps, step) = AsyncStream.makeStream(of: Void.self)
        let watching = Task {
            var goOn = steps.makeAsyncIterator()
            for await snapshot in watch {
                sink.yield(snapshot.value?.count ?? -1)
                // The loop body lasts until the test lets it go on.
                guard await goOn.next() != nil else { return }
            }
        }
        defer { watching.cancel() }
        var told = counts.makeAsyncIterator()
        #expect(await told.next() == 2)
        // A few publications while the body runs, none touching posts: no read at the wait.
        for _ in 0..<10 { live.invalidate(path: "users/1") }
        step.yield()
        #expect(await eventually { live.feed.subscriberCount == 1 })
        #expect(gets(server, "posts") == 1)
        _ = try await posts.create(NewLivePost(userId: 1, title: "Third")).value
        #expect(await told.next() == 3)
        #expect(gets(server, "posts") == 2)
        // More than the feed remembers: it cannot tell, and reads once; the same answer is not told.
        for _ in 0..<(ChangeFeed.remembered + 10) { live.invalidate(path: "users/1") }
        step.yield()
        #expect(await eventually { gets(server, "posts") == 3 && live.feed.subscriberCount == 1 })
        _ = try await posts.create(NewLivePost(userId: 1, title: "Fourth")).value
        #expect(await told.next() == 4)
    }

    @Test("stored first (CacheMiddleware holds it), marked refreshing, then the network's")
    func storedThenNetwork() async throws {
        let server = try server()
        let backend = server.with(.live(), .cache())
        let posts = LivePostRepository(backend: backend)
        _ = try await posts.findAll().value
        var iterator = posts.watch { try await $0.findAll().value }.makeAsyncIterator()
        let stored = try await next(&iterator)
        #expect(stored.isRefreshing)
        guard case .stored = stored.source else {
            Issue.record("the first snapshot is \(stored.source)")
            return
        }
        #expect(stored.value?.count == 2)
        let fresh = try await next(&iterator)
        #expect(!fresh.isRefreshing)
        #expect(fresh.source == .network)
        #expect(fresh.value?.count == 2)
    }

    @Test("a write to posts/7 re-reads watches of posts/7 and of posts, not of users")
    func writesTouchTheirRecordAndCollection() async throws {
        let server = try server()
        let live = LiveMiddleware()
        let backend = server.with(live)
        let posts = LivePostRepository(backend: backend)
        let users = LiveUserRepository(backend: backend)
        var record = posts.watch { try await $0.findByID(7).value }.makeAsyncIterator()
        var listing = posts.watch { try await $0.findAll(query: ["userId": 1]).value }.makeAsyncIterator()
        var people = users.watch { try await $0.findAll().value }.makeAsyncIterator()
        _ = try await next(&record)
        _ = try await next(&listing)
        _ = try await next(&people)

        // Who the write tells, seen where the watches are told (the feed tells synchronously,
        // before the write's answer reaches its caller).
        let told = Locked([String: Int]())
        let listeners = ["posts/7", "posts", "users"].map { resource in
            live.feed.subscribe([RequestResource(path: resource)]) {
                told.withLock { $0[resource, default: 0] += 1 }
            }
        }
        _ = try await posts.patch(7, with: ["title": "Edited"]).value
        #expect(told.withLock { $0 } == ["posts/7": 1, "posts": 1])
        for listener in listeners { listener.cancel() }
        #expect(try await next(&record).value?.title == "Edited")
        #expect(try await next(&listing).value?.last?.title == "Edited")
        // The users watch reads again only for a write to users.
        #expect(gets(server, "users") == 1)
        _ = try await users.create(LiveUser(id: 2, name: "Bo")).value
        #expect(try await next(&people).value?.count == 2)
        #expect(gets(server, "users") == 2)
    }

    @Test("a hypermedia read is watched too: rating a movie through its link re-reads the movie")
    func hypermediaFollow() async throws {
        let api = HypermediaClient(backend: try MiniFlix.makeBackend().with(.live()), root: MiniFlix.root)
        var snapshots = api.watch { api in
            try await api.follow(Link(rel: "self", href: "movies/1"), as: JSONValue.self).value
        }
        .makeAsyncIterator()
        let movie = try #require(try await next(&snapshots).value)
        #expect(movie.entity["ratings"] == [4])

        _ = try await api.send("rate", from: movie, with: ["rating": 5]).value
        #expect(try await next(&snapshots).value?.entity["ratings"] == [4, 5])
    }

    @Test("a write that lands while a watch's read is in flight is read again once that read answers")
    func writeDuringRead() async throws {
        let server = try server()
        let hold = AnswerHold()
        let posts = LivePostRepository(backend: server.with(.live(), hold))
        let (counts, sink) = AsyncStream.makeStream(of: Int.self)
        let watching = Task {
            for await snapshot in posts.watch({ try await $0.findAll().value }) {
                sink.yield(snapshot.value?.count ?? -1)
            }
        }
        defer { watching.cancel() }
        // The server answered the watch's read (two posts); the answer waits while a write lands.
        await hold.held()
        _ = try await posts.create(NewLivePost(userId: 1, title: "Meanwhile")).value
        hold.release()
        var iterator = counts.makeAsyncIterator()
        #expect(await iterator.next() == 2)
        #expect(await iterator.next() == 3)
    }

    @Test("a refresh asked for while a read is in flight marks that read's answer as refreshing")
    func refreshDuringRead() async throws {
        let server = try server()
        let hold = AnswerHold()
        let posts = LivePostRepository(backend: server.with(.live(), hold))
        let watch = posts.watch { try await $0.findAll().value }
        let (flags, sink) = AsyncStream.makeStream(of: Bool.self)
        let watching = Task {
            for await snapshot in watch { sink.yield(snapshot.isRefreshing) }
        }
        defer { watching.cancel() }
        await hold.held()
        watch.refresh()
        hold.release()
        var iterator = flags.makeAsyncIterator()
        #expect(await iterator.next() == true)
        #expect(await iterator.next() == false)
    }

    @Test("a read that starts after a write never joins a request sent before it")
    func noStaleSharing() async throws {
        let server = try server()
        let hold = AnswerHold()
        let posts = LivePostRepository(backend: server.with(.live(), hold))
        let before = Task { try await posts.findAll().value }
        await hold.held()
        _ = try await posts.create(NewLivePost(userId: 1, title: "Written")).value
        // Sent anew (the held request is still in the air): it sees the write.
        #expect(try await posts.findAll().value.count == 3)
        hold.release()
        #expect(try await before.value.count == 2)
        #expect(gets(server, "posts") == 2)
    }

    @Test("a page whose body is unchanged is told when its paging header fields change")
    func pagingHeaders() async throws {
        let server = try server()
        let posts = LivePostRepository(backend: server.with(.live()))
        var iterator = posts.watch { posts in
            let page = try await posts.send(.get, ["posts"], query: ["_page": 1, "_limit": 1]).value
            return page.headers["X-Total-Count"] ?? ""
        }
        .makeAsyncIterator()
        #expect(try await next(&iterator).value == "2")
        // Lands on a later page: page 1's body stays the same, its total does not.
        _ = try await posts.create(NewLivePost(userId: 1, title: "Third")).value
        #expect(try await next(&iterator).value == "3")
    }

    @Test("invalidate(path:) and refresh() read again")
    func invalidateAndRefresh() async throws {
        let server = try server()
        let live = LiveMiddleware()
        let posts = LivePostRepository(backend: server.with(live))
        let watch = posts.watch { try await $0.findAll().value }
        var iterator = watch.makeAsyncIterator()
        _ = try await next(&iterator)
        // Changed behind the chain's back: only a refresh or an invalidation can tell.
        _ = try await server.send(
            BackendRequest(
                method: .post, path: "posts", body: Data(#"{"userId": 1, "title": "Elsewhere"}"#.utf8))
        ).value
        live.invalidate(path: "posts")
        #expect(try await next(&iterator).value?.count == 3)
        _ = try await server.send(BackendRequest(method: .delete, path: "posts/1")).value
        watch.refresh()
        let after = try await next(&iterator)
        #expect(after.value?.count == 2, "\(after.result)")
        // A refresh by hand is answered even when nothing changed (a pull-to-refresh ends).
        watch.refresh()
        #expect(try await next(&iterator).value?.count == 2)
        #expect(gets(server, "posts") == 4)
    }

    @Test("a read that fails is a snapshot with the error; the watch goes on")
    func errorSnapshot() async throws {
        let server = try server()
        let posts = LivePostRepository(backend: server.with(.live()))
        var iterator = posts.watch { try await $0.findByID(99).value }.makeAsyncIterator()
        let missing = try await next(&iterator)
        #expect(missing.error is ServiceError)
        _ = try await posts.create(LivePost(id: 99, userId: 1, title: "Now here")).value
        // A create touches the collection, not posts/99: invalidate the record.
        _ = try await posts.update(LivePost(id: 99, userId: 1, title: "Here")).value
        #expect(try await next(&iterator).value?.title == "Here")
    }

    @Test(
        "100 watches of one query started together send 1 request, and each gets the snapshot",
        arguments: [false, true])
    func sharedReads(withCache: Bool) async throws {
        let gate = GatedBackend(try server())
        // With a store behind, each watch first looks there (found nothing), then reads: the
        // gate opens when the last read has joined the one in flight.
        let starts = StartCounter(opening: gate, at: withCache ? 200 : 100)
        let chain: [any Middleware] =
            withCache ? [starts, LiveMiddleware(), CacheMiddleware()] : [starts, LiveMiddleware()]
        let posts = LivePostRepository(backend: gate.with(chain))
        let firsts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    var iterator = posts.watch { try await $0.findAll().value }.makeAsyncIterator()
                    return try await next(&iterator).value?.count ?? -1
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(firsts == Array(repeating: 2, count: 100))
        #expect(gate.sent == 1)
    }

    @Test("1,000 watches of one collection, one write: each gets its new snapshot")
    func fanOut() async throws {
        let server = try server()
        let live = LiveMiddleware()
        let posts = LivePostRepository(backend: server.with(live))
        let ready = AsyncStream.makeStream(of: Void.self)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    var iterator = posts.watch { try await $0.findAll().value }.makeAsyncIterator()
                    _ = try await next(&iterator)
                    ready.continuation.yield()
                    return try await next(&iterator).value?.count ?? -1
                }
            }
            var started = 0
            for await _ in ready.stream {
                started += 1
                if started == 1000 { break }
            }
            // Every watch is waiting, subscribed: the write is published to 1,000 subscribers.
            #expect(await eventually { live.feed.subscriberCount == 1000 })
            _ = try await posts.create(NewLivePost(userId: 1, title: "For all")).value
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 3, count: 1000))
    }

    @Test(
        "cancelling the consuming task, or leaving the loop, ends the watch and releases its read",
        arguments: [false, true])
    func endingReleases(byBreak: Bool) async throws {
        let server = try server()
        let live = LiveMiddleware()
        let posts = LivePostRepository(backend: server.with(live))
        let (releases, released) = AsyncStream.makeStream(of: Void.self)
        let task: Task<Void, Never>
        do {
            let probe = Probe { released.yield() }
            let watch = posts.watch { repository in
                _ = probe
                return try await repository.findAll().value
            }
            let (arrivals, arrived) = AsyncStream.makeStream(of: Int.self)
            task = Task {
                var count = 0
                for await _ in watch {
                    count += 1
                    arrived.yield(count)
                    // Left after the second snapshot, when the watch has subscribed once.
                    if byBreak && count == 2 { break }
                }
            }
            var snapshots = arrivals.makeAsyncIterator()
            #expect(await snapshots.next() == 1)
            // The watch subscribes to what it read when it waits for a change.
            #expect(await eventually { live.feed.subscriberCount == 1 })
            if byBreak {
                _ = try await posts.create(NewLivePost(userId: 1, title: "Second")).value
                #expect(await snapshots.next() == 2)
            }
        }
        if byBreak {
            // The loop is left: the watch ends with it.
            await task.value
        } else {
            task.cancel()
            await task.value
        }
        // The read (and what it holds) is released once the watch's own work has ended, and
        // its subscription with it (a watch holds one only while it waits: what this shows for
        // the cancelled one; the loop left after a snapshot holds none by then).
        for await _ in releases { break }
        #expect(live.feed.subscriberCount == 0)
    }

    @MainActor
    @Test("LiveQuery: an observable model of a watch, observed with withObservationTracking")
    func liveQuery() async throws {
        let server = try server()
        let posts = LivePostRepository(backend: server.with(.live()))
        let model = LiveQuery(posts.watch { try await $0.findAll().value })
        func change(of value: @escaping @MainActor () -> Void) async {
            await withCheckedContinuation { continuation in
                withObservationTracking {
                    value()
                } onChange: {
                    continuation.resume()
                }
            }
        }
        if model.value == nil { await change { _ = model.value } }
        #expect(model.value?.count == 2)
        #expect(model.source == .network)
        #expect(!model.isRefreshing)
        _ = try await posts.create(NewLivePost(userId: 1, title: "Observed")).value
        if model.value?.count != 3 { await change { _ = model.value } }
        #expect(model.value?.count == 3)

        // A refresh shows as refreshing until its answer comes, the same answer included.
        model.requestRefresh()
        #expect(model.isRefreshing)
        await change { _ = model.isRefreshing }
        #expect(!model.isRefreshing)
        #expect(model.value?.count == 3)
    }
}

/// Something a watched read holds, to see it released: tells when it is.
private final class Probe: Sendable {
    private let onRelease: @Sendable () -> Void

    init(onRelease: @escaping @Sendable () -> Void) {
        self.onRelease = onRelease
    }

    deinit { onRelease() }
}

/// A backend that holds every request until opened, and counts what it was sent.
private final class GatedBackend: Backend, Sendable {
    private let inner: InMemoryBackend
    private let state = Locked((open: false, waiting: [@Sendable () -> Void](), sent: 0))

    init(_ inner: InMemoryBackend) {
        self.inner = inner
    }

    var sent: Int { state.withLock { $0.sent } }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for resume in waiting { resume() }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let inner = inner
        return Future { [self] promise in
            let go: @Sendable () -> Void = { _ = inner.send(request).start { promise($0) } }
            let now = state.withLock { state -> Bool in
                state.sent += 1
                if !state.open { state.waiting.append(go) }
                return state.open
            }
            if now { go() }
            return NotCancellable()
        }
    }
}

/// Opens a gate once `count` requests have started through it (each has reached the
/// middleware behind by then).
private struct StartCounter: Middleware {
    let gate: GatedBackend
    let count: Int
    private let started = Locked(0)

    init(opening gate: GatedBackend, at count: Int) {
        self.gate = gate
        self.count = count
    }

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let future = next(request)
        return Future { [started, gate, count] promise in
            let work = future.start { promise($0) }
            if started.withLock({
                $0 += 1
                return $0
            }) == count {
                gate.open()
            }
            return work
        }
    }
}

/// Lets requests reach the server, and holds the first `GET`'s answer until ``release()``.
private final class AnswerHold: Middleware, Sendable {
    private struct State {
        var holding = false
        var released = false
        var answer: (@Sendable () -> Void)?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    /// Returns once the first `GET`'s answer is held.
    func held() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.holding { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the held answer on.
    func release() {
        let answer = state.withLock { state in
            state.released = true
            defer { state.answer = nil }
            return state.answer
        }
        answer?()
    }

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let future = next(request)
        guard request.method == .get else { return future }
        return Future { [state] promise in
            future.start { result in
                let (hold, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                    guard !state.holding, !state.released else { return (false, nil) }
                    state.holding = true
                    state.answer = { promise(result) }
                    defer { state.waiter = nil }
                    return (true, state.waiter)
                }
                waiter?.resume()
                if !hold { promise(result) }
            }
        }
    }
}
