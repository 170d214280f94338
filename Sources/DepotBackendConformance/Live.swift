import Depot
import Foundation
import Testing

extension NetworkConformance {
    /// Live queries over real HTTP (the DRF app): a watched read is the server's answer, then
    /// shows a write made through the same chain; identical reads started together share one
    /// request.
    public static let live: [ConformanceCheck] = [
        ConformanceCheck("live: a watched record is the server's, then shows a write made through the chain")
        {
            subject in
            let posts = WatchedPosts(backend: subject.backend(try LiveServer.drfSpace()).with(.live()))
            var snapshots = posts.watch { try await $0.findByID(1).value }.makeAsyncIterator()
            let first = try #require(await snapshots.next())
            #expect(first.source == .network)
            #expect(first.value?.id == 1)
            let title = "Watched over \(subject)"
            #expect(first.value?.title != title)

            _ = try await posts.patch(1, with: ["title": .string(title)]).value
            let second = try #require(await snapshots.next())
            #expect(second.value?.title == title)
        },
        ConformanceCheck("live: 20 watches of one listing started together send one request, each gets it") {
            subject in
            let gate = RequestGate(opensAt: 20)
            let backend = subject.backend(try LiveServer.drfSpace()).with(
                gate.arrivals, .live(), gate.departures)
            let posts = WatchedPosts(backend: backend)
            let counts = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        var snapshots = posts.watch { try await $0.findAll(query: ["userId": 1]).value }
                            .makeAsyncIterator()
                        return await snapshots.next()?.value?.count ?? -1
                    }
                }
                var counts: [Int] = []
                for await count in group { counts.append(count) }
                return counts
            }
            #expect(counts == Array(repeating: 10, count: 20))
            #expect(gate.sent == 1)
        },
    ]
}

/// The DRF app's posts, written to in a private space.
private struct WatchedPosts: CRUDRepository {
    typealias Entity = ServedPost
    let backend: any Backend
    let name = "posts"
}

/// Holds the requests that reach the network until `count` requests have entered the chain
/// (each has reached the middleware behind by then), and counts those sent.
private final class RequestGate: Sendable {
    private let count: Int
    private let state = Locked((entered: 0, open: false, held: [@Sendable () -> Void](), sent: 0))

    init(opensAt count: Int) {
        self.count = count
    }

    /// How many requests went to the network.
    var sent: Int { state.withLock { $0.sent } }

    /// In front: counts the requests that enter, and opens the gate at `count`.
    var arrivals: some Middleware { Arrivals(gate: self) }
    /// Behind: holds each request until the gate opens.
    var departures: some Middleware { Departures(gate: self) }

    private struct Arrivals: Middleware {
        let gate: RequestGate

        func intercept(
            _ request: BackendRequest,
            next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
        ) -> Future<BackendResponse, ServiceError> {
            Future { [gate] promise in
                let work = next(request).start { promise($0) }
                let held = gate.state.withLock { state -> [@Sendable () -> Void] in
                    state.entered += 1
                    guard state.entered == gate.count else { return [] }
                    state.open = true
                    defer { state.held = [] }
                    return state.held
                }
                for release in held { release() }
                return work
            }
        }
    }

    private struct Departures: Middleware {
        let gate: RequestGate

        func intercept(
            _ request: BackendRequest,
            next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
        ) -> Future<BackendResponse, ServiceError> {
            Future { [gate] promise in
                let send: @Sendable () -> Void = { _ = next(request).start { promise($0) } }
                let now = gate.state.withLock { state -> Bool in
                    state.sent += 1
                    if !state.open { state.held.append(send) }
                    return state.open
                }
                if now { send() }
                return CancellationToken()
            }
        }
    }
}
