import Depot
import DepotInMemory
import DepotOffline
import Foundation

/// Replaying the outbox, and what checking each queued write against the server's record
/// adds to a replay (DepotOffline's Working Offline article, "Another device wrote meanwhile").
///
/// One sample is one `store.outbox.replay()` of ``entries`` queued `PATCH /photos/:id` (one
/// per photo, no photo twice), through `.offline(store)` on an `InMemoryBackend`, and nothing
/// else: before each sample, untimed, a fresh store (a new SQLite file in a folder of its own
/// under the temporary directory) gets the writes queued while the network is down (the
/// records read first where the side needs a base), every replay the queuing started in the
/// background has ended, and the network is back. The three ways:
///
/// - plain: the store never read the photos, so the writes have no base and go as made;
/// - validated: the photos were read from a server that gives a strong `ETag` and checks
///   `If-Match` (``ValidatingServer``), so each write goes once, with `If-Match`, and no read;
/// - compared: the photos were read from a plain `InMemoryBackend`, whose `ETag`s are weak (as
///   json-server's), so the replay reads each photo first (one `GET` per write), compares it
///   with the base, and then sends the write.
///
/// The server keeps its photos from sample to sample (each replay sets their titles again);
/// each side has a server of its own.
enum ReplayCases {
    /// Writes queued and replayed in one sample.
    static let entries = 200
    /// Photos in the servers' data set.
    static let photoCount = 5000
    /// Plain replays timed for the figure `offline.replay.plain`, after one untimed.
    static let plainSamples = 15

    static let all: [BenchmarkCase] = [validated, compared]
    static let figures: [FigureCase] = [plain]

    /// The photos written: ``entries`` distinct ids spread over the data set.
    static let ids: [Int] = {
        var seen = Set<Int>()
        var ids: [Int] = []
        for id in Photos.ids(entries * 4, in: photoCount) {
            guard seen.insert(id).inserted else { continue }
            ids.append(id)
            if ids.count == entries { break }
        }
        return ids
    }()

    /// Replayed `PATCH`es made on records read from a server that checks `If-Match` vs the
    /// same writes made on records never read.
    static let validated = BenchmarkCase(
        name: "offline.replay.validated", target: 1.10, rounds: 21,
        sample: "1 outbox.replay() of \(entries) queued PATCH /photos/:id made on photos read first from "
            + "an InMemoryBackend that gives strong ETags and checks If-Match (each write sent with "
            + "If-Match, no read) vs the same replay of writes to photos the store never read (no base, "
            + "sent as made); each sample on a fresh store file, its writes queued untimed"
    ) { _ in
        let checked = try await ReplaySide.make(.validated)
        do {
            return sides(checked, against: try await ReplaySide.make(.plain))
        } catch {
            checked.remove()
            throw error
        }
    }

    /// Replayed `PATCH`es made on records read from a server whose `ETag`s are weak vs the
    /// same writes made on records never read.
    static let compared = BenchmarkCase(
        name: "offline.replay.compared", target: 2.2, rounds: 21,
        sample: "1 outbox.replay() of \(entries) queued PATCH /photos/:id made on photos read first from "
            + "a plain InMemoryBackend (weak ETags: the replay GETs each photo and compares it with the "
            + "base before the write) vs the same replay of writes to photos the store never read; "
            + "each sample on a fresh store file, its writes queued untimed"
    ) { _ in
        let checked = try await ReplaySide.make(.compared)
        do {
            return sides(checked, against: try await ReplaySide.make(.plain))
        } catch {
            checked.remove()
            throw error
        }
    }

    /// Replays `checked` as the Depot side and `plain` as the baseline, each sample on an
    /// outbox queued afresh.
    private static func sides(_ checked: ReplaySide, against plain: ReplaySide) -> Sides {
        Sides(
            depot: { try await checked.replay() },
            baseline: { try await plain.replay() },
            beforeDepot: { try await checked.queue() },
            beforeBaseline: { try await plain.queue() },
            finish: {
                checked.remove()
                plain.remove()
                return []
            })
    }

    /// Entries per second replayed with no check: the writes have no base.
    static let plain = FigureCase(
        name: "offline.replay.plain",
        sample: "\(plainSamples) outbox.replay() of \(entries) queued PATCH /photos/:id to photos the "
            + "store never read (no base: sent as made) on InMemoryBackend, each on a fresh store file "
            + "with its writes queued untimed"
    ) { _ in
        let side = try await ReplaySide.make(.plain)
        defer { side.remove() }
        let replays = Samples()
        for sample in 0...plainSamples {
            try await side.queue()
            let elapsed = try await OfflineCases.seconds { try await side.replay() }
            if sample > 0 { replays.add(elapsed) }
        }
        return [
            Figure(
                name: "offline.replay.plain", value: Double(entries) / replays.median, unit: "entries/s",
                detail: "\(entries) writes / the median of \(replays.count) replays, "
                    + String(format: "%.3g ms", replays.median * 1e3) + " (\(replays.spread))")
        ]
    }
}

/// One side of a replay case: its server, and the store whose outbox the next sample replays.
final class ReplaySide: @unchecked Sendable {
    /// How the queued writes were made, and so how a replay sends them.
    enum Kind: String {
        /// On records the store never read: no base, sent as made.
        case plain
        /// On records read from a server with strong `ETag`s: sent with `If-Match`.
        case validated
        /// On records read from a server with weak `ETag`s: each record read before its write.
        case compared
    }

    let kind: Kind
    /// The server: its request log is what the check of the side looks at.
    let server: InMemoryBackend
    /// What the store's chain sends to: `server`, or ``ValidatingServer`` around it.
    private let origin: any Backend
    private let body = Data(#"{"title": "replayed"}"#.utf8)
    // Guarded by `lock`.
    private var current: ScratchStore?
    private let lock = NSLock()

    private init(_ kind: Kind) throws {
        self.kind = kind
        server = try InMemoryBackend(database: Photos.database)
        origin = kind == .validated ? ValidatingServer(server) : server
    }

    /// A side whose replays have been checked once: they send what the kind says.
    static func make(_ kind: Kind) async throws -> ReplaySide {
        let side = try ReplaySide(kind)
        try await side.queue()
        try await side.replayChecked()
        return side
    }

    /// A fresh store (the previous one's files removed) whose outbox holds
    /// ``ReplayCases/entries`` queued `PATCH`es, with no replay running and the network up.
    func queue() async throws {
        remove()
        let scratch = try ScratchStore("replay-\(kind.rawValue)")
        let network = SwitchableBackend(origin)
        let backend = network.with(.offline(scratch.store))
        if kind != .plain {
            // The base: each photo's answer, stored by `.offline(store)`.
            for id in ReplayCases.ids {
                let status = try await backend.send(BackendRequest(path: "photos/\(id)")).value.status
                try check(status == 200, "GET photos/\(id) answered \(status)")
            }
            scratch.store.flush()
        }
        network.isOnline = false
        for id in ReplayCases.ids {
            let request = BackendRequest(
                method: .patch, path: "photos/\(id)", headers: ["Content-Type": "application/json"],
                body: body)
            let result = await backend.send(request).result
            guard case .failure(.queued) = result else { throw BenchmarkFailure("not queued: \(result)") }
        }
        // Each write queued behind others started a replay in the background, which the network
        // stopped; a replay now joins the one still running, if one is, and none runs after it.
        let offline = await scratch.store.outbox.replay()
        try check(offline.sent == 0, "\(offline.sent) writes were sent while the network was down")
        let queued = scratch.store.outbox.queuedCount
        try check(queued == ReplayCases.entries, "\(queued) writes queued, not \(ReplayCases.entries)")
        network.isOnline = true
        lock.withLock { current = scratch }
    }

    /// One sample: replays the store's outbox; every write must be sent.
    func replay() async throws {
        guard let store = lock.withLock({ current?.store }) else { throw BenchmarkFailure("nothing queued") }
        let report = await store.outbox.replay()
        try check(
            report.sent == ReplayCases.entries && report.remaining == 0,
            "the replay sent \(report.sent), kept \(report.kept), dropped \(report.dropped), left "
                + "\(report.remaining) (\(report.ending))")
    }

    /// ``replay()``, then a look at what the server received: the writes alone, each with
    /// `If-Match` (validated) or without (plain), or each after a `GET` of its photo (compared).
    private func replayChecked() async throws {
        server.clearRequests()
        try await replay()
        let received = server.requests
        let reads = received.filter { $0.method == .get }
        let writes = received.filter { $0.method == .patch }
        let conditional = writes.filter { $0.headers.contains("If-Match") }
        let entries = ReplayCases.entries
        let summary =
            "\(received.count) requests: \(reads.count) GET, \(writes.count) PATCH, \(conditional.count) "
            + "with If-Match"
        try check(writes.count == entries, "\(kind): \(summary)")
        switch kind {
        case .plain:
            try check(received.count == entries && conditional.isEmpty, "plain replay: \(summary)")
        case .validated:
            try check(
                received.count == entries && conditional.count == entries,
                "validated replay: \(summary) (every write with If-Match, no GET expected)")
            // And the server refuses a write made on another version.
            var stale = BackendRequest(
                method: .patch, path: "photos/\(ReplayCases.ids[0])",
                headers: ["Content-Type": "application/json"], body: body)
            stale.headers["If-Match"] = "\"stale\""
            let refused = await origin.send(stale).result
            guard case .failure(let error) = refused, error.isPreconditionFailed else {
                throw BenchmarkFailure("a PATCH with a stale If-Match was answered \(refused)")
            }
        case .compared:
            let alternating = received.indices.allSatisfy { index in
                received[index].method == (index.isMultiple(of: 2) ? .get : .patch)
            }
            try check(
                received.count == 2 * entries && alternating && conditional.isEmpty,
                "compared replay: \(summary) (a GET before each write expected)")
        }
    }

    /// Removes the current store's files.
    func remove() {
        let previous = lock.withLock {
            defer { current = nil }
            return current
        }
        guard let previous else { return }
        previous.store.flush()
        previous.remove()
    }
}

/// An `InMemoryBackend` behind a server that checks validators, as json-server does not: the
/// answers to `GET /photos/:id` and to writes of one photo carry a strong `ETag`, the photo's
/// version number quoted (`"7"`), which every successful write of it increments, and a write
/// whose `If-Match` names another version is answered `412 Precondition Failed` unapplied.
///
/// The check and the write are not one atomic step: a replay sends one write at a time.
final class ValidatingServer: Backend, @unchecked Sendable {
    private let inner: any Backend
    // Guarded by `lock`: each written photo's version (0 for one never written), by id text.
    private var versions: [String: Int] = [:]
    private let lock = NSLock()

    init(_ inner: any Backend) {
        self.inner = inner
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let segments = request.path.split(separator: "/")
        guard segments.count == 2, segments[0] == "photos" else { return inner.send(request) }
        let id = String(segments[1])
        switch request.method {
        case .get:
            let tag = entityTag(id)
            return inner.send(request).map { response in
                var response = response
                if response.status == 200 { response.headers["ETag"] = tag }
                return response
            }
        case .put, .patch, .delete:
            let current = entityTag(id)
            if let expected = request.headers["If-Match"], expected != "*", expected != current {
                let refusal = BackendResponse(
                    status: 412, headers: ["ETag": current, "Content-Type": "application/json"],
                    body: Data(#"{"error": "Precondition Failed"}"#.utf8))
                return .failure(
                    ServiceError(response: refusal, for: request) ?? .invalidRequest("412 not classified"))
            }
            return inner.send(request).map { [self] response in
                var response = response
                let tag = lock.withLock {
                    let version = versions[id, default: 0] + 1
                    versions[id] = version
                    return "\"\(version)\""
                }
                response.headers["ETag"] = tag
                return response
            }
        default:
            return inner.send(request)
        }
    }

    /// The strong tag of photo `id`'s current version.
    private func entityTag(_ id: String) -> String {
        "\"\(lock.withLock { versions[id, default: 0] })\""
    }
}
