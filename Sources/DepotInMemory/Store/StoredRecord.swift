import Depot
import Foundation
import JSONServerEngine

/// One record as the in-memory store hands it out: its JSON bytes (answers splice them
/// instead of encoding) and the text of its id. Its members are parsed from the bytes
/// when a rule needs them, so the store keeps one representation per record.
struct StoredRecord {
    /// The record as JSON: the bytes it was seeded with, or the writer's output; always a
    /// valid JSON object without repeated keys.
    var bytes: Data
    /// `id.toString()`, json-server's key for the record; `nil` without an id.
    var idText: String?
    /// The `ETag` of `bytes` when the store kept it with them (``ConditionalGET`` computes
    /// the same from the bytes); `nil` when not known.
    var entityTag: String?

    /// A record whose bytes are written from `members`.
    init(members: [String: JSONValue]) {
        self.init(members: members, bytes: JSONWriter.encode(object: members))
    }

    /// A record with bytes already known to encode `members`.
    init(members: [String: JSONValue], bytes: Data) {
        self.init(bytes: bytes, idText: JSText.idText(members["id"]))
    }

    /// A record from bytes the store holds, its id text, and the tag of its bytes if known.
    init(bytes: Data, idText: String?, entityTag: String? = nil) {
        self.bytes = bytes
        self.idText = idText
        self.entityTag = entityTag
    }

    /// The record's members, parsed from its bytes: each call parses, so read them once
    /// per use.
    func members() -> [String: JSONValue] {
        (try? JSONParser.parse(bytes).get())?.objectValue ?? [:]
    }

    /// The member `key`, parsing that member only.
    func member(_ key: String) -> JSONValue? {
        bytes.withUnsafeBytes { JSONParser.member(key, in: $0) }
    }

    /// The record as a ``Depot/JSONValue``.
    var value: JSONValue { .object(members()) }
}

extension CompiledFilter {
    /// Whether `record` passes, by json-server 0.17's rules: a missing or `null`
    /// field never passes; values compare with the field's text (`userId=1` matches
    /// `1`); `_gte` / `_lte` compare as JavaScript does (numbers as numbers).
    func matches(_ record: StoredRecord) -> Bool {
        let value = record.bytes.withUnsafeBytes { PropertyPath.value(in: $0, filter.path) }
        return matches(value, text: FieldColumn.text(value))
    }
}

/// JSON bytes assembled from pieces that are already JSON.
enum JSONSplice {
    /// `[` + the pieces joined with `,` + `]`.
    static func array(_ pieces: some Collection<Data>) -> Data {
        var total = 2 + max(pieces.count - 1, 0)
        for piece in pieces { total += piece.count }
        var data = Data(capacity: total)
        data.append(UInt8(ascii: "["))
        var first = true
        for piece in pieces {
            if !first { data.append(UInt8(ascii: ",")) }
            first = false
            data.append(piece)
        }
        data.append(UInt8(ascii: "]"))
        return data
    }

    /// An object's bytes with `extra` members added before its closing brace, or
    /// `nil` when that cannot be done by splicing (the object, whose members are
    /// `members`, already has one of the keys, or its bytes do not end in `}`).
    static func object(
        _ record: StoredRecord, members: [String: JSONValue], adding extra: [(key: String, bytes: Data)]
    ) -> Data? {
        guard !extra.isEmpty else { return record.bytes }
        guard extra.allSatisfy({ members[$0.key] == nil }),
            let close = record.bytes.lastIndex(of: UInt8(ascii: "}"))
        else { return nil }
        var data = Data(record.bytes[record.bytes.startIndex..<close])
        var needsComma = !members.isEmpty
        for (key, bytes) in extra {
            var writer = JSONWriter()
            if needsComma { writer.writeRaw(Data([UInt8(ascii: ",")])) }
            writer.writeString(key)
            writer.writeRaw(Data([UInt8(ascii: ":")]))
            data.append(contentsOf: writer.bytes)
            data.append(bytes)
            needsComma = true
        }
        data.append(UInt8(ascii: "}"))
        return data
    }
}
