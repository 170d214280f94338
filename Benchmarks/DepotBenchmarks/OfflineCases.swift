import Depot
import DepotInMemory
import DepotOffline
import Foundation

/// DepotOffline: serving a stored answer must cost about what decoding it costs, storing
/// answers must stay off the caller's path, and a queued write and the store's file are
/// reported as figures.
///
/// Every store is a fresh file in a folder of its own under the temporary directory, deleted
/// when the case ends.
enum OfflineCases {
    /// Writes (and inserts) timed one after the other for the write figures.
    static let writes = 200
    /// Photos in the data set: the store-size figure keeps the answer to `GET /photos` and
    /// one answer per `GET /photos/:id`.
    static let photoCount = 5000

    static let all: [BenchmarkCase] = [storedRead, online, onlineWrite]
    static let figures: [FigureCase] = [queuedWrite, storeSize]

    /// `findAll()` of 5000 photos answered from the store (the network fails) vs
    /// `JSONDecoder` on the same bytes.
    static let storedRead = BenchmarkCase(
        name: "offline.read.photos5000", target: 1.3, rounds: 41,
        sample: "1 findAll of 5000 photos served by .offline(store) from its file while every request "
            + "fails with .cannotConnect vs 1 JSONDecoder().decode([Photo].self) of the same bytes"
    ) { _ in
        let scratch = try ScratchStore("read")
        let network = SwitchableBackend(try InMemoryBackend(database: Photos.database))
        let backend = network.with(.offline(scratch.store))
        let photos = PhotoRepository(backend: backend)
        // One successful read stores the answer, off the caller's path; then the network goes.
        let fetched = try await photos.findAll().value
        try check(fetched.count == photoCount, "the online findAll returned \(fetched.count) photos")
        network.isOnline = false
        // A look-up runs on the store's serial queue after the write that was queued before
        // it, so this answer is the stored one (the receipt says so): the store holds it now.
        let receipt = AnswerReceipt()
        let bytes = try await receipt.collect {
            try await backend.send(BackendRequest(path: "photos")).value.body
        }
        guard case .stored = receipt.source else {
            throw BenchmarkFailure("the answer did not come from the store")
        }
        return Sides(
            depot: {
                let all = try await photos.findAll().value
                try check(all.count == 5000 && all.last?.id == 5000, "findAll returned \(all.count) photos")
            },
            baseline: {
                let all = try JSONDecoder().decode([Photo].self, from: bytes)
                try check(all.count == 5000 && all.last?.id == 5000, "decoded \(all.count) photos")
            },
            finish: {
                scratch.remove()
                return []
            })
    }

    /// `findByID` over loopback through `.offline(store)` vs the same backend without it.
    ///
    /// What is measured: the caller's wall time for `URLSessionCases.requests` sequential
    /// requests, each of whose answers `.offline(store)` keeps after the caller has it: in
    /// memory, written in batches (one transaction for the answers of a tenth of a second) on
    /// the store's serial queue. The batches written during the timed sample run on the
    /// machine's other core, so whatever they take from the caller (CPU, the store's lock) is
    /// counted. What a sample leaves waiting at its end is written by `settle`, untimed, before the next
    /// sample of either side starts: no round pays for an earlier round's backlog, and
    /// neither side runs next to the other's storing. How long that drain took is reported
    /// as the figure `offline.online.findByID.drain`: a backlog would show there.
    static let online = BenchmarkCase(
        name: "offline.online.findByID", target: 1.10, rounds: 51,
        sample: "\(URLSessionCases.requests) GET /photos/:id one after the other over loopback: findByID "
            + "through URLSessionBackend.with(.offline(store)) (every answer stored) vs the same backend "
            + "without it",
        requestsPerSample: URLSessionCases.requests, needsServer: true
    ) { environment in
        guard let baseURL = environment.baseURL else { throw BenchmarkFailure("no --base-url") }
        let scratch = try ScratchStore("online")
        let network = URLSessionBackend(baseURL: baseURL)
        let stored = PhotoRepository(backend: network.with(.offline(scratch.store)))
        let plain = PhotoRepository(backend: network)
        let ids = Photos.ids(URLSessionCases.requests, in: photoCount)
        let expected = ids.reduce(0, +)
        let drains = Samples()
        return Sides(
            depot: {
                var sum = 0
                for id in ids { sum &+= try await stored.findByID(id).value.id }
                try check(sum == expected, "findByID returned other photos")
            },
            baseline: {
                var sum = 0
                for id in ids { sum &+= try await plain.findByID(id).value.id }
                try check(sum == expected, "findByID returned other photos")
            },
            settle: {
                drains.add(await seconds { await drain(scratch.store) })
            },
            finish: {
                let count = try OfflineResponseStorage(store: scratch.store).count()
                scratch.remove()
                try check(count == Set(ids).count, "the store kept \(count) answers")
                return [
                    Figure(
                        name: "offline.online.findByID.drain", value: drains.median * 1e3, unit: "ms",
                        detail: "median wait, after a sample, until the answers it left queued were "
                            + "written (untimed: OfflineStore.flush()), over \(drains.count) samples")
                ]
            })
    }

    /// A write through `.offline(store)` while the network is up and nothing is queued: what
    /// the outbox adds to every write (an `Idempotency-Key`, a look at the file for entries it
    /// must wait behind, one future around the send), measured on the in-memory backend,
    /// whose own work is a few microseconds, so the ratio is the largest it can be; over a
    /// network the same microseconds are a far smaller share.
    static let onlineWrite = BenchmarkCase(
        name: "offline.online.write.inmemory", target: 2.5, rounds: 41,
        sample: "\(writes) PATCH /photos/:id one after the other on InMemoryBackend: through "
            + ".offline(store) (nothing queued) vs the same backend without it"
    ) { _ in
        let scratch = try ScratchStore("online-write")
        let server = try InMemoryBackend(database: Photos.database)
        let through = server.with(.offline(scratch.store))
        let ids = Photos.ids(writes, in: photoCount)
        let body = Data(#"{"title": "patched"}"#.utf8)
        @Sendable func patch(_ backend: any Backend) async throws {
            for id in ids {
                let request = BackendRequest(
                    method: .patch, path: "photos/\(id)", headers: ["Content-Type": "application/json"],
                    body: body)
                let status = try await backend.send(request).value.status
                try check(status == 200, "PATCH answered \(status)")
            }
        }
        return Sides(
            depot: { try await patch(through) },
            baseline: { try await patch(server) },
            finish: {
                let queued = scratch.store.outbox.queuedCount
                scratch.remove()
                try check(queued == 0, "\(queued) writes were queued while the network was up")
                return []
            })
    }

    /// The cost of one durable queued write, and of what the store offers publicly to
    /// measure one without the outbox.
    static let queuedWrite = FigureCase(
        name: "offline.outbox.write",
        sample: "\(writes) POST /photos one after the other through .offline(store) over a backend that "
            + "fails with .cannotConnect (the outbox; figure offline.outbox.passthrough where writes "
            + "still pass through), and \(writes) of each of OfflineResponseStorage's insert and "
            + "insert + durable commit (offline.store.insert, offline.store.durableInsert)"
    ) { _ in
        let scratch = try ScratchStore("outbox")
        defer { scratch.remove() }
        let body = try JSONEncoder().encode(
            Photo(
                id: 5001, albumId: 101, title: "accusamus beatae ad facilis cum similique qui sunt",
                url: "https://via.placeholder.com/600/92c952",
                thumbnailUrl: "https://via.placeholder.com/150/92c952"))
        var figures: [Figure] = []

        // 1. Through the middleware, as an app writes.
        let backend = UnreachableBackend().with(.offline(scratch.store))
        let through = Samples()
        var queued = 0
        var passedThrough = 0
        for _ in 0..<writes {
            let request = BackendRequest(
                method: .post, path: "photos", headers: ["Content-Type": "application/json"], body: body)
            var outcome: Result<BackendResponse, ServiceError> = .failure(.cancelled)
            through.add(await seconds { outcome = await backend.send(request).result })
            switch outcome {
            case .failure(.queued): queued += 1
            case .failure(.cannotConnect): passedThrough += 1
            default: throw BenchmarkFailure("a write through .offline(store) ended with \(outcome)")
            }
        }
        if queued == writes {
            let entries = try scratch.store.outbox.entries().count
            try check(entries == writes, "the outbox holds \(entries) entries after \(writes) queued writes")
            figures.append(
                Figure(
                    name: "offline.outbox.write", value: through.median * 1e3, unit: "ms",
                    detail: "median of \(writes): a POST through .offline(store) that cannot connect, "
                        + "until its caller has .queued (committed durably to the outbox); \(through.spread)")
            )
        } else if passedThrough == writes {
            figures.append(
                Figure(
                    name: "offline.outbox.passthrough", value: through.median * 1e3, unit: "ms",
                    detail: "median of \(writes): this build's outbox does not queue yet, writes pass "
                        + "through and fail with .cannotConnect, nothing is written: NOT a durable write"))
        } else {
            throw BenchmarkFailure("\(queued) writes were queued and \(passedThrough) passed through")
        }

        // 2. The public stand-in: an insert of a row of the same size as the write, in one
        // transaction committed without a sync (how stored answers are written), and the
        // same insert followed by a durable commit (synchronous=FULL: the write-ahead log is
        // synced to disk, which makes the insert durable too) — here the removal of the
        // answers, the one durable write the store makes public.
        let answers = OfflineResponseStorage(store: scratch.store)
        let response = StoredResponse(
            BackendResponse(status: 201, headers: ["Content-Type": "application/json"], body: body))
        let inserts = Samples()
        for index in 0..<writes {
            let key = StoredResponseKey(path: "photos/insert/\(index)")
            inserts.add(try await seconds { try answers.store(response, for: key) })
        }
        // A look-up of a stored answer (what CacheMiddleware on this storage does per GET):
        // a read; its recency is written with the next write.
        let lookups = Samples()
        for index in 0..<writes {
            let key = StoredResponseKey(path: "photos/insert/\(index)")
            lookups.add(
                try await seconds {
                    guard try answers.response(for: key) != nil else { throw BenchmarkFailure("no answer") }
                })
        }
        let durable = Samples()
        for index in 0..<writes {
            let key = StoredResponseKey(path: "photos/durable/\(index)")
            durable.add(
                try await seconds {
                    try answers.store(response, for: key)
                    try answers.removeAllResponses()
                })
        }
        try check(try answers.count() == 0, "answers are left after removeAllResponses")
        figures.append(
            Figure(
                name: "offline.store.insert", value: inserts.median * 1e3, unit: "ms",
                detail: "median of \(writes): OfflineResponseStorage.store of a \(body.count)-byte "
                    + "answer, one transaction, synchronous=NORMAL (no sync)"))
        figures.append(
            Figure(
                name: "offline.store.lookup", value: lookups.median * 1e3, unit: "ms",
                detail: "median of \(writes): OfflineResponseStorage.response(for:) of a stored "
                    + "\(body.count)-byte answer (a read; its recency written with the next write); "
                    + lookups.spread))
        figures.append(
            Figure(
                name: "offline.store.durableInsert", value: durable.median * 1e3, unit: "ms",
                detail: "median of \(writes): the same insert, then removeAllResponses(), a durable "
                    + "commit (synchronous=FULL, the log synced to disk); \(durable.spread)"))
        return figures
    }

    /// The store's file after keeping the 5000-photo answer and 5000 single-photo answers.
    static let storeSize = FigureCase(
        name: "offline.store.size",
        sample: "the store's files (file + -wal) after .offline(store) kept the answers to GET /photos "
            + "(5000 photos) and to GET /photos/1…5000, from InMemoryBackend"
    ) { _ in
        let scratch = try ScratchStore("size")
        defer { scratch.remove() }
        let network = try InMemoryBackend(database: Photos.database)
        let photos = PhotoRepository(backend: network.with(.offline(scratch.store)))
        var bodyBytes = try await network.send(BackendRequest(path: "photos")).value.body.count
        let all = try await photos.findAll().value
        try check(all.count == photoCount, "findAll returned \(all.count) photos")
        for id in 1...photoCount {
            bodyBytes += try await network.send(BackendRequest(path: "photos/\(id)")).value.body.count
            _ = try await photos.findByID(id).value
        }
        await drain(scratch.store)
        let answers = OfflineResponseStorage(store: scratch.store)
        let count = try answers.count()
        try check(count == photoCount + 1, "the store kept \(count) answers")
        let counted = try answers.totalBytes()
        let (file, wal) = try scratch.fileSizes()
        return [
            Figure(
                name: "offline.store.bytes", value: Double(file + wal), unit: "bytes",
                detail:
                    "file \(Report.amount(Double(file), "bytes")) + -wal \(Report.amount(Double(wal), "bytes")) "
                    + "for \(count) answers whose bodies are \(Report.amount(Double(bodyBytes), "bytes")) "
                    + "(\(Report.amount(Double(counted), "bytes")) counted against maxBytes)"),
            Figure(
                name: "offline.store.fileBytes", value: Double(file), unit: "bytes",
                detail: "the SQLite file alone"),
            Figure(
                name: "offline.store.walBytes", value: Double(wal), unit: "bytes",
                detail: "its -wal file, not checkpointed by the benchmark"),
        ]
    }

    /// Returns once every answer `.offline(store)` kept for `store` is written: the answers
    /// still waiting in memory to be written with others (see `OfflineMiddleware`).
    static func drain(_ store: OfflineStore) async {
        store.flush()
    }

    /// The wall-clock seconds `work` takes.
    static func seconds(_ work: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await work()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// A backend that answers through another one while online, and fails every request with
/// `.cannotConnect` while offline: the network switched off.
final class SwitchableBackend: Backend, @unchecked Sendable {
    private let inner: any Backend
    // Guarded by `lock`.
    private var online = true
    private let lock = NSLock()

    init(_ inner: any Backend) {
        self.inner = inner
    }

    /// Whether requests reach `inner`.
    var isOnline: Bool {
        get { lock.withLock { online } }
        set { lock.withLock { online = newValue } }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        isOnline ? inner.send(request) : .failure(.cannotConnect)
    }
}

/// A backend whose every request fails with `.cannotConnect`.
struct UnreachableBackend: Backend {
    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        .failure(.cannotConnect)
    }
}

/// A fresh `OfflineStore` in a folder of its own under the temporary directory.
struct ScratchStore: Sendable {
    let folder: URL
    let store: OfflineStore

    init(_ label: String) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "depot-benchmarks-\(label)-\(UUID().uuidString)", isDirectory: true)
        store = try OfflineStore(at: folder.appendingPathComponent("store.sqlite"))
    }

    /// The sizes of the store's file and of its `-wal` file (0 when absent).
    func fileSizes() throws -> (file: Int, wal: Int) {
        func size(_ path: String) throws -> Int {
            let url = URL(fileURLWithPath: path)
            guard FileManager.default.fileExists(atPath: path) else { return 0 }
            return try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
        }
        let path = store.url.path
        return (try size(path), try size(path + "-wal"))
    }

    /// Deletes the folder and the store's files in it.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Durations collected from `@Sendable` closures.
final class Samples: @unchecked Sendable {
    // Guarded by `lock`.
    private var values: [Double] = []
    private let lock = NSLock()

    func add(_ value: Double) {
        lock.withLock { values.append(value) }
    }

    var count: Int { lock.withLock { values.count } }
    var median: Double { lock.withLock { Runner.median(values) } }

    /// The 10th and 90th percentiles in milliseconds, for a figure's detail: fsync times vary.
    var spread: String {
        let sorted = lock.withLock { values.sorted() }
        guard !sorted.isEmpty else { return "no samples" }
        func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(q * Double(sorted.count)))] * 1e3 }
        return String(format: "p10 %.3g ms, p90 %.3g ms", at(0.1), at(0.9))
    }
}
