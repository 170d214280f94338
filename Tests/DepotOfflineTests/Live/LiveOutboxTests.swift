import Depot
import Foundation
import Testing

@testable import DepotOffline

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The live servers `bash scripts/test` starts, as far as these tests need them (the same
/// variables DepotTests' `LiveServer` reads; that file is in another test target).
enum OfflineLiveServer {
    /// The Django REST framework app of Tests/Servers/.
    static let drf = url("DEPOT_DRF_URL")
    /// A port on 127.0.0.1 where nothing listens.
    static let closed = url("DEPOT_CLOSED_URL")

    static var isAvailable: Bool { drf != nil && closed != nil }

    /// A private copy of the DRF app's seed data (100 posts: the first created is 101).
    static func drfSpace() throws -> URL {
        let base = try #require(drf)
        let name = "t" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return try #require(URL(string: base.absoluteString + "/s/" + name + "/"))
    }

    private static func url(_ name: String) -> URL? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return URL(string: value)
    }
}

/// Adds `X-Test-Drop-Response: 1` to the first request only: the DRF app applies that write
/// and closes the connection unanswered; later requests (the replay) are answered.
final class DropFirstResponse: Middleware, @unchecked Sendable {
    private let lock = NSLock()
    private var dropped = false

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let drop = lock.withLock {
            defer { dropped = true }
            return !dropped
        }
        var request = request
        if drop { request.headers["X-Test-Drop-Response"] = "1" }
        return next(request)
    }
}

/// The outbox against the DRF app over real HTTP (URLSessionBackend): a lost answer is
/// replayed without a duplicate thanks to `Idempotency-Key`, and writes queued while the
/// server cannot be reached are replayed to it in order.
@Suite(
    .enabled(
        if: OfflineLiveServer.isAvailable,
        "needs the live test servers (DEPOT_DRF_URL, DEPOT_CLOSED_URL): run `bash scripts/test --filter DepotOfflineTests`"
    )
)
struct LiveOutboxTests {
    private func post(_ title: String) -> BackendRequest {
        var request = BackendRequest(
            method: .post, path: "posts",
            body: Data(#"{"userId": 1, "title": "\#(title)", "body": "text"}"#.utf8))
        request.headers["Content-Type"] = "application/json"
        return request
    }

    /// The ids of the space's posts titled `title`.
    private func ids(titled title: String, in backend: URLSessionBackend) async throws -> [Int] {
        let request = BackendRequest(path: "posts", query: [URLQueryItem(name: "title", value: title)])
        let body = try await backend.send(request).value.body
        let posts = try JSONDecoder().decode([[String: JSONValue]].self, from: body)
        return posts.compactMap { $0["id"]?.intValue }
    }

    @Test("a POST whose answer is lost is queued; the replay gets the stored 201 and creates nothing more")
    func lostAnswerReplayedOnce() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let server = URLSessionBackend(baseURL: try OfflineLiveServer.drfSpace())
        let backend = server.with(.offline(store), DropFirstResponse())
        let title = "lost-" + UUID().uuidString.lowercased()
        let result = await backend.send(post(title)).result
        let write = try #require(queuedWrite(result))
        // The server applied it although the client never heard.
        #expect(try await ids(titled: title, in: server) == [101])

        let events = store.outbox.events
        let report = await store.outbox.replay()
        #expect(report == OutboxReplayReport(sent: 1, kept: 0, remaining: 0, ending: .finished))
        let seen = await firstEvents(1, of: events)
        guard case .sent(let entry, let response) = seen.first else {
            Issue.record("expected .sent, got \(seen)")
            return
        }
        #expect(entry.id == write.id)
        #expect(response.status == 201)
        #expect(response.headers["Idempotent-Replayed"] == "true")
        #expect(try JSONDecoder().decode([String: JSONValue].self, from: response.body)["id"] == .int(101))
        #expect(try await ids(titled: title, in: server) == [101])
        #expect(try store.outbox.entries().isEmpty)
    }

    @Test("writes queued while the server's port is closed are replayed to it in order")
    func queuedWhileUnreachableReplayedInOrder() async throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let closed = URLSessionBackend(baseURL: try #require(OfflineLiveServer.closed)).with(.offline(store))
        let run = UUID().uuidString.lowercased()
        var written: [QueuedWrite] = []
        for index in 1...3 {
            written += [try #require(queuedWrite(await closed.send(post("\(run)-\(index)")).result))]
        }
        // The replay the queued-behind writes started ends on the closed port.
        let settled = await store.outbox.replay()
        #expect(settled.remaining == 3)
        #expect(try store.outbox.entries().map(\.id) == written.map(\.id))

        let server = URLSessionBackend(baseURL: try OfflineLiveServer.drfSpace())
        let events = store.outbox.events
        let report = await store.outbox.replay(through: server)
        #expect(report == OutboxReplayReport(sent: 3, kept: 0, remaining: 0, ending: .finished))
        // Each create is `.sent`, then `.created` (its local id named by the server).
        let seen = await firstEvents(6, of: events).filter {
            if case .sent = $0 { true } else { false }
        }
        var created: [Int] = []
        for event in seen {
            guard case .sent(_, let response) = event else { continue }
            created +=
                try JSONDecoder().decode([String: JSONValue].self, from: response.body)["id"]?.intValue
                .map { [$0] } ?? []
        }
        #expect(seen.map(\.entry.id) == written.map(\.id))
        #expect(created == [101, 102, 103])
        for index in 1...3 {
            #expect(try await ids(titled: "\(run)-\(index)", in: server) == [100 + index])
        }
    }
}
