import Depot
import Foundation
import JSONServerEngine

/// Why the store refused an operation, as the status and message of the answer.
struct Refusal: Error {
    /// The HTTP status: 400, 404 or 409.
    var status: Int
    /// The explanation, sent as `{"error": message}`; a 404 has none.
    var message: String

    /// The error response: `{}` for a 404, as json-server answers every 404 (its
    /// router's last handler sends `res.locals.data || {}`), with the message, if any, in
    /// ``ServerMessage/reasonHeader``; else `{"error": message}`.
    var response: BackendResponse {
        guard status == 404 else { return .error(status, message) }
        let headers: HTTPHeaders = message.isEmpty ? [:] : [ServerMessage.reasonHeader: message]
        return .json([:], status: 404, headers: headers)
    }

    /// A 404: an unknown name, id or path, or a method the resource does not serve.
    static let notFound = Refusal(status: 404, message: "")

    /// The 404 for a name the database holds no collection or object of (`POST /posts` to
    /// `InMemoryBackend()`), saying how to seed one.
    static func noCollection(_ name: String) -> Refusal {
        // The name as a JSON string: quoted, and with no line break a header cannot carry.
        var writer = JSONWriter()
        writer.writeString(name)
        let quoted = String(decoding: writer.bytes, as: UTF8.self)
        return Refusal(
            status: 404,
            message: "InMemoryBackend holds no collection \(quoted); seed one with "
                + "InMemoryBackend(collections: [\(quoted)]) or a database that has it")
    }
    static func badRequest(_ message: String) -> Refusal { Refusal(status: 400, message: message) }
}

/// The in-memory database: collections (arrays of records) and singular objects,
/// keyed by name, in the order they were seeded or created, with json-server 0.17's
/// write rules. Not thread-safe: the store's lock guards it.
final class Database {
    /// What a name refers to.
    enum Resource {
        /// An array of records: `/posts`, `/posts/1`.
        case collection(RecordCollection)
        /// A singular object: `/profile`.
        case object(StoredRecord)
    }

    /// Resource names in order.
    private(set) var names: [String] = []
    // Accessed under the store's lock only, never in overlapping accesses: without the
    // dynamic exclusivity checks (a runtime call per access on every request).
    @exclusivity(unchecked) private var collections: [String: RecordCollection] = [:]
    @exclusivity(unchecked) private var objects: [String: StoredRecord] = [:]
    /// The collection ``resource(_:)`` found last, by name: requests come in runs on one
    /// collection, and comparing a short name costs less than hashing it. Cleared whenever
    /// a name is bound anew.
    @exclusivity(unchecked) private var lastCollection: (name: String, collection: RecordCollection)?

    init() {}

    /// A database of empty collections named `names` (a name given twice is one).
    init(emptyCollections names: [String]) {
        for name in names where collections[name] == nil { set(name, .collection(RecordCollection())) }
    }

    /// A database seeded from a db.json document.
    ///
    /// - Throws: ``Depot/ServiceError/decoding(_:)`` when `data` is not JSON, or not an
    ///   object whose members are arrays of objects or objects.
    init(json data: Data) throws(ServiceError) {
        let entries: [(name: String, entry: JSONParser.DatabaseEntry)]
        switch JSONParser.parseDatabase(data) {
        case .success(let parsed): entries = parsed
        case .failure(let error):
            throw Self.malformed("", "the database is not valid JSON: \(error.description)")
        }
        for (name, entry) in entries {
            switch entry {
            case .collection(let records):
                set(name, .collection(RecordCollection(seed: records, document: data)))
            case .object(let members, let bytes):
                set(name, .object(Self.record(members, bytes: bytes, in: data)))
            case .unsupported(let kind):
                throw Self.malformed(
                    name, "\"\(name)\" is a \(kind); use an array of objects (a collection) or an object")
            case .invalidRecord(let position, let kind):
                throw Self.malformed(
                    "\(name)[\(position)]", "records of \"\(name)\" must be objects, not a \(kind)")
            }
        }
    }

    /// A seeded record: its bytes in the document, or written anew when the parser
    /// repaired it (so an answer never repeats bytes that are not valid JSON).
    private static func record(_ members: [String: JSONValue], bytes range: Range<Int>?, in data: Data)
        -> StoredRecord
    {
        guard let range else { return StoredRecord(members: members) }
        let slice = (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)
        return StoredRecord(members: members, bytes: Data(data[slice]))
    }

    private static func malformed(_ path: String, _ description: String) -> ServiceError {
        .decoding(
            DecodingFailure(type: "InMemoryBackend database", codingPath: path, description: description))
    }

    // MARK: - Reading

    /// The resource named `name`.
    func resource(_ name: String) -> Resource? {
        if let last = lastCollection, last.name == name { return .collection(last.collection) }
        if let collection = collections[name] {
            lastCollection = (name, collection)
            return .collection(collection)
        }
        return objects[name].map { .object($0) }
    }

    /// The collection named `name`.
    func collection(_ name: String) -> RecordCollection? {
        collections[name]
    }

    /// The singular object named `name`.
    func object(_ name: String) -> StoredRecord? {
        objects[name]
    }

    /// The whole database as one JSON object (json-server's `GET /db`).
    var body: Data {
        var data = Data("{".utf8)
        for (offset, name) in names.enumerated() {
            var writer = JSONWriter()
            if offset > 0 { writer.writeRaw(Data(",".utf8)) }
            writer.writeString(name)
            writer.writeRaw(Data(":".utf8))
            data.append(contentsOf: writer.bytes)
            data.append(collections[name]?.body ?? objects[name]?.bytes ?? Data("null".utf8))
        }
        data.append(contentsOf: "}".utf8)
        return data
    }

    // MARK: - Collections

    /// Adds a record to collection `name`, creating the collection if there is none
    /// (for ``RouteContext/insert(_:into:)``; json-server's router answers 404 to a
    /// `POST` for a name it does not have, and so does ``JSONServer``).
    ///
    /// An id that is missing or falsy (`null`, `0`, `""`, `false`) is replaced with
    /// ``RecordCollection/nextID()``; a given id is kept.
    ///
    /// - Throws: 409 for an id already taken; 400 when `name` is a singular object.
    func create(in name: String, members: [String: JSONValue]) throws(Refusal) -> StoredRecord {
        if objects[name] != nil { throw .badRequest("\"\(name)\" is a single object, not a collection") }
        let collection = collections[name] ?? newCollection(name)
        var members = members
        if JSText.isFalsy(members["id"]) { members["id"] = collection.nextID() }
        let record = StoredRecord(members: members)
        guard collection.insert(record, members: members) else {
            throw Refusal(status: 409, message: "Insert failed, duplicate id \(record.idText ?? "")")
        }
        return record
    }

    /// Replaces the record with id text `id` by `members`, keeping its id.
    ///
    /// - Throws: 404 when the collection or the record does not exist.
    func replace(in name: String, id: String, members: [String: JSONValue]) throws(Refusal) -> StoredRecord {
        let (collection, old) = try existing(name, id)
        let members = JSONServerRules.replacing(id: old.member("id"), with: members)
        let record = StoredRecord(members: members)
        collection.replace(id: id, with: record, members: members)
        return record
    }

    /// Merges `changes` into the record with id text `id` (a shallow merge that
    /// keeps the id).
    ///
    /// - Throws: 404 when the collection or the record does not exist.
    func patch(in name: String, id: String, changes: [String: JSONValue]) throws(Refusal) -> StoredRecord {
        let (collection, old) = try existing(name, id)
        let members = JSONServerRules.merging(changes, into: old.members())
        let record = StoredRecord(members: members)
        collection.replace(id: id, with: record, members: members)
        return record
    }

    /// Deletes the record with id text `id` from collection `name`, then, as json-server's
    /// `DELETE` does (also when there is no such record), removes the orphans of the whole
    /// database once: ``sweepOrphans()``.
    ///
    /// - Throws: 404 when the collection or the record does not exist.
    @discardableResult
    func delete(in name: String, id: String) throws(Refusal) -> StoredRecord {
        guard let collection = collections[name] else { throw .notFound }
        let removed = collection.remove(id: id)
        sweepOrphans()
        guard let removed else { throw .notFound }
        return removed
    }

    /// Removes every record, of every collection, whose foreign key refers to a record that
    /// does not exist, as json-server 0.17's `getRemovable` finds them: a member `<name>Id`
    /// whose text is no id of the existing resource `<plural of name>` (`albumId` → `albums`;
    /// a key whose resource does not exist is no foreign key). Computed once over the whole
    /// database, then removed, so a record orphaned by this sweep (a comment of a post it
    /// removed) goes at the next one. A `null` key refers to nothing and is kept, where
    /// json-server answers 500. Linear: each collection's `…Id` columns are read once, and
    /// each value is looked up in the parent's id index.
    func sweepOrphans() {
        var removals: [(RecordCollection, [Int])] = []
        for name in names {
            guard let collection = collections[name], !collection.foreignKeys.isEmpty else { continue }
            var doomed: [Int] = []
            for key in collection.foreignKeys {
                let parentName = Inflector.plural(String(key.dropLast(2)))
                if let parent = collections[parentName] {
                    collection.collectOrphans(of: key, into: &doomed, exists: parent.containsID)
                } else if let object = objects[parentName] {
                    // lodash's `getById` over an object looks among its members' values.
                    let ids = Set(object.members().values.compactMap { JSText.idText($0.objectValue?["id"]) })
                    collection.collectOrphans(of: key, into: &doomed, exists: ids.contains)
                }
            }
            if !doomed.isEmpty { removals.append((collection, doomed)) }
        }
        for (collection, doomed) in removals { collection.remove(slots: doomed) }
    }

    private func existing(_ name: String, _ id: String) throws(Refusal) -> (RecordCollection, StoredRecord) {
        guard let collection = collections[name] else { throw .notFound }
        guard let record = collection.record(id: id) else { throw .notFound }
        return (collection, record)
    }

    private func newCollection(_ name: String) -> RecordCollection {
        let collection = RecordCollection()
        set(name, .collection(collection))
        return collection
    }

    // MARK: - Singular objects

    /// Replaces the singular object `name` (creating it if there is none).
    ///
    /// - Throws: 400 when `name` is a collection.
    func setObject(_ name: String, members: [String: JSONValue]) throws(Refusal) -> StoredRecord {
        if collections[name] != nil { throw .badRequest("\"\(name)\" is a collection, not a single object") }
        let record = StoredRecord(members: members)
        set(name, .object(record))
        return record
    }

    /// Merges `changes` into the singular object `name` (a shallow merge).
    ///
    /// - Throws: 404 when there is no such object.
    func patchObject(_ name: String, changes: [String: JSONValue]) throws(Refusal) -> StoredRecord {
        guard let old = objects[name] else { throw .notFound }
        var members = old.members()
        members.merge(changes) { _, new in new }
        let record = StoredRecord(members: members)
        objects[name] = record
        return record
    }

    private func set(_ name: String, _ resource: Resource) {
        lastCollection = nil
        if collections[name] == nil && objects[name] == nil { names.append(name) }
        switch resource {
        case .collection(let collection):
            objects[name] = nil
            collections[name] = collection
        case .object(let record):
            collections[name] = nil
            objects[name] = record
        }
    }
}
