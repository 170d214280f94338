import Foundation

/// One record as the in-memory store keeps it: its members, its JSON bytes (so that
/// answers splice bytes instead of encoding), and the text of its id.
struct StoredRecord {
    /// The record's members.
    var members: [String: JSONValue]
    /// The record as JSON: the bytes it was seeded with, or the writer's output.
    var bytes: Data
    /// `id.toString()`, json-server's key for the record; `nil` without an id.
    var idText: String?

    /// A record whose bytes are written from `members`.
    init(members: [String: JSONValue]) {
        self.init(members: members, bytes: JSONWriter.encode(object: members))
    }

    /// A record with bytes already known to encode `members`.
    init(members: [String: JSONValue], bytes: Data) {
        self.members = members
        self.bytes = bytes
        self.idText = JSText.idText(members["id"])
    }

    /// The record as a ``JSONValue``.
    var value: JSONValue { .object(members) }
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
    /// `nil` when that cannot be done by splicing (the object already has one of
    /// the keys, or its bytes do not end in `}`).
    static func object(_ record: StoredRecord, adding extra: [(key: String, bytes: Data)]) -> Data? {
        guard !extra.isEmpty else { return record.bytes }
        guard extra.allSatisfy({ record.members[$0.key] == nil }),
            let close = record.bytes.lastIndex(of: UInt8(ascii: "}"))
        else { return nil }
        var data = Data(record.bytes[record.bytes.startIndex..<close])
        var needsComma = !record.members.isEmpty
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
