import DepotInMemory
/// The request's context survives an app's own middleware that resumes on another thread.
///
/// What a caller wants to learn back from a request (where its answer came from, how many
/// pending writes it holds, a watch's record of its reads and its stored-only first look) must
/// travel on the request, so that a middleware of the app's own may resume the request on any
/// thread and nothing is lost; and the store's replays reach the `.live()` in front, which
/// subscribes to the store when the chain is made, not when a request passes. These tests put
/// `Hop` (an app middleware that hands every request on from a dispatch queue a few
/// milliseconds later) between `.retry(…)` and `.offline(store)`, on InMemoryBackend with a real
/// `OfflineStore` file, and a `503` first where a retry's second attempt then starts from a
/// timer. Each test runs three ways (``RequestContextTests/Resumption``): in the caller's task
/// all the way (the control, which shows the test passes when the context arrives), with only
/// the retry's timer, and through the hop.
import DepotOffline
import Dispatch
import Foundation
import Testing

@testable import Depot

/// An app's own middleware that hands each request on from a dispatch queue, 5 ms later (as
/// one that waits for a rate limiter or a reachability check would): the rest of the chain
/// runs on another thread, outside the caller's task. Cancelling it cancels what it started,
/// or what it was about to start.
private struct Hop: Middleware {
    private static let queue = DispatchQueue(label: "RequestContextTests.Hop")

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        Future { promise in
            let token = CancellationToken()
            Self.queue.asyncAfter(deadline: .now() + .milliseconds(5)) {
                guard !token.isCancelled else { return }
                let work = next(request).start { promise($0) }
                token.onCancel { work.cancel() }
            }
            token.onCancel { promise(.failure(.cancelled)) }
            return token
        }
    }
}

/// The network between the chain and the server: while ``isDown``, writes find no connection,
/// and so do reads (with `answers503`, a read's first attempt is answered `503` instead, and its
/// retry finds no connection). Every attempt is counted, down or not.
private final class Network: Backend, Sendable {
    let server: InMemoryBackend
    private let answers503: Bool
    private let state = Locked((down: false, last503: false, attempts: 0))

    init(_ server: InMemoryBackend, answers503: Bool) {
        self.server = server
        self.answers503 = answers503
    }

    var isDown: Bool {
        get { state.withLock { $0.down } }
        set { state.withLock { $0.down = newValue } }
    }

    /// How many requests were sent, down or not.
    var attempts: Int { state.withLock { $0.attempts } }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let server = server
        let answers503 = answers503
        let state = state
        return Future { promise in
            let failure = state.withLock { state -> ServiceError? in
                state.attempts += 1
                guard state.down else { return nil }
                guard request.method == .get, answers503, !state.last503 else {
                    state.last503 = false
                    return .noConnection
                }
                state.last503 = true
                return ServiceError(response: BackendResponse(status: 503), for: request)
            }
            if let failure {
                promise(.failure(failure))
                return NotCancellable()
            }
            return server.send(request).start { promise($0) }
        }
    }
}

/// A server with two notes behind ``Network``, a store on a real file, and the chain `.live()`,
/// a fast `.retry` (10 ms, no jitter), (`Hop()`,) `.offline(store)`.
private struct Setup {
    let resumption: RequestContextTests.Resumption
    let folder: TemporaryFolder
    let server: InMemoryBackend
    let network: Network
    let store: OfflineStore
    let live = LiveMiddleware()
    let notes: NoteRepository

    init(_ resumption: RequestContextTests.Resumption) throws {
        self.resumption = resumption
        folder = try TemporaryFolder()
        server = try InMemoryBackend(
            database: Data(#"{"notes": [{"id": 1, "title": "One"}, {"id": 2, "title": "Two"}]}"#.utf8))
        network = Network(server, answers503: resumption.fails503First)
        store = try OfflineStore(at: folder.file("depot.sqlite"))
        let retry = RetryMiddleware(policy: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, jitter: .none))
        let backend =
            resumption.hops
            ? network.with(live, retry, Hop(), .offline(store))
            : network.with(live, retry, .offline(store))
        notes = NoteRepository(backend: backend)
    }

    /// Answers the next request `503` where the resumption asks for it.
    func fail503First() {
        if resumption.fails503First { server.failNext(1, status: 503) }
    }

    /// How many requests of `method` the server received.
    func received(_ method: HTTPMethod) -> Int {
        server.requests.filter { $0.method == method }.count
    }
}

@Suite("The request's context through an app middleware that resumes elsewhere", .timeLimit(.minutes(1)))
struct RequestContextTests {
    /// How the requests of a test resume on their way to `.offline(store)`.
    enum Resumption: CaseIterable, Sendable {
        /// In their caller's task, all the way (the control: no hop, no `503`).
        case inCallersTask
        /// A read's first attempt is answered `503`: the built-in retry's second attempt starts
        /// from a timer.
        case afterRetryTimer
        /// Through `Hop()`, and a read's first attempt is answered `503` (`.live(), .retry, Hop(), .offline(store)`).
        case throughHop

        var hops: Bool { self == .throughHop }
        var fails503First: Bool { self != .inCallersTask }
    }

    @Test(
        "(a) an answer served from the store is reported by AnswerReceipt as stored, with its date",
        arguments: Resumption.allCases)
    func storedAnswerReceipt(_ resumption: Resumption) async throws {
        let setup = try Setup(resumption)
        setup.fail503First()
        let before = Date()
        let online = AnswerReceipt()
        let fresh = try await online.collect { try await setup.notes.findAll().value }
        let after = Date()
        #expect(fresh.map(\.id) == [1, 2])
        #expect(online.source == .network)
        setup.store.flush()

        setup.network.isDown = true
        let receipt = AnswerReceipt()
        let served = try await receipt.collect { try await setup.notes.findAll().value }
        #expect(served.map(\.id) == [1, 2])
        // Each read was sent twice (a 503, then the retry), or once.
        #expect(setup.network.attempts == (resumption.fails503First ? 4 : 2))
        guard case .stored(let savedAt) = receipt.source else {
            Issue.record("the receipt says \(receipt.source), not .stored")
            return
        }
        // Kept as a Double of seconds in the file: a millisecond either side.
        #expect(savedAt >= before.addingTimeInterval(-0.001), "saved \(savedAt), read from \(before)")
        #expect(savedAt <= after.addingTimeInterval(0.001), "saved \(savedAt), answered by \(after)")
    }

    @Test(
        "(b) a watch whose store holds an answer shows it first, without asking the network",
        arguments: Resumption.allCases)
    func watchLooksAtTheStoreFirst(_ resumption: Resumption) async throws {
        let setup = try Setup(resumption)
        _ = try await setup.notes.findAll().value
        setup.store.flush()
        let sent = setup.network.attempts
        // The first request the network sees (the network's turn, after the stored look).
        setup.fail503First()
        var iterator = setup.notes.watch { try await $0.findAll().value }.makeAsyncIterator()

        let stored = try await next(&iterator)
        #expect(stored.value?.map(\.id) == [1, 2])
        #expect(setup.network.attempts == sent, "the stored-only look was sent to the network")
        #expect(stored.isRefreshing, "the first snapshot is not marked refreshing")
        guard case .stored = stored.source else {
            // The watch took this for the network's answer: no second snapshot comes.
            Issue.record("the first snapshot's source is \(stored.source), not .stored")
            return
        }

        let fresh = try await next(&iterator)
        #expect(fresh.source == .network)
        #expect(!fresh.isRefreshing)
        #expect(fresh.value?.map(\.id) == [1, 2])
        #expect(setup.network.attempts == sent + (resumption.fails503First ? 2 : 1))
    }

    @Test(
        "(c) a write queued offline reaches a watch of its collection, counted as a pending write",
        arguments: Resumption.allCases)
    func queuedWriteReachesTheWatch(_ resumption: Resumption) async throws {
        let setup = try Setup(resumption)
        _ = try await setup.notes.findAll().value
        var iterator = setup.notes.watch { try await $0.findAll().value }.makeAsyncIterator()
        _ = try await first(&iterator) { $0.source == .network && !$0.isRefreshing }

        setup.network.isDown = true
        let queued = await setup.notes.create(NewNote(title: "Offline")).result
        guard case .failure(.queued) = queued else {
            Issue.record("not queued: \(queued)")
            return
        }
        let pending = try await first(&iterator) { $0.value?.map(\.id) == [1, 2, -1] }
        #expect(pending.pendingWrites == 1, "the snapshot counts \(pending.pendingWrites) pending writes")
        if case .stored = pending.source {
        } else {
            Issue.record("the snapshot's source is \(pending.source), not .stored")
        }

        // A read of its own, collected in a receipt, says the same.
        let receipt = AnswerReceipt()
        let listed = try await receipt.collect { try await setup.notes.findAll().value }
        #expect(listed.map(\.id) == [1, 2, -1])
        #expect(receipt.pendingWrites == 1, "the receipt counts \(receipt.pendingWrites) pending writes")
        if case .stored = receipt.source {
        } else {
            Issue.record("the receipt says \(receipt.source), not .stored")
        }
    }

    @Test("(d) a watch reads again after an online write through the chain", arguments: Resumption.allCases)
    func onlineWriteReReads(_ resumption: Resumption) async throws {
        let setup = try Setup(resumption)
        var iterator = setup.notes.watch { try await $0.findAll().value }.makeAsyncIterator()
        let start = try await first(&iterator) { $0.source == .network && !$0.isRefreshing }
        #expect(start.value?.map(\.title) == ["One", "Two"])

        // A PUT is retried: after a 503, its second attempt starts from a timer.
        setup.fail503First()
        _ = try await setup.notes.update(Note(id: 2, title: "Edited")).value
        #expect(setup.received(.put) == (resumption.fails503First ? 2 : 1))
        let edited = try await first(&iterator) { $0.value?.last?.title == "Edited" }
        #expect(edited.source == .network)
        #expect(edited.pendingWrites == 0)
        #expect(!edited.isRefreshing)
    }

    @Test(
        "(e) the replay of a write queued offline reaches the watch, with the server's id",
        arguments: Resumption.allCases)
    func replayReachesTheWatch(_ resumption: Resumption) async throws {
        let setup = try Setup(resumption)
        _ = try await setup.notes.findAll().value
        var iterator = setup.notes.watch { try await $0.findAll().value }.makeAsyncIterator()
        _ = try await first(&iterator) { $0.source == .network && !$0.isRefreshing }
        setup.network.isDown = true
        let queued = await setup.notes.create(NewNote(title: "Offline")).result
        guard case .failure(.queued) = queued else {
            Issue.record("not queued: \(queued)")
            return
        }
        _ = try await first(&iterator) { $0.value?.map(\.id) == [1, 2, -1] }

        // Sent by the outbox through the chain behind `.offline(store)`, so `.live()` does not
        // see it: the store tells the `.live()` that subscribed to it when the chain was made
        // (synchronously, before the replay returns).
        let told = Locked(0)
        let listening = setup.live.feed.subscribe([.collection(["notes"])]) { told.withLock { $0 += 1 } }
        defer { listening.cancel() }
        setup.network.isDown = false
        let report = await setup.store.outbox.replay()
        #expect(report.sent == 1)
        #expect(setup.server.records(in: "notes").count == 3)
        guard told.withLock({ $0 }) > 0 else {
            // No snapshot would come: the watch waits for a change it is never told of.
            Issue.record("the replay's change never reached the feed of .live()")
            return
        }
        let replayed = try await first(&iterator) { $0.value?.map(\.id) == [1, 2, 3] }
        #expect(replayed.pendingWrites == 0)
        #expect(replayed.value?.last?.title == "Offline")
    }
}
