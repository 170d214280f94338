import Depot
import Foundation
import JSONServerEngine

/// A queued write as reads see it: what it does to which record.
///
/// Built from an ``OutboxEntry`` with the local ids the server has named since rewritten (see
/// ``LocalIDs``), so a comment queued for post `-1` counts as one for post `101` once the post
/// has reached the server.
struct PendingWrite: Sendable {
    /// The outbox entry's id.
    let entryID: String
    /// Its place in the replay order.
    let position: Int
    let method: HTTPMethod
    /// The path of the resource written (``Depot/RequestResource/path``): `posts` for a
    /// create, `posts/7` otherwise.
    let resource: String
    /// The path of the collection a record is in (`posts` for `posts/7`, with its parent for
    /// `users/1/posts/7`); the resource itself for a create.
    let collection: String
    /// The JSON object the write sends; `nil` when its body is none or not a JSON object.
    let members: [String: JSONValue]?
    /// The id a create's record holds until the server names its own; for a create the server
    /// accepted, the id it gave.
    let localID: JSONValue?
    /// When the server accepted the write; `nil` while it waits in the outbox.
    let sentAt: Date?
    /// The record's id within its collection (`7` for `posts/7`), as the resource says it; for
    /// a create, its local id's text.
    let recordID: String?

    init(_ entry: OutboxEntry, localIDs: LocalIDs) {
        self.init(
            entry, sent: entry.body.flatMap { JSONServerRules.parse($0)?.objectValue }, localIDs: localIDs)
    }

    /// ``init(_:localIDs:)`` for an entry whose body, a JSON object, was read already (`sent`;
    /// `nil` for none).
    init(_ entry: OutboxEntry, sent: [String: JSONValue]?, localIDs: LocalIDs) {
        let resource = localIDs.rewriting(entry.resource)
        let members = sent.map { localIDs.rewriting(members: $0, keys: resource.foreignKeys) }
        self.init(
            entryID: entry.id, position: entry.position, method: entry.method, resource: resource,
            members: members, localID: entry.localID, sentAt: nil)
    }

    /// A write the server accepted with `response`, as answers stored before `sentAt` should
    /// show it: the record the server answered with (a create's, with the server's id; the
    /// whole record after a `PUT` or `PATCH`) replaces the write's own body; a `DELETE` stays
    /// one. `nil` when the answer does not say what the record became.
    init?(
        sent entryID: String, position: Int, method: HTTPMethod, resource: RequestResource, response: Data,
        sentAt: Date
    ) {
        let record = JSONServerRules.parse(response)?.objectValue
        switch method {
        case .post:
            guard let record, JSONServerRules.keepsOwnID(record) else { return nil }
            self.init(
                entryID: entryID, position: position, method: .post, resource: resource, members: record,
                localID: record["id"], sentAt: sentAt)
        case .put, .patch:
            guard record != nil else { return nil }
            self.init(
                entryID: entryID, position: position, method: .put, resource: resource, members: record,
                localID: nil, sentAt: sentAt)
        case .delete:
            self.init(
                entryID: entryID, position: position, method: .delete, resource: resource, members: record,
                localID: nil, sentAt: sentAt)
        default: return nil
        }
    }

    private init(
        entryID: String, position: Int, method: HTTPMethod, resource: RequestResource,
        members: [String: JSONValue]?, localID: JSONValue?, sentAt: Date?
    ) {
        self.entryID = entryID
        self.position = position
        self.method = method
        self.members = members
        self.localID = localID
        self.sentAt = sentAt
        self.resource = resource.path
        if method == .post {
            collection = self.resource
            recordID = JSONServerRules.idText(localID)
        } else if let id = resource.id, resource.action.isEmpty {
            collection = resource.collectionPath
            recordID = id
        } else {
            // A singular resource, an action (`posts/7/publish`), or a path whose last segment
            // the resource does not call an id: the segments before it.
            collection = PathSegment.join(Array(resource.segments.dropLast()))
            recordID = resource.isSingular || resource.segments.count < 2 ? nil : resource.segments.last
        }
    }

    /// The record a create makes: the object it sends with its local id.
    var createdRecord: [String: JSONValue]? {
        guard method == .post, let localID else { return nil }
        return Self.record(sending: members ?? [:], localID: localID)
    }

    /// The record a create sending `members` makes until the server answers: `members`, with
    /// `localID` as its `id` unless it carries one json-server keeps.
    static func record(sending members: [String: JSONValue], localID: JSONValue) -> [String: JSONValue] {
        var record = members
        if !JSONServerRules.keepsOwnID(record) { record["id"] = localID }
        return record
    }

    /// `record` as this write leaves it: replaced (`PUT`), merged into (`PATCH`) or gone
    /// (`DELETE`); a create's record when `record` is `nil` and this is the create.
    func applied(to record: [String: JSONValue]?) -> [String: JSONValue]? {
        switch method {
        // The record the create made: whatever a stored answer held under its id before is
        // older (a server that gives a deleted record's id again, as json-server does).
        case .post: return createdRecord ?? record
        case .put:
            guard let members else { return record }
            return JSONServerRules.replacing(id: record?["id"] ?? Self.id(fromText: recordID), with: members)
        case .patch:
            guard let members else { return record }
            guard let record else { return nil }
            return JSONServerRules.merging(members, into: record)
        case .delete: return nil
        default: return record
        }
    }

    /// An id read from a path segment: a number when it reads as one.
    static func id(fromText text: String?) -> JSONValue? {
        guard let text else { return nil }
        if let number = Int(text) { return .int(number) }
        return .string(text)
    }
}

/// The writes waiting in the outbox, indexed for reads: by the record they touch and by the
/// collection they change. Queued entries count, and those kept with a conflict the app has
/// not resolved: a write the server refused (kept) has left it.
struct PendingWrites: Sendable {
    /// Writes to one record's path (`PUT`, `PATCH`, `DELETE` of `posts/7`), by position.
    private var byRecord: [String: [Int: PendingWrite]] = [:]
    /// Every write that changes a listing of the collection (its creates, and the writes to
    /// its records), by position.
    private var byCollection: [String: [Int: PendingWrite]] = [:]
    /// Creates by the path of the record they made (`posts/-1`; for one the server accepted,
    /// `posts/101`): ids the server gives are unique only within a collection.
    private var creates: [String: PendingWrite] = [:]
    /// How many of the creates made a record with each id text.
    private var createdIDs: [String: Int] = [:]
    /// The writes by entry id.
    private var writes: [String: PendingWrite] = [:]
    /// The queued entries the writes were read from, with their bodies as read, by id, to
    /// read them again when the server names a local id they mention.
    private var entries: [String: (entry: OutboxEntry, sent: [String: JSONValue]?)] = [:]
    /// The entries that mention each local id (by its text), in their path or as a member of
    /// their body: those read again when the server names it.
    private var mentions: [String: Set<String>] = [:]

    /// How many writes are pending.
    var count: Int { writes.count }

    var isEmpty: Bool { writes.isEmpty }

    /// The pending writes of `entries` (queued ones, and those kept with a conflict), read
    /// through `localIDs`.
    init(_ entries: [OutboxEntry] = [], localIDs: LocalIDs = LocalIDs()) {
        for entry in entries where entry.showsInReads { add(entry, localIDs: localIDs) }
    }

    /// Counts `entry`, a queued entry.
    mutating func add(_ entry: OutboxEntry, localIDs: LocalIDs) {
        guard writes[entry.id] == nil else { return }
        add(entry, sent: entry.body.flatMap { JSONServerRules.parse($0)?.objectValue }, localIDs: localIDs)
    }

    /// ``add(_:localIDs:)`` for an entry whose body, a JSON object, was read already (`sent`).
    mutating func add(_ entry: OutboxEntry, sent: [String: JSONValue]?, localIDs: LocalIDs) {
        guard writes[entry.id] == nil else { return }
        entries[entry.id] = (entry, sent)
        for text in Self.localIDTexts(in: entry, sent: sent) { mentions[text, default: []].insert(entry.id) }
        add(PendingWrite(entry, sent: sent, localIDs: localIDs))
    }

    /// The texts of what may be local ids in `entry`'s path segments and its body's members: a
    /// negative integer, or a string that starts with `local-`.
    private static func localIDTexts(in entry: OutboxEntry, sent: [String: JSONValue]?) -> [String] {
        func isLocal(_ text: String) -> Bool { text.hasPrefix("-") || text.hasPrefix("local-") }
        var texts = entry.resource.segments.filter(isLocal)
        for value in sent?.values ?? [:].values {
            switch value {
            case .int(let number) where number < 0: texts.append(String(number))
            case .string(let text) where isLocal(text): texts.append(text)
            default: continue
            }
        }
        return texts
    }

    /// Counts `write` (one already sent, say).
    mutating func add(_ write: PendingWrite) {
        // The write it replaces leaves the indexes; the entry it was read from stays.
        removeWrite(write.entryID)
        writes[write.entryID] = write
        if write.method == .post {
            // The latest create of a record path (an id the server gave again) stands for it.
            if let id = JSONServerRules.idText(write.localID),
                (creates[write.collection + "/" + id]?.position ?? Int.min) < write.position
            {
                if let replaced = creates.updateValue(write, forKey: write.collection + "/" + id) {
                    forget(createdID: replaced)
                }
                createdIDs[id, default: 0] += 1
            }
        } else {
            byRecord[write.resource, default: [:]][write.position] = write
        }
        byCollection[write.collection, default: [:]][write.position] = write
    }

    /// Forgets the entry with `id` (sent, kept, discarded).
    mutating func remove(_ id: String) {
        entries[id] = nil
        removeWrite(id)
    }

    /// Takes the write of the entry with `id` out of the indexes.
    private mutating func removeWrite(_ id: String) {
        guard let write = writes.removeValue(forKey: id) else { return }
        if write.method == .post {
            // Unless a later create of the same record replaced it there.
            if let created = JSONServerRules.idText(write.localID).map({ write.collection + "/" + $0 }),
                creates[created]?.entryID == write.entryID
            {
                creates[created] = nil
                forget(createdID: write)
            }
        } else {
            byRecord[write.resource]?[write.position] = nil
            if byRecord[write.resource]?.isEmpty == true { byRecord[write.resource] = nil }
        }
        byCollection[write.collection]?[write.position] = nil
        if byCollection[write.collection]?.isEmpty == true { byCollection[write.collection] = nil }
    }

    /// Reads again, through `localIDs`, the writes that mention `local`, a local id the server
    /// has just named: only those (a replay of many creates reads each write once, not every
    /// write at every create).
    mutating func rewrite(mentioning local: JSONValue, by localIDs: LocalIDs) {
        guard let text = JSONServerRules.idText(local), let ids = mentions.removeValue(forKey: text) else {
            return
        }
        for id in ids {
            guard let (entry, sent) = entries[id] else { continue }
            add(PendingWrite(entry, sent: sent, localIDs: localIDs))
        }
    }

    /// The writes that decide what a read of the record at `resource` answers, in replay
    /// order: the create that made it and the writes to its path (a sent create among the
    /// writes sent before and after it: an id the server gave again after a deletion).
    func writes(toRecord resource: String) -> [PendingWrite] {
        var writes = Self.ordered(byRecord[resource])
        if let create = creates[resource] {
            writes.insert(create, at: writes.firstIndex { $0.position > create.position } ?? writes.endIndex)
        }
        return writes
    }

    /// The writes that change listings of `collection`, in replay order.
    func writes(toCollection collection: String) -> [PendingWrite] {
        Self.ordered(byCollection[collection])
    }

    /// Whether a queued create made the record whose id has the text `id` (a local id).
    func createsRecord(withID id: String) -> Bool {
        createdIDs[id] != nil
    }

    private mutating func forget(createdID write: PendingWrite) {
        guard let id = JSONServerRules.idText(write.localID), let count = createdIDs[id] else { return }
        createdIDs[id] = count > 1 ? count - 1 : nil
    }

    /// Whether a write waits for `resource` as a record or as a collection.
    func touches(_ resource: String) -> Bool {
        byCollection[resource] != nil || byRecord[resource] != nil || creates[resource] != nil
    }

    /// These writes, but only those the server accepted after `date` (for an answer stored
    /// then).
    func sent(after date: Date) -> PendingWrites {
        var later = PendingWrites()
        for write in writes.values where (write.sentAt ?? .distantFuture) > date { later.add(write) }
        return later
    }

    /// The id of the oldest write (the first in replay order): one pass, no sort.
    var oldestEntryID: String? {
        writes.values.min { $0.position < $1.position }?.entryID
    }

    private static func ordered(_ writes: [Int: PendingWrite]?) -> [PendingWrite] {
        guard let writes else { return [] }
        return writes.keys.sorted().compactMap { writes[$0] }
    }
}
