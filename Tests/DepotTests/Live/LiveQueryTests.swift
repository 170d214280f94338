import DepotInMemory
/// What `LiveQuery` promises to a caller that waits: `await refresh()` returns once the
/// refreshed answer is shown (a failed read's error included), and at once when the model or
/// the waiting task is cancelled; `snapshot(where:)` returns the latest snapshot that passes, or
/// waits for one, and `nil` once nothing more can come. Nothing here sleeps: each test waits for
/// what the model shows.
import Foundation
import Observation
import Testing

@testable import Depot

private struct QueriedPost: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var title: String
}

private struct NewQueriedPost: Encodable, Sendable {
    var title: String
}

private struct QueriedPostRepository: CRUDRepository {
    typealias Entity = QueriedPost
    let backend: any Backend
    let name = "posts"
}

private func server() throws -> InMemoryBackend {
    try InMemoryBackend(
        database: Data(#"{"posts": [{"id": 1, "title": "One"}, {"id": 2, "title": "Two"}]}"#.utf8))
}

/// Changes post 1's title on the server itself, behind the chain's back: no watch hears of it.
private func retitleBehindTheBack(_ server: InMemoryBackend, _ title: String) async throws {
    _ = try await server.send(
        BackendRequest(method: .patch, path: "posts/1", body: Data(#"{"title": "\#(title)"}"#.utf8))
    ).value
}

/// Returns after the next change of what `read` reads (Observation, no polling).
@MainActor
private func change(of read: @escaping @MainActor () -> Void) async {
    await withCheckedContinuation { continuation in
        withObservationTracking {
            read()
        } onChange: {
            continuation.resume()
        }
    }
}

@MainActor
@Suite("Live queries: waiting on a LiveQuery", .timeLimit(.minutes(1)))
struct LiveQueryTests {
    @Test("await refresh() returns once the refreshed answer is shown, a failed read's included")
    func refreshIsAwaited() async throws {
        let server = try server()
        let posts = QueriedPostRepository(backend: server.with(.live()))
        let model = LiveQuery(posts.watch { try await $0.findAll().value })
        defer { model.cancel() }
        try #require(await model.snapshot { !$0.isRefreshing } != nil)
        #expect(model.value?.first?.title == "One")

        try await retitleBehindTheBack(server, "Changed")
        await model.refresh()
        #expect(model.value?.first?.title == "Changed")
        #expect(model.error == nil)
        #expect(!model.isRefreshing)

        server.failNext(1, status: 500)
        await model.refresh()
        #expect(model.error is ServiceError, "\(String(describing: model.error))")
        #expect(model.value?.first?.title == "Changed", "the value is kept when a read fails")
        #expect(!model.isRefreshing)

        // The same answer again: the refresh still ends.
        await model.refresh()
        #expect(model.error == nil)
        #expect(model.value?.count == 2)
    }

    @Test("await refresh() before the first answer returns after the network's answer")
    func refreshBeforeTheFirstAnswer() async throws {
        let server = try server()
        let posts = QueriedPostRepository(backend: server.with(.live()))
        let model = LiveQuery(posts.watch { try await $0.findAll().value })
        defer { model.cancel() }
        await model.refresh()
        #expect(model.value?.count == 2)
        #expect(!model.isRefreshing)
    }

    @Test("refresh() on a cancelled LiveQuery returns at once, and so does one waiting when it is")
    func refreshOnACancelledQuery() async throws {
        let server = try server()
        let posts = QueriedPostRepository(backend: server.with(.live()))
        let model = LiveQuery(posts.watch { try await $0.findAll().value })
        try #require(await model.snapshot { !$0.isRefreshing } != nil)

        // The refresh's read would answer long after the test's time limit.
        server.latency = 600
        let waiting = Task { @MainActor in await model.refresh() }
        await change { _ = model.isRefreshing }
        #expect(model.isRefreshing)
        model.cancel()
        await waiting.value
        #expect(!model.isRefreshing)
        #expect(model.value?.count == 2, "a cancelled model keeps what it showed")

        await model.refresh()
        #expect(await model.snapshot { $0.value?.count == 99 } == nil)
    }

    @Test("refresh() returns at once when the task that awaits it is cancelled")
    func refreshInACancelledTask() async throws {
        let server = try server()
        let posts = QueriedPostRepository(backend: server.with(.live()))
        let model = LiveQuery(posts.watch { try await $0.findAll().value })
        defer { model.cancel() }
        try #require(await model.snapshot { !$0.isRefreshing } != nil)

        server.latency = 600
        let waiting = Task { @MainActor in await model.refresh() }
        await change { _ = model.isRefreshing }
        waiting.cancel()
        await waiting.value
        // The read goes on: the model still says so.
        #expect(model.isRefreshing)
    }

    @Test("snapshot(where:) waits for what the model shows after a write, or returns it at once")
    func snapshotWhere() async throws {
        let server = try server()
        let posts = QueriedPostRepository(backend: server.with(.live()))
        let model = LiveQuery(posts.watch { try await $0.findAll().value })
        defer { model.cancel() }
        let first = try #require(await model.snapshot { !$0.isRefreshing })
        #expect(first.value?.map(\.title) == ["One", "Two"])
        #expect(first.source == .network)

        _ = try await posts.create(NewQueriedPost(title: "Three")).value
        let third = try #require(await model.snapshot { $0.value?.count == 3 })
        #expect(third.value?.last?.title == "Three")
        #expect(model.value?.count == 3)
        // Shown already: returned without waiting for another change.
        #expect(await model.snapshot { $0.value?.count == 3 }?.value?.count == 3)

        // A waiter whose task is cancelled returns nil.
        let waiting = Task { @MainActor in await model.snapshot { $0.value?.count == 99 } }
        waiting.cancel()
        #expect(await waiting.value == nil)
    }
}
