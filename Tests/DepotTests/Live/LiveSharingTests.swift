import DepotInMemory
/// What `LiveMiddleware` promises about shared reads, beyond "100 watches send 1 request":
/// identical `GET`s of two accounts are never shared (and those of one account are); a `GET`
/// with a body or a progress handler is sent on its own; when one of several callers sharing a
/// request cancels, the others still get the answer, and the request itself is cancelled only
/// when every caller has cancelled.
///
/// The requests overlap deterministically: futures are started synchronously (joining or
/// starting a shared request happens inside `start`), and `Gate`, an app middleware behind
/// `.live()`, holds every request that reaches it until the test opens it, counting arrivals and
/// cancellations.
import Foundation
import Testing

@testable import Depot

private struct SharedPost: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var title: String
}

private struct SharedPostRepository: CRUDRepository {
    typealias Entity = SharedPost
    let backend: any Backend
    let name = "posts"
}

private func server() throws -> InMemoryBackend {
    try InMemoryBackend(
        database: Data(#"{"posts": [{"id": 1, "title": "One"}, {"id": 2, "title": "Two"}]}"#.utf8))
}

/// Who is signed in, as the app's session tells `.live(account:)`: per task.
private enum Session {
    @TaskLocal static var account = ""
}

/// An app's middleware behind `.live()`: holds every request that reaches it until ``open()``
/// (then sends them on, and any later one at once), and counts arrivals and cancellations.
private final class Gate: Middleware, Sendable {
    private struct State {
        var open = false
        var held: [@Sendable () -> Void] = []
        var arrivals = 0
        var cancellations = 0
    }

    private let state = Locked(State())

    /// How many requests reached the gate.
    var arrivals: Int { state.withLock { $0.arrivals } }
    /// How many of those were cancelled (held or sent on).
    var cancellations: Int { state.withLock { $0.cancellations } }

    /// Sends the held requests on, and every later one at once.
    func open() {
        let held = state.withLock { state in
            state.open = true
            defer { state.held = [] }
            return state.held
        }
        for send in held { send() }
    }

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        Future { [state] promise in
            let token = CancellationToken()
            let send: @Sendable () -> Void = {
                guard !token.isCancelled else { return }
                let work = next(request).start { promise($0) }
                token.onCancel { work.cancel() }
            }
            let now = state.withLock { state -> Bool in
                state.arrivals += 1
                if !state.open { state.held.append(send) }
                return state.open
            }
            token.onCancel {
                state.withLock { $0.cancellations += 1 }
                promise(.failure(.cancelled))
            }
            if now { send() }
            return token
        }
    }
}

/// The outcomes of futures the test starts, numbered in the order they were started.
private final class Outcomes<Value: Sendable>: Sendable {
    private let stream: AsyncStream<(Int, Result<Value, ServiceError>)>
    private let sink: AsyncStream<(Int, Result<Value, ServiceError>)>.Continuation
    private let started = Locked(0)

    init() {
        (stream, sink) = AsyncStream.makeStream(of: (Int, Result<Value, ServiceError>).self)
    }

    /// Starts `future` now, in the calling task; returns its number and what cancels it.
    @discardableResult
    func start(_ future: Future<Value, ServiceError>) -> (id: Int, work: any Cancellable) {
        let id = started.withLock { count in
            defer { count += 1 }
            return count
        }
        let sink = sink
        return (id, future.start { sink.yield((id, $0)) })
    }

    /// The next `count` outcomes, by number (bounded by the suite's time limit).
    func next(_ count: Int) async -> [Int: Result<Value, ServiceError>] {
        var outcomes: [Int: Result<Value, ServiceError>] = [:]
        guard count > 0 else { return outcomes }
        for await (id, result) in stream {
            outcomes[id] = result
            if outcomes.count == count { break }
        }
        return outcomes
    }
}

/// Whether `result` is the failure `.cancelled`.
private func isCancelled<Value>(_ result: Result<Value, ServiceError>?) -> Bool {
    if case .failure(.cancelled)? = result { return true }
    return false
}

@Suite("Live queries: shared reads", .timeLimit(.minutes(1)))
struct LiveSharingTests {
    /// Where `.live(account:)` learns who is signed in.
    enum AccountSource: CaseIterable {
        /// A task-local value of the app's session, set around each read.
        case taskLocal
        /// A variable the app sets when someone signs in.
        case variable
    }

    @Test(
        "identical reads of two accounts in flight together are sent apart; one account's are shared",
        arguments: AccountSource.allCases)
    func accounts(source: AccountSource) async throws {
        let server = try server()
        let gate = Gate()
        let signedIn = Locked("")
        let account: @Sendable () -> String =
            switch source {
            case .taskLocal: { Session.account }
            case .variable: { signedIn.withLock { $0 } }
            }
        let posts = SharedPostRepository(backend: server.with(.live(account: account), gate))
        let outcomes = Outcomes<[SharedPost]>()
        func read(as user: String) {
            signedIn.withLock { $0 = user }
            Session.$account.withValue(user) { outcomes.start(posts.findAll()) }
        }

        read(as: "ann")
        read(as: "bo")
        #expect(gate.arrivals == 2, "bo's read joined ann's")
        // The same account's identical read, while the first is in flight: it joins.
        read(as: "ann")
        read(as: "bo")
        #expect(gate.arrivals == 2, "a read of the same account was sent on its own")
        gate.open()
        let answers = await outcomes.next(4)
        #expect(answers.values.allSatisfy { (try? $0.get())?.map(\.id) == [1, 2] }, "\(answers)")
        #expect(server.requests.count == 2)
    }

    @Test("20 watches started together on an InMemoryBackend with latency send 1 request")
    func twentyWatches() async throws {
        let server = try server()
        // The server takes its time, so the first request is still in flight when the others
        // are made: they join it. The test waits for the snapshots, not for the latency.
        server.latency = 0.5
        let posts = SharedPostRepository(backend: server.with(.live()))
        let counts = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    var snapshots = posts.watch { try await $0.findAll().value }.makeAsyncIterator()
                    return await snapshots.next()?.value?.count
                }
            }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 2, count: 20))
        #expect(server.requests.count == 1, "\(server.requests.count) requests")
    }

    @Test("a GET with a body, or with a progress handler, is sent on its own", arguments: [false, true])
    func ownReads(withProgress: Bool) async throws {
        let server = try server()
        let gate = Gate()
        let backend = server.with(.live(), gate)
        let plain = BackendRequest(method: .get, path: "posts")
        var own = plain
        if withProgress {
            own.progress = ProgressHandler { _ in }
        } else {
            own.body = Data()
        }
        let outcomes = Outcomes<BackendResponse>()
        // Two plain ones share: the gate sees one.
        outcomes.start(backend.send(plain))
        outcomes.start(backend.send(plain))
        #expect(gate.arrivals == 1)
        outcomes.start(backend.send(own))
        outcomes.start(backend.send(own))
        #expect(gate.arrivals == 3, "two identical GETs with \(withProgress ? "progress" : "a body") shared")
        gate.open()
        let answers = await outcomes.next(4)
        #expect(answers.values.allSatisfy { (try? $0.get())?.status == 200 }, "\(answers)")
        #expect(server.requests.count == 3)
    }

    @Test("when one of three callers sharing a read cancels, the other two get the answer")
    func oneCancels() async throws {
        let server = try server()
        let gate = Gate()
        let posts = SharedPostRepository(backend: server.with(.live(), gate))
        let outcomes = Outcomes<[SharedPost]>()
        let first = outcomes.start(posts.findAll())
        outcomes.start(posts.findAll())
        outcomes.start(posts.findAll())
        #expect(gate.arrivals == 1)

        first.work.cancel()
        #expect(gate.cancellations == 0, "one caller's cancel cancelled the shared request")
        // The one that left is told at once, before the answer.
        let left = await outcomes.next(1)
        #expect(isCancelled(left[first.id]), "\(left)")

        gate.open()
        let answers = await outcomes.next(2)
        #expect(answers.keys.sorted() == [1, 2])
        #expect(answers.values.allSatisfy { (try? $0.get())?.map(\.id) == [1, 2] }, "\(answers)")
        #expect(gate.cancellations == 0)
        #expect(server.requests.count == 1)
    }

    @Test(
        "the shared request is cancelled when its last caller cancels, held or at the server",
        arguments: [false, true])
    func allCancel(atServer: Bool) async throws {
        let server = try server()
        let gate = Gate()
        let posts = SharedPostRepository(backend: server.with(.live(), gate))
        if atServer {
            // At the server: an answer due long after the test has ended, unless cancelled.
            server.latency = 600
            gate.open()
        }
        let outcomes = Outcomes<[SharedPost]>()
        let first = outcomes.start(posts.findAll())
        let second = outcomes.start(posts.findAll())
        #expect(gate.arrivals == 1)

        first.work.cancel()
        #expect(gate.cancellations == 0, "the first caller's cancel cancelled the shared request")
        second.work.cancel()
        #expect(gate.cancellations == 1, "the last caller's cancel left the shared request running")
        let cancelled = await outcomes.next(2)
        #expect(cancelled.values.allSatisfy { isCancelled($0) }, "\(cancelled)")
        #expect(server.requests.count == (atServer ? 1 : 0))

        // A read after: a request of its own, not the cancelled one.
        server.latency = 0
        let third = outcomes.start(posts.findAll())
        #expect(gate.arrivals == 2)
        gate.open()
        let answer = await outcomes.next(1)
        #expect((try? answer[third.id]?.get())?.map(\.id) == [1, 2], "\(answer)")
    }
}
