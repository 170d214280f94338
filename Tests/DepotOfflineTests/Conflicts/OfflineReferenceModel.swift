import Depot
import Foundation

@testable import DepotOffline

// The reference model of OfflineModelTests: json-server's state and the device's store, written
// from the rules of the article Working Offline ("Your own writes show at once", "Reconciling",
// "Another device wrote meanwhile") and json-server's, without the library's code: plain
// dictionaries, a queue, and the table of what a replay does.

/// A record's members as the model holds them.
typealias ModelFields = [String: JSONValue]

/// The collections of the model test: posts, and comments that name their post in `postId`.
enum ModelCollection: String, CaseIterable, Sendable, Hashable {
    case posts
    case comments
}

/// One record on the server: its collection and its id there.
struct ModelKey: Hashable, Sendable {
    var collection: ModelCollection
    var id: Int
}

/// The conflict policies the model test runs (``OfflinePolicy/onConflict``), with the app's
/// `.merge` function as the model applies it too.
enum ModelPolicy: String, CaseIterable, Sendable {
    case serverWins
    case clientWins
    case merge
    case keepForApp

    /// The library's policy.
    var conflictPolicy: ConflictPolicy {
        switch self {
        case .serverWins: .serverWins
        case .clientWins: .clientWins
        case .merge: .merge(Self.merged)
        case .keepForApp: .keepForApp
        }
    }

    /// The app's merge (deterministic): nothing when the server no longer has the record; their
    /// record back when the user deletes one they changed; else theirs with the user's changed
    /// fields on top, and a field both changed combined (texts joined, the larger number).
    static func merged(_ conflict: OutboxConflict) -> JSONValue? {
        guard case .object(var record)? = conflict.theirs else { return nil }
        guard case .object(let mine)? = conflict.mine, case .object(let base)? = conflict.base else {
            return .object(record)
        }
        for (key, value) in mine where key != "id" && base[key] != value {
            if conflict.fields.contains(key), let theirs = record[key] {
                record[key] = combined(value, theirs)
            } else {
                record[key] = value
            }
        }
        return .object(record)
    }

    private static func combined(_ mine: JSONValue, _ theirs: JSONValue) -> JSONValue {
        switch (mine, theirs) {
        case (.string(let mine), .string(let theirs)): .string(mine + "+" + theirs)
        case (.int(let mine), .int(let theirs)): .int(max(mine, theirs))
        default: mine
        }
    }
}

/// json-server 0.17 as far as the model test uses it: records in insertion order, the next id
/// one past the largest, a `PUT` that keeps the record's place and id, a shallow `PATCH`, and a
/// `DELETE` (found or not) that then removes every comment whose `postId` names no post.
struct ServerModel: Equatable {
    private(set) var collections: [ModelCollection: [ModelFields]]

    init(_ collections: [ModelCollection: [ModelFields]]) {
        self.collections = collections
    }

    func records(in collection: ModelCollection) -> [ModelFields] {
        collections[collection] ?? []
    }

    func record(_ key: ModelKey) -> ModelFields? {
        records(in: key.collection).first { $0["id"] == .int(key.id) }
    }

    func ids(in collection: ModelCollection) -> [Int] {
        records(in: collection).compactMap { $0["id"]?.intValue }
    }

    /// The id the next create in `collection` gets.
    func nextID(in collection: ModelCollection) -> Int {
        (ids(in: collection).max() ?? 0) + 1
    }

    /// Creates a record (its `id`, if any, replaced by the next one); returns it.
    mutating func create(in collection: ModelCollection, _ fields: ModelFields) -> ModelFields {
        var record = fields
        record["id"] = .int(nextID(in: collection))
        collections[collection, default: []].append(record)
        return record
    }

    /// Replaces the record (keeping its id and place); `nil`: 404.
    mutating func replace(_ key: ModelKey, with fields: ModelFields) -> ModelFields? {
        guard let index = index(of: key) else { return nil }
        var record = fields
        record["id"] = .int(key.id)
        collections[key.collection]?[index] = record
        return record
    }

    /// Merges `changes` into the record (never its id); `nil`: 404.
    mutating func patch(_ key: ModelKey, with changes: ModelFields) -> ModelFields? {
        guard let index = index(of: key), var record = collections[key.collection]?[index] else { return nil }
        for (name, value) in changes where name != "id" { record[name] = value }
        collections[key.collection]?[index] = record
        return record
    }

    /// Deletes the record, then the comments of posts that are gone; whether the record was
    /// there (else 404), and the ids of the comments swept.
    mutating func delete(_ key: ModelKey) -> (found: Bool, swept: [Int]) {
        let index = index(of: key)
        if let index { collections[key.collection]?.remove(at: index) }
        let posts = Set(ids(in: .posts))
        let orphans = records(in: .comments).filter { comment in
            guard case .int(let post)? = comment["postId"] else { return false }
            return !posts.contains(post)
        }
        let swept = orphans.compactMap { $0["id"]?.intValue }
        collections[.comments]?.removeAll { orphan in orphans.contains(orphan) }
        return (index != nil, swept)
    }

    private func index(of key: ModelKey) -> Int? {
        records(in: key.collection).firstIndex { $0["id"] == .int(key.id) }
    }
}

/// A queued write as the model keeps it: what the store's outbox holds.
struct ModelEntry: Equatable {
    /// Where the entry stands.
    enum State: Equatable {
        case queued
        /// Kept after the server refused it (its status).
        case refused(Int)
        /// Kept with a conflict, for the app (``ConflictPolicy/keepForApp``), and the server's
        /// record as the replay read it (`nil`: gone).
        case conflicted(OutboxConflict.Kind, [String], theirs: ModelFields?)
    }

    var method: HTTPMethod
    var collection: ModelCollection
    /// The id in the stored path (a local id until the create it names reached the server
    /// before the write was made); `nil` for a create.
    var target: Int?
    /// The body as stored (foreign keys that were local ids stay so until the replay).
    var body: ModelFields?
    /// The record the write was made on, per the article; `nil`: sent as made.
    var base: ModelFields?
    /// A create's local id.
    var localID: Int?
    var state: State = .queued

    /// The stored path: `posts/3`, `posts/-1`, or `posts` for a create.
    var path: String {
        target.map { "\(collection.rawValue)/\($0)" } ?? collection.rawValue
    }

    /// Whether reads show it: queued, or kept with a conflict (a refusal is rolled back).
    var showsInReads: Bool {
        switch state {
        case .queued, .conflicted: true
        case .refused: false
        }
    }

    var isQueued: Bool { state == .queued }
}

/// What the device has seen of one record, and when (the model's clock).
struct ModelSeen: Equatable {
    var record: ModelFields
    var time: Int
}

/// A write a replay sent, as the store lays it over answers stored before it.
struct ModelSentWrite: Equatable {
    enum Effect: Equatable {
        /// The record as the server answered the write.
        case record(ModelFields)
        /// Created: the record as the server answered.
        case created(ModelFields)
        /// Deleted (or found deleted).
        case gone
    }

    var key: ModelKey
    var effect: Effect
    var time: Int
}

/// What one replayed entry did, for the watches: the paths its events named and the records
/// it changed on the server (with the comments a delete swept).
struct ModelReplayStep {
    var paths: [(HTTPMethod, String)]
    var changed: [ModelKey]
}

/// The device's store and the server, as the article describes them: the answers the device
/// read (per record and per listing), the writes its replays sent, the queue with each write's
/// base, local ids and the ids the server gave them.
struct DeviceModel {
    var server: ServerModel
    let policy: ModelPolicy
    /// A logical clock: reads, sends and drops are ordered by it.
    private(set) var clock = 0
    /// The last online `findByID` of each record that found it.
    private(set) var recordReads: [ModelKey: ModelSeen] = [:]
    /// The last online `findAll` of each collection.
    private(set) var listings: [ModelCollection: (records: [ModelFields], time: Int)] = [:]
    /// The writes replays sent, oldest first.
    private(set) var sent: [ModelSentWrite] = []
    /// The next local id (`-1`, `-2`, … once per store file).
    private(set) var nextLocalID = -1
    /// The server's id of each local id whose create reached it.
    private(set) var serverIDs: [Int: Int] = [:]
    /// The outbox, in replay order.
    private(set) var queue: [ModelEntry] = []

    /// Counted over the run: merges of other fields, conflicts (by the model's table).
    private(set) var merges = 0
    private(set) var conflicts = 0

    init(server: ServerModel, policy: ModelPolicy) {
        self.server = server
        self.policy = policy
    }

    private mutating func tick() -> Int {
        clock += 1
        return clock
    }

    // MARK: - Ids

    /// The server's id for `id`: itself, or for a local id the id its create got (`nil` until then).
    func resolved(_ id: Int) -> Int? {
        id < 0 ? serverIDs[id] : id
    }

    /// `id` as a request made now carries it: mapped when the server named it.
    func rewritten(_ id: Int) -> Int {
        resolved(id) ?? id
    }

    /// `fields` with `id` and `postId` rewritten (the middleware's rule for `…Id` members).
    func rewritten(_ fields: ModelFields) -> ModelFields {
        var fields = fields
        for name in ["id", "postId"] {
            if case .int(let id)? = fields[name] { fields[name] = .int(rewritten(id)) }
        }
        return fields
    }

    // MARK: - Reads

    /// An online `findAll` of `collection` was answered.
    mutating func readListing(_ collection: ModelCollection) {
        listings[collection] = (server.records(in: collection), tick())
    }

    /// An online `findByID` of the record `id` (an alias) was answered (stored when found).
    mutating func readRecord(_ collection: ModelCollection, _ id: Int) {
        guard let server = resolved(id) else { return }
        let key = ModelKey(collection: collection, id: server)
        if let record = self.server.record(key) { recordReads[key] = ModelSeen(record: record, time: tick()) }
    }

    /// What a read answers, per "Your own writes show at once": the records, the record, or a
    /// failure's status (`nil`: the network's failure).
    enum Read: Equatable {
        case records([ModelFields])
        case record(ModelFields)
        case failure(Int?)
    }

    /// What a write waiting (or sent since the answer) does to a record, for the reads.
    private enum Change {
        case create(id: Int, record: ModelFields)
        case write(id: Int, entry: ModelEntry?, effect: ModelSentWrite.Effect?)
    }

    /// The writes reads show for `collection`: those sent after `time` (`nil`: none), then
    /// those waiting, in order; `id` limits them to one record's.
    private func changes(_ collection: ModelCollection, sentAfter time: Int?, id: Int? = nil) -> [Change] {
        var changes: [Change] = []
        if let time {
            for write in sent where write.key.collection == collection && write.time > time {
                guard id == nil || write.key.id == id else { continue }
                if case .created(let record) = write.effect {
                    changes.append(.create(id: write.key.id, record: record))
                } else {
                    changes.append(.write(id: write.key.id, entry: nil, effect: write.effect))
                }
            }
        }
        for entry in queue where entry.showsInReads && entry.collection == collection {
            if entry.method == .post, let local = entry.localID {
                guard id == nil || id == local else { continue }
                var record = rewritten(entry.body ?? [:])
                record["id"] = .int(local)
                changes.append(.create(id: local, record: record))
            } else if let target = entry.target {
                guard id == nil || id == rewritten(target) else { continue }
                changes.append(.write(id: rewritten(target), entry: entry, effect: nil))
            }
        }
        return changes
    }

    /// `record` as one change leaves it.
    private func applying(_ change: Change, to record: ModelFields?) -> ModelFields? {
        switch change {
        case .create(_, let created): return created
        case .write(let id, let entry?, _):
            return Self.applied(entry, to: record, id: id, rewriting: rewritten)
        case .write(_, nil, .record(let answered)?), .write(_, nil, .created(let answered)?): return answered
        case .write(_, nil, _): return nil
        }
    }

    /// What `findByID(id)` answers now (online: the server's record; offline: the stored
    /// answer, or none) with the writes the store lays over it.
    func expectedRead(_ collection: ModelCollection, id: Int, online: Bool) -> Read {
        guard let server = resolved(id) else {
            // Created offline: answered from its create, without asking the server.
            return shown(collection, id).map { .record($0) } ?? .failure(404)
        }
        let key = ModelKey(collection: collection, id: server)
        var record: ModelFields?
        var sentAfter: Int?
        if online {
            record = self.server.record(key)
        } else if let stored = recordReads[key] {
            record = stored.record
            sentAfter = stored.time
        } else {
            sentAfter = Int.min
        }
        let known = record != nil
        let changes = changes(collection, sentAfter: sentAfter, id: server)
        for change in changes { record = applying(change, to: record) }
        if let record { return .record(record) }
        let removes = changes.contains { change in
            switch change {
            case .create, .write(_, _, .gone?): true
            case .write(_, let entry?, _): entry.method == .delete
            default: false
            }
        }
        return known || removes || online ? .failure(404) : .failure(nil)
    }

    /// What `findAll()` answers now (online: the server's records; offline: the stored
    /// listing, or none) with the writes the store lays over it: records changed in place or
    /// removed, records created last.
    func expectedListing(_ collection: ModelCollection, online: Bool) -> Read {
        var records: [ModelFields]
        var sentAfter: Int?
        if online {
            records = server.records(in: collection)
        } else if let listing = listings[collection] {
            records = listing.records
            sentAfter = listing.time
        } else {
            return .failure(nil)
        }
        var created: [(id: Int, record: ModelFields)] = []
        for change in changes(collection, sentAfter: sentAfter) {
            switch change {
            case .create(let id, let record):
                if let index = records.firstIndex(where: { $0["id"] == .int(id) }) {
                    records[index] = record
                } else {
                    created.append((id, record))
                }
            case .write(let id, _, _):
                if let index = created.firstIndex(where: { $0.id == id }) {
                    if let record = applying(change, to: created[index].record) {
                        created[index].record = record
                    } else {
                        created.remove(at: index)
                    }
                } else if let index = records.firstIndex(where: { $0["id"] == .int(id) }) {
                    if let record = applying(change, to: records[index]) {
                        records[index] = record
                    } else {
                        records.remove(at: index)
                    }
                }
            }
        }
        return .records(records + created.map(\.record))
    }

    // MARK: - Writes

    /// The record as the device shows it now, for the record `id` (an alias): the newest answer
    /// it read that holds it (its own or a listing's), with the writes its replays sent since
    /// and the writes still waiting laid over; for a record created offline, from its create.
    /// `nil` when nothing was read of it (or the writes remove it).
    func shown(_ collection: ModelCollection, _ id: Int) -> ModelFields? {
        guard let server = resolved(id) else {
            // Created offline and not sent yet: its create, and the writes after it.
            var record: ModelFields?
            for entry in queue where entry.showsInReads && entry.collection == collection {
                if entry.method == .post, entry.localID == id, var created = entry.body {
                    created["id"] = .int(id)
                    record = created
                } else if entry.target == id {
                    record = Self.applied(entry, to: record, id: id, rewriting: rewritten)
                }
            }
            return record
        }
        let key = ModelKey(collection: collection, id: server)
        var found = recordReads[key]
        if let listing = listings[collection], listing.time > (found?.time ?? Int.min),
            let record = listing.records.first(where: { $0["id"] == .int(server) })
        {
            found = ModelSeen(record: record, time: listing.time)
        }
        guard let found else { return nil }
        var record: ModelFields? = found.record
        for write in sent where write.key == key && write.time > found.time {
            switch write.effect {
            case .record(let answered), .created(let answered): record = answered
            case .gone: record = nil
            }
        }
        for entry in queue where entry.showsInReads && entry.method != .post && entry.collection == collection
        {
            guard let target = entry.target, resolved(target) == server else { continue }
            record = Self.applied(entry, to: record, id: server, rewriting: rewritten)
        }
        return record
    }

    /// `record` as a waiting write leaves it: replaced, merged into, or gone.
    private static func applied(
        _ entry: ModelEntry, to record: ModelFields?, id: Int, rewriting: (ModelFields) -> ModelFields
    ) -> ModelFields? {
        switch entry.method {
        case .put:
            guard var replaced = entry.body.map(rewriting) else { return record }
            replaced["id"] = record?["id"] ?? .int(id)
            return replaced
        case .patch:
            guard var merged = record, let changes = entry.body.map(rewriting) else { return record }
            for (name, value) in changes where name != "id" { merged[name] = value }
            return merged
        case .delete: return nil
        default: return record
        }
    }

    /// Whether a write to `path` made online waits behind entries: an entry of its path that
    /// is queued, or kept and not a create; or a queued entry a replay can send.
    func waitsBehindEntries(_ path: String) -> Bool {
        queue.indices.contains { index in
            let entry = queue[index]
            return (entry.path == path && (entry.isQueued || entry.method != .post))
                || (entry.isQueued && !isHeld(index))
        }
    }

    /// Queues a write the device made (offline, or behind entries): its base per the article,
    /// a create's local id. Returns the entry.
    mutating func enqueue(
        _ method: HTTPMethod, _ collection: ModelCollection, target: Int?, body: ModelFields?
    ) -> ModelEntry {
        let target = target.map(rewritten)
        var entry = ModelEntry(
            method: method, collection: collection, target: target, body: body.map(rewritten))
        if method == .post {
            entry.localID = nextLocalID
            nextLocalID -= 1
        } else if let target, resolved(target) != nil {
            entry.base = shown(collection, target)
        }
        queue.append(entry)
        return entry
    }

    /// Applies a write the device sent online (not queued); its answer's status. A `PUT` or
    /// `PATCH` the server applied is stored as the record's read, as a `findByID` would be.
    mutating func sendOnline(
        _ method: HTTPMethod, _ collection: ModelCollection, target: Int?, body: ModelFields?
    ) -> (status: Int, record: ModelFields?, swept: [Int]) {
        let body = body.map(rewritten)
        guard let target else {
            return (201, server.create(in: collection, body ?? [:]), [])
        }
        let key = ModelKey(collection: collection, id: rewritten(target))
        let answer = send(method, key, body: body)
        // A `PUT` or `PATCH` answered with the whole record is stored as its read.
        if method != .delete, let record = answer.record {
            recordReads[key] = ModelSeen(record: record, time: tick())
        }
        return answer
    }

    private mutating func send(_ method: HTTPMethod, _ key: ModelKey, body: ModelFields?) -> (
        status: Int, record: ModelFields?, swept: [Int]
    ) {
        switch method {
        case .put:
            let record = server.replace(key, with: body ?? [:])
            return (record == nil ? 404 : 200, record, [])
        case .patch:
            let record = server.patch(key, with: body ?? [:])
            return (record == nil ? 404 : 200, record, [])
        default:
            let (found, swept) = server.delete(key)
            return (found ? 200 : 404, nil, swept)
        }
    }

    // MARK: - The app settles kept entries

    /// Discards the entry at `index`.
    mutating func discard(at index: Int) -> ModelEntry {
        queue.remove(at: index)
    }

    /// Settles the entry kept with a conflict at `index` with `record`: a `PUT` of it, made on
    /// the record the conflict read.
    mutating func resolve(at index: Int, with record: ModelFields) {
        guard case .conflicted(_, _, let theirs) = queue[index].state else { return }
        queue[index].method = .put
        queue[index].body = record
        queue[index].base = theirs
        queue[index].state = .queued
    }

    /// Puts the kept entry at `index` back in the queue: after a conflict, made on the record
    /// the conflict read (none when it was gone: then sent as made).
    /// A `PUT` or `PATCH` is rebased: the fields the user changed (from its base to mine), alone
    /// for a `PATCH`, over their record for a `PUT`.
    mutating func retry(at index: Int) {
        if case .conflicted(_, _, let theirs) = queue[index].state {
            let entry = queue[index]
            if let theirs, let base = entry.base.map(rewritten), let mine = mine(entry, on: base) {
                let changed = Self.changes(from: base, to: mine)
                var body = entry.method == .put ? theirs : [:]
                for name in changed { body[name] = mine[name] }
                queue[index].body = body
            }
            queue[index].base = theirs
        }
        queue[index].state = .queued
    }

    // MARK: - Replay

    /// Whether the queued entry at `index` is held behind a kept write of its path.
    func isHeld(_ index: Int) -> Bool {
        let entry = queue[index]
        return queue[..<index].contains { !$0.isQueued && $0.method != .post && $0.path == entry.path }
    }

    /// Sends every queued entry that is not held, in order, by the article's table; returns the
    /// events the outbox reports and, per entry, what it touched.
    mutating func replay() -> (events: [String], steps: [ModelReplayStep]) {
        var events: [String] = []
        var steps: [ModelReplayStep] = []
        var index = 0
        while index < queue.count {
            guard queue[index].isQueued, !isHeld(index) else {
                index += 1
                continue
            }
            let entry = queue[index]
            var step = ModelReplayStep(paths: [(entry.method, entry.path)], changed: [])
            let outcome = deliver(entry, step: &step)
            events += outcome.events
            steps.append(step)
            switch outcome.state {
            case nil: queue.remove(at: index)
            case let state?:
                queue[index].state = state
                index += 1
            }
        }
        return (events, steps)
    }

    /// What became of one entry: its events, and its state when it stays (`nil`: it left).
    private struct Outcome {
        var events: [String]
        var state: ModelEntry.State?
    }

    /// Sends one entry (see ``replay()``), noting in `step` what it touched.
    private mutating func deliver(_ entry: ModelEntry, step: inout ModelReplayStep) -> Outcome {
        let collection = entry.collection
        let body = entry.body.map(rewritten)
        guard let target = entry.target else {
            let record = server.create(in: collection, body ?? [:])
            let id = record["id"]?.intValue ?? 0
            let key = ModelKey(collection: collection, id: id)
            step.changed.append(key)
            var events = [Self.line("sent", entry, 201)]
            if let local = entry.localID {
                serverIDs[local] = id
                events.append("created \(entry.path) \(local)>\(id)")
                step.paths += [
                    (.patch, "\(collection.rawValue)/\(local)"), (.patch, "\(collection.rawValue)/\(id)"),
                ]
            }
            sent.append(ModelSentWrite(key: key, effect: .created(record), time: tick()))
            return Outcome(events: events, state: nil)
        }
        let key = ModelKey(collection: collection, id: rewritten(target))
        if key.id != target { step.paths.append((entry.method, "\(collection.rawValue)/\(key.id)")) }
        step.changed.append(key)
        guard let base = entry.base.map(rewritten) else {
            return sendAsMade(entry, key, body: body, after: [], step: &step)
        }
        let theirs = server.record(key)
        let mine = self.mine(entry, on: base)
        guard let theirs else {
            if mine == nil {
                // Deleted on both sides: the delete is still sent (json-server sweeps the
                // comments of posts that are gone on any `DELETE`), and leaves as sent with its 404.
                let (_, _, swept) = send(.delete, key, body: nil)
                step.changed += swept.map { ModelKey(collection: .comments, id: $0) }
                sent.append(ModelSentWrite(key: key, effect: .gone, time: tick()))
                return Outcome(events: [Self.line("sent", entry, 404)], state: nil)
            }
            return decide(entry, key, .changedWhereDeleted, [], base, mine, nil, body: body, step: &step)
        }
        let theirChanges = Self.changes(from: base, to: theirs)
        if theirChanges.isEmpty {
            return sendAsMade(entry, key, body: body, after: [], step: &step)
        }
        guard let mine else {
            return decide(entry, key, .deletedWhereChanged, [], base, nil, theirs, body: body, step: &step)
        }
        let myChanges = Self.changes(from: base, to: mine)
        let colliding = myChanges.filter { theirChanges.contains($0) && mine[$0] != theirs[$0] }.sorted()
        if !colliding.isEmpty {
            return decide(entry, key, .sameFields, colliding, base, mine, theirs, body: body, step: &step)
        }
        // Other fields changed: the user's changed fields over theirs.
        merges += 1
        var merged = theirs
        var changes: ModelFields = [:]
        for name in myChanges {
            merged[name] = mine[name]
            changes[name] = mine[name]
        }
        let (_, record, _) =
            entry.method == .patch ? send(.patch, key, body: changes) : send(.put, key, body: merged)
        sent.append(ModelSentWrite(key: key, effect: record.map { .record($0) } ?? .gone, time: tick()))
        return Outcome(events: [Self.line("sent", entry, 200)], state: nil)
    }

    /// The record as `entry` leaves `base` (both with the ids the server named): a `PUT`'s
    /// record, `base` with a `PATCH` merged in; `nil` for a `DELETE`.
    func mine(_ entry: ModelEntry, on base: ModelFields) -> ModelFields? {
        let base = rewritten(base)
        let body = entry.body.map(rewritten) ?? [:]
        switch entry.method {
        case .patch:
            var merged = base
            for (name, value) in body where name != "id" { merged[name] = value }
            return merged
        case .put:
            var replaced = body
            replaced["id"] = base["id"]
            return replaced
        default: return nil
        }
    }

    /// A conflict, decided by the policy.
    private mutating func decide(
        _ entry: ModelEntry, _ key: ModelKey, _ kind: OutboxConflict.Kind, _ fields: [String],
        _ base: ModelFields, _ mine: ModelFields?, _ theirs: ModelFields?, body: ModelFields?,
        step: inout ModelReplayStep
    ) -> Outcome {
        conflicts += 1
        let conflict = "conflict \(entry.method.rawValue) \(entry.path) \(kind.rawValue) \(fields)"
        let drop = { (model: inout DeviceModel) -> Outcome in
            // Dropped; reads show the server's record, stored as the replay read it (its stored
            // answer removed when it is gone).
            model.recordReads[key] = theirs.map { ModelSeen(record: $0, time: model.tick()) }
            return Outcome(events: [conflict, Self.line("discarded", entry)], state: nil)
        }
        switch policy {
        case .keepForApp:
            return Outcome(events: [conflict], state: .conflicted(kind, fields, theirs: theirs))
        case .serverWins:
            return drop(&self)
        case .clientWins:
            return sendAsMade(entry, key, body: body, after: [conflict], step: &step)
        case .merge:
            let found = OutboxConflict(
                kind: kind, fields: fields, base: .object(base), mine: mine.map { .object($0) },
                theirs: theirs.map { .object($0) })
            guard case .object(let record)? = ModelPolicy.merged(found) else { return drop(&self) }
            let (status, answered, _) = send(.put, key, body: record)
            guard status == 200 else {
                return Outcome(events: [conflict, Self.line("kept", entry, status)], state: .refused(status))
            }
            sent.append(ModelSentWrite(key: key, effect: answered.map { .record($0) } ?? .gone, time: tick()))
            return Outcome(events: [conflict, Self.line("sent", entry, 200)], state: nil)
        }
    }

    /// Sends the entry's request as it was made: sent, or kept when the server refuses it.
    private mutating func sendAsMade(
        _ entry: ModelEntry, _ key: ModelKey, body: ModelFields?, after events: [String],
        step: inout ModelReplayStep
    ) -> Outcome {
        let (status, record, swept) = send(entry.method, key, body: body)
        step.changed += swept.map { ModelKey(collection: .comments, id: $0) }
        guard status < 300 else {
            return Outcome(events: events + [Self.line("kept", entry, status)], state: .refused(status))
        }
        let effect: ModelSentWrite.Effect =
            entry.method == .delete ? .gone : record.map { .record($0) } ?? .gone
        sent.append(ModelSentWrite(key: key, effect: effect, time: tick()))
        return Outcome(events: events + [Self.line("sent", entry, status)], state: nil)
    }

    /// The top-level fields `after` changed from `before`, `id` left out.
    static func changes(from before: ModelFields, to after: ModelFields) -> Set<String> {
        Set(Set(before.keys).union(after.keys).filter { $0 != "id" && before[$0] != after[$0] })
    }

    /// An event as ``OfflineModelTests`` writes the outbox's: what, the entry's method and path,
    /// and the status when there is one.
    static func line(_ kind: String, _ entry: ModelEntry, _ status: Int? = nil) -> String {
        "\(kind) \(entry.method.rawValue) \(entry.path)" + (status.map { " \($0)" } ?? "")
    }
}
