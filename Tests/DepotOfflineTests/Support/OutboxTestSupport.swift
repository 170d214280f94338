import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

/// A backend whose network can be cut: while ``isDown`` every request fails with
/// `.cannotConnect` (nothing reaches the server); otherwise requests go to ``server``. Every
/// request it is given is logged, down or not, so a test sees each attempt.
final class SwitchableBackend: Backend, @unchecked Sendable {
    let server: InMemoryBackend
    private let lock = NSLock()
    private var down = false
    private var failure = ServiceError.cannotConnect
    private var log: [BackendRequest] = []

    init(server: InMemoryBackend = InMemoryBackend(collections: ["todos"])) {
        self.server = server
    }

    var isDown: Bool {
        get { lock.withLock { down } }
        set { lock.withLock { down = newValue } }
    }

    /// Makes every request fail with `error` before reaching the server; `nil`: the network
    /// is back.
    func fail(with error: ServiceError?) {
        lock.withLock {
            down = error != nil
            failure = error ?? .cannotConnect
        }
    }

    /// Every request given to the backend, failed ones included, in order.
    var attempts: [BackendRequest] {
        lock.withLock { log }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let failure: ServiceError? = lock.withLock {
            log.append(request)
            return down ? self.failure : nil
        }
        return failure.map { .failure($0) } ?? server.send(request)
    }
}

/// A backend that always fails with `error`.
struct FailingBackend: Backend {
    let error: ServiceError

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        .failure(error)
    }
}

/// A token source for `.bearer`: `token-1`, `token-2`, … one per call.
final class TokenCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> String {
        lock.withLock {
            count += 1
            return "token-\(count)"
        }
    }
}

/// A `POST todos` with a JSON body.
func todoWrite(_ fields: String, headers: HTTPHeaders = [:]) -> BackendRequest {
    var request = BackendRequest(
        method: .post, path: "todos", headers: headers, body: Data("{\(fields)}".utf8))
    request.headers["Content-Type"] = "application/json"
    return request
}

/// The outbox entry a `.queued` failure names, or a recorded issue.
func queuedWrite(
    _ result: Result<BackendResponse, ServiceError>, sourceLocation: SourceLocation = #_sourceLocation
) -> QueuedWrite? {
    guard case .failure(.queued(let write)) = result else {
        Issue.record("expected .queued, got \(result)", sourceLocation: sourceLocation)
        return nil
    }
    return write
}

/// Fails the test unless `result` is `.queued`; returns the queued write.
func queued<T>(_ result: Result<T, ServiceError>) -> QueuedWrite? {
    guard case .failure(.queued(let write)) = result else {
        Issue.record("not queued: \(result)")
        return nil
    }
    return write
}

/// Replays until nothing is queued, and returns how many entries are left. A replay started in
/// the background when a second write was queued behind the first may still be running when
/// the network comes back: the first call may join it, or find it already done, so what was
/// sent is read from the server, not from the reports.
func replayAll(_ store: OfflineStore) async -> Int {
    for _ in 0..<5 {
        if await store.outbox.replay().remaining == 0 { break }
    }
    return store.outbox.queuedCount
}

/// The titles of the records of `collection`, in order.
func titles(in server: InMemoryBackend, _ collection: String = "todos") -> [String] {
    server.records(in: collection).compactMap { $0["title"]?.stringValue }
}

/// How long a test waits for something that should happen promptly before it calls it a
/// hang: generous, since the whole suite shares the machine's threads and a loaded 2-core
/// machine can delay a prompt event by a minute; a test that gets its events goes on at once.
let hangBound: Double = 300

/// What `body` returns, or `nil` when it takes longer than `seconds` (the body then keeps
/// running, detached, so that a hang fails the test instead of blocking it).
func awaitWithin<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> T) async -> T? {
    let once = ResumeOnce<T?>()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        once.set(continuation)
        Task { once.resume(await body()) }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            once.resume(nil)
        }
    }
}

/// Resumes a continuation once, whichever of its callers comes first.
final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Never>?

    func set(_ continuation: CheckedContinuation<T, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    func resume(_ value: T) {
        let continuation = lock.withLock {
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(returning: value)
    }
}

/// The first `count` events of `stream`, waiting at most `seconds` (fewer when time runs out).
func firstEvents(
    _ count: Int, of stream: AsyncStream<OutboxEvent>, within seconds: Double = hangBound
) async -> [OutboxEvent] {
    await withTaskGroup(of: [OutboxEvent]?.self) { group in
        group.addTask {
            var events: [OutboxEvent] = []
            for await event in stream {
                events.append(event)
                if events.count == count { break }
            }
            return events
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? []
    }
}

extension OutboxEvent {
    /// `queued`, `sent`, `kept`, `discarded`, `created` or `conflict`, with the entry's id: for
    /// comparing sequences.
    var summary: String {
        switch self {
        case .queued(let entry): "queued \(entry.id)"
        case .sent(let entry, _): "sent \(entry.id)"
        case .kept(let entry, _): "kept \(entry.id)"
        case .discarded(let entry): "discarded \(entry.id)"
        case .created(let entry, _, _): "created \(entry.id)"
        case .conflict(let entry, _): "conflict \(entry.id)"
        }
    }
}

extension InMemoryBackend {
    /// Answers `<prefix>/<collection>` and `<prefix>/<collection>/<id>` as json-server answers
    /// `<collection>` and `<collection>/<id>`: an API whose collections sit under a prefix
    /// (`v2/posts`), which json-server's convention reads otherwise (`v2/posts/7` has an odd
    /// count).
    func mount(_ prefix: String, _ collection: String) {
        let unprefixed = { @Sendable (request: BackendRequest) -> BackendRequest in
            let path = request.path.drop { $0 == "/" }.dropFirst(prefix.count + 1)
            return BackendRequest(
                method: request.method, path: String(path), query: request.query, headers: request.headers,
                body: request.body)
        }
        for method in [HTTPMethod.get, .post] {
            route(method, "\(prefix)/\(collection)") { $0.jsonServerResponse(for: unprefixed($0.request)) }
        }
        for method in [HTTPMethod.get, .put, .patch, .delete] {
            route(method, "\(prefix)/\(collection)/:id") {
                $0.jsonServerResponse(for: unprefixed($0.request))
            }
        }
    }
}
