import Depot

/// One field of every record of a collection, read once: what filters and sorts compare.
///
/// Aligned with the collection's slots; a hole (a deleted record) reads as a missing field.
package struct FieldColumn {
    /// The property path read (`albumId`, `author.name`).
    package let path: String
    /// The value at the path, `nil` when the record has none.
    package private(set) var values: [JSONValue?] = []
    /// `String(value)` as json-server compares it, `nil` when the value is missing or `null`
    /// (a filter never matches those).
    package private(set) var texts: [String?] = []
    /// How many records have the path (even as `null`).
    package private(set) var presentCount = 0

    package init(path: String, capacity: Int) {
        self.path = path
        values.reserveCapacity(capacity)
        texts.reserveCapacity(capacity)
    }

    package mutating func append(_ value: JSONValue?) {
        values.append(value)
        texts.append(Self.text(value))
        if value != nil { presentCount += 1 }
    }

    package mutating func set(_ value: JSONValue?, at slot: Int) {
        if values[slot] != nil { presentCount -= 1 }
        if value != nil { presentCount += 1 }
        values[slot] = value
        texts[slot] = Self.text(value)
    }

    /// Drops the entries where `isHole` is true (called before the collection drops them).
    package mutating func removeHoles(_ isHole: [Bool]) {
        var kept = 0
        for slot in isHole.indices where !isHole[slot] {
            values[kept] = values[slot]
            texts[kept] = texts[slot]
            kept += 1
        }
        values.removeLast(values.count - kept)
        texts.removeLast(texts.count - kept)
    }

    /// `String(value)` as a filter compares it; `nil` for a missing or `null` value.
    package static func text(_ value: JSONValue?) -> String? {
        guard let value, value != .null else { return nil }
        return JSText.string(value)
    }
}
