import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

// A seeded, repeatable model test of the whole offline pipeline (issue 34, item 6): random
// sequences of reads, writes, watches, network cuts, restarts and another device's writes, run
// through `.live()` and `.offline(store)` on InMemoryBackend, then compared with the reference
// model of OfflineReferenceModel.swift. `MODEL_SEEDS=200` runs seeds 1 to 200 (`MODEL_SEEDS=3,17`
// those two, `MODEL_SEED=17` that one), `MODEL_OPS=80` longer runs.

@Suite("Offline model: seeded random runs against a reference model", .timeLimit(.minutes(60)))
struct OfflineModelTests {
    @Test(
        "the server, the outbox, its events and the watches end as the reference model says",
        arguments: ModelPolicy.allCases)
    func randomRuns(policy: ModelPolicy) async throws {
        let seeds = ModelSettings.seeds
        var conflicts = 0
        var modelConflicts = 0
        var merges = 0
        var checkedWatches = 0
        for seed in seeds {
            let run = try ModelRun(seed: seed, policy: policy, operations: ModelSettings.operations)
            await run.run()
            conflicts += run.conflictEvents
            modelConflicts += run.modelConflicts
            merges += run.merges
            checkedWatches += run.checkedWatches
            guard run.failures.isEmpty else {
                Issue.record(
                    """
                    Seed \(seed), policy .\(policy.rawValue), \(ModelSettings.operations) operations \
                    (`MODEL_SEED=\(seed) MODEL_OPS=\(ModelSettings.operations) swift test --filter OfflineModel` \
                    runs it again):
                    \(run.failures.joined(separator: "\n"))
                    The operations:
                    \(run.log.joined(separator: "\n"))
                    """)
                return
            }
        }
        // Over a set of seeds, the runs meet what they are for.
        if seeds.count >= 10 {
            #expect(conflicts > 0, "no conflict in \(seeds.count) runs")
            #expect(conflicts == modelConflicts, "the model counted \(modelConflicts) conflicts")
            #expect(merges > 0, "no merge of other fields in \(seeds.count) runs")
            #expect(checkedWatches > 0, "no watch was compared in \(seeds.count) runs")
        }
    }
}

/// The seeds and the length of the runs: 20 seeds of 40 operations, or `MODEL_SEEDS` (a count
/// from 1, or a comma-separated list), `MODEL_SEED` (one) and `MODEL_OPS` (at most 90, so that
/// the writes a run sends stay within the 100 recent outcomes the store lays over old answers).
private enum ModelSettings {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["MODEL_SEED"].flatMap({ UInt64($0) }) { return [one] }
        let text = environment["MODEL_SEEDS"] ?? ""
        if text.contains(",") { return text.split(separator: ",").compactMap { UInt64($0) } }
        return Array(1...max(1, UInt64(text) ?? 20))
    }

    static var operations: Int {
        min(90, max(1, Int(ProcessInfo.processInfo.environment["MODEL_OPS"] ?? "") ?? 40))
    }
}

// MARK: - The app's side

/// A record of either collection, read and written whole: its id and every member.
private struct ModelRecord: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var fields: ModelFields

    init(id: Int, fields: ModelFields) {
        self.id = id
        self.fields = fields
        self.fields["id"] = .int(id)
    }

    init(from decoder: any Decoder) throws {
        let fields = try ModelFields(from: decoder)
        guard case .int(let id)? = fields["id"] else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "no integer id"))
        }
        self.id = id
        self.fields = fields
    }

    func encode(to encoder: any Encoder) throws {
        try fields.encode(to: encoder)
    }
}

/// `/posts` or `/comments`.
private struct ModelRepository: CRUDRepository {
    typealias Entity = ModelRecord
    let backend: any Backend
    let name: String
}

/// Marks a watch's reads with ``field``, so that none shares a request with the app's own reads
/// and the store keeps none of their answers. The store's bases come from the answers it keeps;
/// a watch reads again whenever a write touches what it shows, at moments no model can tell,
/// so only the app's reads (made at known moments) are kept.
private struct WatchReadMark: Middleware {
    static let field = "X-Model-Watch"

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        guard request.method == .get, request.context.reads != nil else { return next(request) }
        var marked = request
        marked.headers[Self.field] = "1"
        return next(marked)
    }
}

/// A value that changes on other tasks, and a wait, with a bound, for it to pass a test
/// (`@unchecked Sendable`: the value and the waiters are read and changed under `lock` only).
private final class Observed<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    private var waiters: [(test: @Sendable (Value) -> Bool, once: ResumeOnce<Bool>)] = []

    init(_ value: Value) {
        self.value = value
    }

    var current: Value { lock.withLock { value } }

    func update(_ change: (inout Value) -> Void) {
        let ready = lock.withLock { () -> [ResumeOnce<Bool>] in
            change(&value)
            let ready = waiters.filter { $0.test(value) }.map(\.once)
            waiters.removeAll { waiter in ready.contains { $0 === waiter.once } }
            return ready
        }
        for once in ready { once.resume(true) }
    }

    /// Whether the value passes `test` now or within `seconds`.
    func wait(within seconds: Double, until test: @escaping @Sendable (Value) -> Bool) async -> Bool {
        let once = ResumeOnce<Bool>()
        let timer = Locked<Task<Void, Never>?>(nil)
        let passed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            once.set(continuation)
            let now = lock.withLock { () -> Bool in
                if test(value) { return true }
                waiters.append((test, once))
                return false
            }
            if now {
                once.resume(true)
            } else {
                timer.withLock {
                    $0 = Task {
                        try? await Task.sleep(for: .seconds(seconds))
                        once.resume(false)
                    }
                }
            }
        }
        timer.withLock { $0?.cancel() }
        return passed
    }
}

/// What a read answered: the records, the record, or the failure's status; with the pending
/// writes the answer included.
private enum Observation: Equatable, Sendable, CustomStringConvertible {
    case records([ModelFields], pending: Int)
    case record(ModelFields, pending: Int)
    case failure(status: Int?, pending: Int)

    init(_ result: Result<[ModelRecord], any Error>, pending: Int) {
        switch result {
        case .success(let records): self = .records(records.map(\.fields), pending: pending)
        case .failure(let error):
            self = .failure(status: (error as? ServiceError)?.statusCode, pending: pending)
        }
    }

    init(_ result: Result<ModelRecord, any Error>, pending: Int) {
        switch result {
        case .success(let record): self = .record(record.fields, pending: pending)
        case .failure(let error):
            self = .failure(status: (error as? ServiceError)?.statusCode, pending: pending)
        }
    }

    var description: String {
        switch self {
        case .records(let records, let pending):
            "\(records.map { ModelText.fields($0) }) (pending \(pending))"
        case .record(let record, let pending): "\(ModelText.fields(record)) (pending \(pending))"
        case .failure(let status, let pending):
            "failure \(status.map(String.init) ?? "-") (pending \(pending))"
        }
    }
}

/// One store opened on the run's file, with its chain (`.live()` in front of `.offline(store)`
/// over the switchable network), the watches started on it and its outbox's events.
private final class DeviceSession {
    let store: OfflineStore
    let posts: ModelRepository
    let comments: ModelRepository
    /// The outbox's events since the store was opened, as lines (see ``ModelRun/line(_:)``).
    let events = Observed<[String]>([])
    private var tasks: [Task<Void, Never>] = []

    init(file: URL, network: SwitchableBackend, policy: ModelPolicy) throws {
        store = try OfflineStore(at: file)
        let offline = OfflinePolicy(
            storesResponse: { request, _ in !request.headers.contains(WatchReadMark.field) },
            onConflict: policy.conflictPolicy)
        let backend = network.with(WatchReadMark(), .live(), .offline(store, policy: offline))
        posts = ModelRepository(backend: backend, name: ModelCollection.posts.rawValue)
        comments = ModelRepository(backend: backend, name: ModelCollection.comments.rawValue)
        let stream = store.outbox.events
        let events = events
        tasks.append(
            Task {
                for await event in stream { events.update { $0.append(ModelRun.line(event)) } }
            })
    }

    func repository(_ collection: ModelCollection) -> ModelRepository {
        collection == .posts ? posts : comments
    }

    /// Starts watching `findAll` of `collection`, or `findByID(id)`; its latest snapshot.
    func watch(_ collection: ModelCollection, id: Int?) -> Observed<Observation?> {
        let latest = Observed<Observation?>(nil)
        let repository = repository(collection)
        if let id {
            let watch = repository.watch { try await $0.findByID(id).value }
            tasks.append(
                Task {
                    for await snapshot in watch {
                        latest.update { $0 = Observation(snapshot.result, pending: snapshot.pendingWrites) }
                    }
                })
        } else {
            let watch = repository.watch { try await $0.findAll().value }
            tasks.append(
                Task {
                    for await snapshot in watch {
                        latest.update { $0 = Observation(snapshot.result, pending: snapshot.pendingWrites) }
                    }
                })
        }
        return latest
    }

    /// Ends the watches and the events' subscription; whether they ended within the bound.
    func close() async -> Bool {
        let tasks = tasks
        self.tasks = []
        for task in tasks { task.cancel() }
        return await awaitWithin(hangBound) {
            for task in tasks { await task.value }
            return true
        } ?? false
    }
}

/// A watch of the run, and whether the reference model can tell what it shows: `dirty` once
/// something it shows changed without a change it hears of (another device's write, a comment
/// the server swept, a network cut), clean again when a change it hears of comes while online.
private struct ModelWatch {
    var collection: ModelCollection
    /// The id `findByID` was given; `nil` for `findAll`.
    var id: Int?
    var dirty: Bool
    var latest: Observed<Observation?>

    var resource: RequestResource {
        RequestResource(path: id.map { "\(collection.rawValue)/\($0)" } ?? collection.rawValue)
    }

    var name: String {
        id.map { "findByID(\(collection.rawValue)/\($0))" } ?? "findAll(\(collection.rawValue))"
    }
}

/// Short texts for the operation log and the comparisons, members in order of their names.
private enum ModelText {
    static func fields(_ fields: ModelFields?) -> String {
        fields.map { json(.object($0)) } ?? "nil"
    }

    static func json(_ value: JSONValue?) -> String {
        switch value {
        case nil: "nil"
        case .null?: "null"
        case .bool(let flag)?: "\(flag)"
        case .int(let number)?: "\(number)"
        case .double(let number)?: "\(number)"
        case .string(let text)?: "\"\(text)\""
        case .array(let elements)?: "[" + elements.map { json($0) }.joined(separator: ", ") + "]"
        case .object(let members)?:
            "{" + members.keys.sorted().map { "\($0): \(json(members[$0]))" }.joined(separator: ", ") + "}"
        }
    }
}

// MARK: - One run

/// One seeded run: a server, a device whose store is a file, the reference model, and the log
/// of what was done. Used from one task.
private final class ModelRun {
    let seed: UInt64
    let policy: ModelPolicy
    let operations: Int
    private(set) var log: [String] = []
    private(set) var failures: [String] = []
    private(set) var conflictEvents = 0
    private(set) var checkedWatches = 0
    var merges: Int { model.merges }
    var modelConflicts: Int { model.conflicts }

    private var random: SplitMix64
    private let folder: TemporaryFolder
    private let server: InMemoryBackend
    private let network: SwitchableBackend
    private var session: DeviceSession
    private var model: DeviceModel
    private var online = true
    /// The ids the app holds for each collection (server ids, and local ids it was given).
    private var known: [ModelCollection: [Int]] = [.posts: [1, 2, 3], .comments: [1, 2, 3]]
    private var watches: [ModelWatch] = []
    /// The events the model predicts for the current session.
    private var expectedEvents: [String] = []

    private static let titles = ["A", "B", "C", "D"]
    private static let bodies = ["x", "y", "z"]

    init(seed: UInt64, policy: ModelPolicy, operations: Int) throws {
        self.seed = seed
        self.policy = policy
        self.operations = operations
        random = SplitMix64(seed: seed)
        let posts: [ModelFields] = (1...3).map {
            ["id": .int($0), "title": .string(Self.titles[$0 - 1]), "body": "x", "views": .int($0)]
        }
        let comments: [ModelFields] = [
            ["id": 1, "postId": 1, "body": "x"], ["id": 2, "postId": 1, "body": "y"],
            ["id": 3, "postId": 2, "body": "z"],
        ]
        let database: JSONValue = [
            "posts": .array(posts.map(JSONValue.object)), "comments": .array(comments.map(JSONValue.object)),
        ]
        server = try InMemoryBackend(database: JSONEncoder().encode(database))
        network = SwitchableBackend(server: server)
        folder = try TemporaryFolder()
        session = try DeviceSession(file: folder.file("depot.sqlite"), network: network, policy: policy)
        model = DeviceModel(server: ServerModel([.posts: posts, .comments: comments]), policy: policy)
    }

    func run() async {
        for index in 0..<operations where failures.isEmpty {
            await step(index)
        }
        if failures.isEmpty { await finish() }
        if !(await session.close()) { fail("the watches did not end") }
    }

    // MARK: Choosing

    private func below(_ count: Int) -> Int {
        Int(random.next() % UInt64(max(1, count)))
    }

    private func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }

    private func pick<T>(_ elements: [T]) -> T? {
        elements.isEmpty ? nil : elements[below(elements.count)]
    }

    /// One of `choices` by weight.
    private func weighted<T>(_ choices: [(Int, T)]) -> T? {
        var roll = below(choices.reduce(0) { $0 + $1.0 })
        for (weight, choice) in choices {
            if roll < weight { return choice }
            roll -= weight
        }
        return nil
    }

    private enum Kind {
        case readAll, readOne, create, update, patch, delete, other, down, up, reopen, watch, settle
    }

    private func step(_ index: Int) async {
        let kept = model.queue.contains { !$0.isQueued }
        let choices: [(Int, Kind)] =
            online
            ? [
                (16, .readAll), (12, .readOne), (5, .create), (5, .update), (5, .patch), (2, .delete),
                (12, .other), (22, .down), (watches.count < 4 ? 5 : 0, .watch), (4, .reopen),
                (kept ? 8 : 0, .settle),
            ]
            : [
                (3, .readAll), (4, .readOne), (10, .create), (12, .update), (16, .patch), (5, .delete),
                (22, .other), (12, .up), (watches.count < 4 ? 3 : 0, .watch), (5, .reopen),
                (kept ? 4 : 0, .settle),
            ]
        let prefix = "\(index) \(online ? "online" : "offline"):"
        switch weighted(choices) ?? .readAll {
        case .readAll: await readAll(prefix)
        case .readOne: await readOne(prefix)
        case .create: await create(prefix)
        case .update: await update(prefix)
        case .patch: await patch(prefix)
        case .delete: await delete(prefix)
        case .other: await otherDevice(prefix)
        case .down:
            network.isDown = true
            online = false
            for index in watches.indices { watches[index].dirty = true }
            note(prefix, "the network goes")
        case .up: await networkUp(prefix)
        case .reopen: await reopen(prefix)
        case .watch: startWatch(prefix)
        case .settle: await settle(prefix)
        }
    }

    private func note(_ prefix: String, _ text: String) {
        log.append("\(prefix) \(text)")
    }

    private func fail(_ text: String) {
        failures.append(text)
    }

    /// An id of `collection` for the app to use: one it holds, mostly, else any.
    private func target(_ collection: ModelCollection) -> Int {
        if chance(80), let id = pick(known[collection] ?? []) { return id }
        return 1 + below(model.server.nextID(in: collection) + 1)
    }

    private func learn(_ collection: ModelCollection, _ id: Int) {
        if !(known[collection] ?? []).contains(id) { known[collection, default: []].append(id) }
    }

    /// A post id for a comment: a post created offline when there is one, mostly.
    private func postID() -> Int {
        let local = (known[.posts] ?? []).filter { $0 < 0 }
        if chance(60), let id = pick(local) { return id }
        return target(.posts)
    }

    /// One or two members of `collection` set to values from small sets (so that both sides
    /// sometimes pick the same).
    private func changes(_ collection: ModelCollection) -> ModelFields {
        var changes: ModelFields = [:]
        for _ in 0..<(chance(30) ? 2 : 1) {
            switch collection {
            case .posts:
                switch below(3) {
                case 0: changes["title"] = .string(pick(Self.titles) ?? "A")
                case 1: changes["body"] = .string(pick(Self.bodies) ?? "x")
                default: changes["views"] = .int(below(4))
                }
            case .comments:
                if chance(25) {
                    changes["postId"] = .int(postID())
                } else {
                    changes["body"] = .string(pick(Self.bodies) ?? "x")
                }
            }
        }
        return changes
    }

    private func newRecord(_ collection: ModelCollection) -> ModelFields {
        switch collection {
        case .posts:
            [
                "title": .string(pick(Self.titles) ?? "A"), "body": .string(pick(Self.bodies) ?? "x"),
                "views": .int(below(4)),
            ]
        case .comments:
            ["postId": .int(postID()), "body": .string(pick(Self.bodies) ?? "x")]
        }
    }

    // MARK: Reads

    private func readAll(_ prefix: String) async {
        let collection: ModelCollection = chance(65) ? .posts : .comments
        let result = await session.repository(collection).findAll().result
        let read: DeviceModel.Read =
            result.map { .records($0.map(\.fields)) }.value ?? .failure(result.failure?.statusCode)
        note(prefix, "findAll \(collection.rawValue) → \(Self.text(read))")
        for id in result.value?.map(\.id) ?? [] { learn(collection, id) }
        let expected = model.expectedListing(collection, online: online)
        if read != expected {
            fail("\(prefix) findAll \(collection.rawValue): the model expects \(Self.text(expected))")
        }
        if online { model.readListing(collection) }
    }

    private func readOne(_ prefix: String) async {
        let collection: ModelCollection = chance(65) ? .posts : .comments
        let id = target(collection)
        let result = await session.repository(collection).findByID(id).result
        let read: DeviceModel.Read =
            result.map { .record($0.fields) }.value ?? .failure(result.failure?.statusCode)
        note(prefix, "findByID \(collection.rawValue)/\(id) → \(Self.text(read))")
        let expected = model.expectedRead(collection, id: id, online: online)
        if read != expected {
            fail("\(prefix) findByID \(collection.rawValue)/\(id): the model expects \(Self.text(expected))")
        }
        if online { model.readRecord(collection, id) }
    }

    private static func text(_ read: DeviceModel.Read) -> String {
        switch read {
        case .records(let records): "[" + records.map { ModelText.fields($0) }.joined(separator: ", ") + "]"
        case .record(let record): ModelText.fields(record)
        case .failure(let status): "failure \(status.map(String.init) ?? "(no connection)")"
        }
    }

    // MARK: The app's writes

    private func create(_ prefix: String) async {
        let collection: ModelCollection = chance(55) ? .posts : .comments
        let fields = newRecord(collection)
        let result = await session.repository(collection).create(fields).result
        await write(prefix, .post, collection, target: nil, body: fields, result: result.map { $0.fields })
    }

    private func update(_ prefix: String) async {
        let collection: ModelCollection = chance(60) ? .posts : .comments
        let id = target(collection)
        // The record as the app shows it, with one or two members changed.
        var fields = model.shown(collection, id) ?? newRecord(collection)
        fields.merge(changes(collection)) { _, new in new }
        let record = ModelRecord(id: id, fields: fields)
        let result = await session.repository(collection).update(record).result
        await write(
            prefix, .put, collection, target: id, body: record.fields, result: result.map { $0.fields })
    }

    private func patch(_ prefix: String) async {
        let collection: ModelCollection = chance(60) ? .posts : .comments
        let id = target(collection)
        let fields = changes(collection)
        let result = await session.repository(collection).patch(id, with: fields.mapValues { Optional($0) })
            .result
        await write(prefix, .patch, collection, target: id, body: fields, result: result.map { $0.fields })
    }

    private func delete(_ prefix: String) async {
        let collection: ModelCollection = chance(50) ? .posts : .comments
        let id = target(collection)
        let result = await session.repository(collection).delete(id: id).result
        await write(prefix, .delete, collection, target: id, body: nil, result: result.map { [:] })
    }

    /// Checks what the library did with a write of the app against the model, and applies it
    /// to the model: queued (offline, or behind entries) with its base, or sent.
    private func write(
        _ prefix: String, _ method: HTTPMethod, _ collection: ModelCollection, target: Int?,
        body: ModelFields?,
        result: Result<ModelFields, ServiceError>
    ) async {
        let made = target.map { "\(collection.rawValue)/\($0)" } ?? collection.rawValue
        let sentPath = target.map { "\(collection.rawValue)/\(model.rewritten($0))" } ?? collection.rawValue
        let what = "\(method.rawValue) \(made) \(ModelText.fields(body))"
        var changed: [ModelKey] = []
        if !online || model.waitsBehindEntries(sentPath) {
            let localID = model.nextLocalID
            let entry = model.enqueue(method, collection, target: target, body: body)
            note(prefix, "\(what) → queued, base \(ModelText.fields(entry.base))")
            expectedEvents.append(DeviceModel.line("queued", entry))
            guard case .failure(.queued(let write)) = result else {
                return fail("\(prefix) \(what): expected it queued, got \(result)")
            }
            if method == .post {
                guard write.localID == .int(localID) else {
                    return fail(
                        "\(prefix) \(what): local id \(String(describing: write.localID)), expected \(localID)"
                    )
                }
                learn(collection, localID)
            }
            let stored = (try? session.store.outbox.entries())?.last
            if stored?.base != entry.base.map(JSONValue.object) {
                return fail(
                    "\(prefix) \(what): queued with base \(ModelText.json(stored?.base)), the model's is \(ModelText.fields(entry.base))"
                )
            }
            changed = [ModelKey(collection: collection, id: target.map(model.rewritten) ?? localID)]
        } else {
            let (status, record, swept) = model.sendOnline(method, collection, target: target, body: body)
            note(prefix, "\(what) → \(status) \(ModelText.fields(record))")
            switch result {
            case .success(let answered) where status < 300:
                if method != .delete, answered != record {
                    return fail(
                        "\(prefix) \(what) answered \(ModelText.fields(answered)), the model's \(ModelText.fields(record))"
                    )
                }
            case .failure(let error) where error.statusCode == status: break
            default: return fail("\(prefix) \(what): got \(result), the model says \(status)")
            }
            if method == .post, let id = record?["id"]?.intValue { learn(collection, id) }
            changed = [
                ModelKey(
                    collection: collection, id: target.map(model.rewritten) ?? record?["id"]?.intValue ?? 0)
            ]
            changed += swept.map { ModelKey(collection: .comments, id: $0) }
            // `.live()` reports a write that succeeded (or was queued), not one refused.
            if status >= 300 { return published([], changed: changed) }
        }
        published([(method, made)], changed: changed)
    }

    // MARK: Another device

    private func otherDevice(_ prefix: String) async {
        let collection: ModelCollection = chance(60) ? .posts : .comments
        let ids = model.server.ids(in: collection)
        var request: BackendRequest
        var expected: Int
        var changed: [ModelKey] = []
        switch (weighted([(45, 0), (20, 1), (12, 2), (23, 3)]) ?? 0, pick(ids)) {
        case (0, let id?):
            let fields = otherChanges(collection)
            request = Self.request(.patch, "\(collection.rawValue)/\(id)", fields)
            expected =
                model.server.patch(ModelKey(collection: collection, id: id), with: fields) == nil ? 404 : 200
            changed = [ModelKey(collection: collection, id: id)]
        case (1, let id?):
            let key = ModelKey(collection: collection, id: id)
            var fields = model.server.record(key) ?? [:]
            fields.merge(otherChanges(collection)) { _, new in new }
            request = Self.request(.put, "\(collection.rawValue)/\(id)", fields)
            expected = model.server.replace(key, with: fields) == nil ? 404 : 200
            changed = [key]
        case (2, let id?):
            request = Self.request(.delete, "\(collection.rawValue)/\(id)", nil)
            let (found, swept) = model.server.delete(ModelKey(collection: collection, id: id))
            expected = found ? 200 : 404
            changed =
                [ModelKey(collection: collection, id: id)]
                + swept.map { ModelKey(collection: .comments, id: $0) }
        default:
            var fields = newRecord(collection)
            if case .int(let post)? = fields["postId"] {
                fields["postId"] = .int(pick(model.server.ids(in: .posts)) ?? model.rewritten(post))
            }
            request = Self.request(.post, collection.rawValue, fields)
            let record = model.server.create(in: collection, fields)
            expected = 201
            changed = [ModelKey(collection: collection, id: record["id"]?.intValue ?? 0)]
        }
        let result = await server.send(request).result
        note(
            prefix,
            "the other device: \(request.method.rawValue) \(request.path) \(request.body.map { String(decoding: $0, as: UTF8.self) } ?? "") → \(expected)"
        )
        let status = result.value?.status ?? result.failure?.statusCode
        if status != expected {
            fail("\(prefix) the other device's write got \(String(describing: status)), expected \(expected)")
        }
        // Nothing the device's watches hear of.
        published([], changed: changed)
    }

    /// ``changes(_:)`` as the other device makes them, more often to a post's views (so that
    /// both edits often stand side by side); a post it names is one the server has.
    private func otherChanges(_ collection: ModelCollection) -> ModelFields {
        if collection == .posts && chance(40) { return ["views": .int(below(4))] }
        var fields = changes(collection)
        if fields["postId"] != nil { fields["postId"] = .int(pick(model.server.ids(in: .posts)) ?? 1) }
        return fields
    }

    private static func request(_ method: HTTPMethod, _ path: String, _ fields: ModelFields?)
        -> BackendRequest
    {
        var request = BackendRequest(method: method, path: path)
        if let fields {
            request.body = try? JSONEncoder().encode(fields)
            request.headers["Content-Type"] = "application/json"
        }
        return request
    }

    // MARK: Network, replays, restarts

    private func networkUp(_ prefix: String) async {
        network.isDown = false
        online = true
        for index in watches.indices { watches[index].dirty = true }
        note(prefix, "the network is back")
        await drain(prefix)
    }

    /// Replays until the replay ends with nothing it can send (joining one started in the
    /// background), replays the model's queue, and compares the server and the outbox.
    private func drain(_ prefix: String) async {
        var finished = false
        let outbox = session.store.outbox
        for _ in 0..<6 where !finished {
            finished = await awaitWithin(hangBound) { await outbox.replay() }?.ending == .finished
        }
        guard finished else { return fail("\(prefix) the replay did not finish") }
        let (events, steps) = model.replay()
        expectedEvents += events
        if !events.isEmpty { note(prefix, "replayed: \(events.joined(separator: "; "))") }
        for step in steps { published(step.paths, changed: step.changed) }
        compareServer(prefix)
        compareOutbox(prefix)
        // An app that hears of a conflict often settles it at once.
        let conflicted = model.queue.contains { if case .conflicted = $0.state { true } else { false } }
        if failures.isEmpty, conflicted, chance(50) { await settle(prefix) }
    }

    private func reopen(_ prefix: String) async {
        session.store.flush()
        // A replay started in the background (offline, it stops at once) is over before the
        // store is let go.
        _ = await session.store.outbox.replay()
        await compareEvents(prefix)
        guard await session.close() else { return fail("\(prefix) the watches did not end") }
        do {
            session = try DeviceSession(file: folder.file("depot.sqlite"), network: network, policy: policy)
        } catch {
            return fail("\(prefix) the store did not open again: \(error)")
        }
        expectedEvents = []
        for index in watches.indices {
            watches[index].latest = session.watch(watches[index].collection, id: watches[index].id)
            watches[index].dirty = !online
        }
        note(prefix, "the store is opened again (new chain; the watches start again)")
    }

    private func startWatch(_ prefix: String) {
        let collection: ModelCollection = chance(70) ? .posts : .comments
        let id: Int? = chance(50) ? nil : target(collection)
        let watch = ModelWatch(
            collection: collection, id: id, dirty: !online, latest: session.watch(collection, id: id))
        watches.append(watch)
        note(prefix, "watch \(watch.name)")
    }

    /// The app settles a kept entry: discards it, or retries it; online, the replay that
    /// follows is waited for.
    private func settle(_ prefix: String) async {
        let kept = model.queue.indices.filter { !model.queue[$0].isQueued }
        let conflicted = kept.filter { if case .conflicted = model.queue[$0].state { true } else { false } }
        guard let index = (chance(70) ? pick(conflicted) : nil) ?? pick(kept),
            let stored = try? session.store.outbox.entries(), stored.count == model.queue.count
        else {
            return fail(
                "\(prefix) the outbox holds \(String(describing: try? session.store.outbox.entries().count)) entries, the model \(model.queue.count)"
            )
        }
        let entry = model.queue[index]
        let path = (entry.method, entry.path)
        if case .conflicted(let kind, let fields, let theirs) = entry.state, let base = entry.base,
            chance(60),
            case .object(let record)? = ModelPolicy.merged(
                OutboxConflict(
                    kind: kind, fields: fields, base: .object(model.rewritten(base)),
                    mine: model.mine(entry, on: base).map(JSONValue.object),
                    theirs: theirs.map(JSONValue.object)))
        {
            // The app settles it with the record its merge makes.
            _ = try? session.store.outbox.resolve(stored[index].id, with: .object(record))
            model.resolve(at: index, with: record)
            expectedEvents.append(DeviceModel.line("queued", model.queue[index]))
            note(
                prefix,
                "the app resolves \(entry.method.rawValue) \(entry.path) with \(ModelText.fields(record))")
        } else if chance(50) {
            _ = try? session.store.outbox.discard(stored[index].id)
            _ = model.discard(at: index)
            expectedEvents.append(DeviceModel.line("discarded", entry))
            note(prefix, "the app discards \(entry.method.rawValue) \(entry.path)")
        } else {
            _ = try? session.store.outbox.retry(stored[index].id)
            model.retry(at: index)
            expectedEvents.append(DeviceModel.line("queued", model.queue[index]))
            note(
                prefix,
                "the app retries \(entry.method.rawValue) \(entry.path), base \(ModelText.fields(model.queue[index].base))"
            )
        }
        published(
            [path] + rewrittenPath(entry),
            changed: [ModelKey(collection: entry.collection, id: entry.target.map(model.rewritten) ?? 0)])
        if online { await drain(prefix) }
    }

    private func rewrittenPath(_ entry: ModelEntry) -> [(HTTPMethod, String)] {
        guard let target = entry.target, model.rewritten(target) != target else { return [] }
        return [(entry.method, "\(entry.collection.rawValue)/\(model.rewritten(target))")]
    }

    /// The end: the network back, every replay done; then the server, the outbox, the events
    /// and the watches.
    private func finish() async {
        let prefix = "end:"
        if online {
            await drain(prefix)
        } else {
            await networkUp(prefix)
        }
        guard failures.isEmpty else { return }
        await compareEvents(prefix)
        for watch in watches where !watch.dirty {
            let fresh = await read(watch)
            checkedWatches += 1
            guard await watch.latest.wait(within: hangBound, until: { $0 == fresh }) else {
                return fail(
                    "\(prefix) the watch \(watch.name) shows \(watch.latest.current.map { "\($0)" } ?? "nothing"), a read now \(fresh)"
                )
            }
        }
        note(prefix, "\(watches.count(where: { !$0.dirty })) of \(watches.count) watches compared")
    }

    /// What a read through the chain answers now, for a watch's read.
    private func read(_ watch: ModelWatch) async -> Observation {
        let receipt = AnswerReceipt()
        let repository = session.repository(watch.collection)
        if let id = watch.id {
            let result: Result<ModelRecord, any Error>
            do {
                result = .success(try await receipt.collect { try await repository.findByID(id).value })
            } catch {
                result = .failure(error)
            }
            return Observation(result, pending: receipt.pendingWrites)
        }
        let result: Result<[ModelRecord], any Error>
        do {
            result = .success(try await receipt.collect { try await repository.findAll().value })
        } catch {
            result = .failure(error)
        }
        return Observation(result, pending: receipt.pendingWrites)
    }

    // MARK: Watches

    /// Marks the watches: one a change it hears of touched (while online) reads the server
    /// again after it, so the model can tell what it shows; one whose records `changed` without
    /// such a change cannot.
    private func published(_ paths: [(HTTPMethod, String)], changed: [ModelKey]) {
        for index in watches.indices {
            let watch = watches[index]
            let touched = paths.contains { method, path in
                ChangeFeed.Change(method, RequestResource(path: path)).touches(watch.resource)
            }
            if touched && online {
                watches[index].dirty = false
                continue
            }
            let resolved = watch.id.flatMap(model.resolved)
            let affected = changed.contains { key in
                key.collection == watch.collection
                    && (watch.id == nil || resolved == nil || resolved == key.id)
            }
            if affected || touched { watches[index].dirty = true }
        }
    }

    // MARK: Comparing

    private func compareServer(_ prefix: String) {
        for collection in ModelCollection.allCases {
            let held = server.records(in: collection.rawValue)
            let expected = model.server.records(in: collection).map(JSONValue.object)
            if held != expected {
                fail(
                    "\(prefix) the server's \(collection.rawValue): \(held.map { ModelText.json($0) })\n  the model's: \(expected.map { ModelText.json($0) })"
                )
            }
        }
    }

    private func compareOutbox(_ prefix: String) {
        guard let entries = try? session.store.outbox.entries() else {
            return fail("\(prefix) entries() failed")
        }
        let held = entries.map { entry -> String in
            var text = "\(entry.method.rawValue) \(entry.path)"
            switch entry.state {
            case .queued: text += " queued"
            case .kept(let refusal):
                if let conflict = refusal.conflict {
                    text += " conflict \(conflict.kind.rawValue) \(conflict.fields)"
                } else {
                    text += " kept \(refusal.status.map(String.init) ?? "-")"
                }
            }
            return text + " base \(ModelText.json(entry.base))"
        }
        let expected = model.queue.map { entry -> String in
            var text = "\(entry.method.rawValue) \(entry.path)"
            switch entry.state {
            case .queued: text += " queued"
            case .conflicted(let kind, let fields, _): text += " conflict \(kind.rawValue) \(fields)"
            case .refused(let status): text += " kept \(status)"
            }
            return text + " base \(ModelText.fields(entry.base))"
        }
        if held != expected {
            fail(
                "\(prefix) the outbox holds:\n  \(held.joined(separator: "\n  "))\n  the model:\n  \(expected.joined(separator: "\n  "))"
            )
        }
    }

    private func compareEvents(_ prefix: String) async {
        let count = expectedEvents.count
        _ = await session.events.wait(within: hangBound) { $0.count >= count }
        let events = session.events.current
        conflictEvents += events.count { $0.hasPrefix("conflict") }
        if events != expectedEvents {
            fail(
                "\(prefix) the outbox's events:\n  \(events.joined(separator: "\n  "))\n  the model's:\n  \(expectedEvents.joined(separator: "\n  "))"
            )
        }
    }

    /// An outbox event as a line: what, the entry's method and path, and the status or the
    /// conflict.
    static func line(_ event: OutboxEvent) -> String {
        let entry = event.entry
        let what = "\(entry.method.rawValue) \(entry.path)"
        switch event {
        case .queued: return "queued \(what)"
        case .sent(_, let response): return "sent \(what) \(response.status)"
        case .kept(_, let error): return "kept \(what) \(error.statusCode.map(String.init) ?? "-")"
        case .discarded: return "discarded \(what)"
        case .created(_, let local, let server):
            return
                "created \(entry.path) \(local.intValue.map(String.init) ?? "\(local)")>\(server.intValue.map(String.init) ?? "\(server)")"
        case .conflict(_, let conflict):
            return "conflict \(what) \(conflict.kind.rawValue) \(conflict.fields)"
        }
    }
}
