import Foundation

/// One collection of the in-memory store: records in insertion order, an index from
/// id text to slot (lookup by id is O(1)), the encoded body of the whole collection
/// (rebuilt after a write), and json-server's next-id rule.
///
/// Deleting leaves a hole that is compacted away the next time positions matter
/// (listing), so deletion and lookup stay O(1). The fields that queries read are kept as
/// columns (``FieldColumn``), read from the records once and kept in step with every
/// write, so a filter or a sort compares values in place instead of reading every
/// record. Not thread-safe: the store's lock guards it.
final class RecordCollection {
    private var slots: [StoredRecord?] = []
    private var index: [String: Int] = [:]
    private var holes = 0
    private var cachedBody: Data?
    private var numericMaximum: NumericMaximum?
    private var maximumIsStale = false
    private var hasStringIDs = false
    private var hasDuplicateIDs = false
    /// The columns read so far, by property path; aligned with `slots` (holes included).
    private var columns: [String: FieldColumn] = [:]

    /// Names ending in `Id` that some record has had: where a cascade must look.
    private(set) var foreignKeys: Set<String> = []

    /// The number of records.
    private(set) var count = 0

    init(_ records: [StoredRecord] = []) {
        slots.reserveCapacity(records.count)
        for record in records { append(record) }
    }

    // MARK: - Reading

    /// The records in order, without holes.
    var records: [StoredRecord] {
        compact()
        return slots.compactMap { $0 }
    }

    /// The record at `position` (from 0, in order), after ``compact()``.
    func record(at position: Int) -> StoredRecord? {
        compact()
        return slots.indices.contains(position) ? slots[position] : nil
    }

    /// The values at `path` of every record, by position (from 0, in order): read from
    /// the records the first time a query asks, then kept in step with writes.
    func column(_ path: String) -> FieldColumn {
        compact()
        if let column = columns[path] { return column }
        var column = FieldColumn(path: path, capacity: slots.count)
        for slot in slots { column.append(slot) }
        columns[path] = column
        return column
    }

    /// The record whose id has the text `id` (`"1"` finds `1`).
    func record(id: String) -> StoredRecord? {
        guard let slot = index[id] else { return nil }
        return slots[slot]
    }

    /// The JSON array of every record, spliced from their bytes and kept until the
    /// next write.
    var body: Data {
        if let cachedBody { return cachedBody }
        compact()
        let body = JSONSplice.array(slots.lazy.compactMap { $0?.bytes })
        cachedBody = body
        return body
    }

    /// Whether some record has `path` (a member, or a dotted path into one), as
    /// lodash's `_.has` tests it.
    func someRecordHas(path: String) -> Bool {
        column(path).presentCount > 0
    }

    // MARK: - Writing

    /// Appends `record`; `false` when its id is taken.
    @discardableResult
    func insert(_ record: StoredRecord) -> Bool {
        if let id = record.idText, index[id] != nil { return false }
        append(record)
        return true
    }

    /// Replaces the record whose id text is `id`; `false` when there is none.
    @discardableResult
    func replace(id: String, with record: StoredRecord) -> Bool {
        guard let slot = index[id] else { return false }
        slots[slot] = record
        noteKeys(of: record)
        cachedBody = nil
        updateColumns(at: slot)
        return true
    }

    /// Removes and returns the record whose id text is `id`.
    func remove(id: String) -> StoredRecord? {
        guard let slot = index.removeValue(forKey: id), let record = slots[slot] else { return nil }
        slots[slot] = nil
        updateColumns(at: slot)
        holes += 1
        count -= 1
        cachedBody = nil
        if let maximum = numericMaximum, maximum.matches(record.members["id"]) { maximumIsStale = true }
        if hasDuplicateIDs, let twin = slots.firstIndex(where: { $0?.idText == id }) { index[id] = twin }
        return record
    }

    /// Removes every record that satisfies `shouldRemove`; returns how many.
    @discardableResult
    func removeAll(where shouldRemove: (StoredRecord) -> Bool) -> Int {
        var removed = 0
        for slot in slots.indices {
            guard let record = slots[slot], shouldRemove(record) else { continue }
            slots[slot] = nil
            updateColumns(at: slot)
            if let id = record.idText, index[id] == slot { index[id] = nil }
            if let maximum = numericMaximum, maximum.matches(record.members["id"]) { maximumIsStale = true }
            removed += 1
        }
        guard removed > 0 else { return 0 }
        holes += removed
        count -= removed
        cachedBody = nil
        if hasDuplicateIDs { compact() }
        return removed
    }

    /// The id json-server 0.17 gives a new record: 1 in an empty collection, the
    /// largest numeric id plus one, or a random 7-character string when the ids are
    /// strings; never one that is taken.
    func nextID() -> JSONValue {
        if count == 0 { return .int(1) }
        if maximumIsStale { recomputeMaximum() }
        var candidate: JSONValue
        switch numericMaximum {
        case .integer(let value)?:
            let (next, overflow) = value.addingReportingOverflow(1)
            candidate = overflow ? .string(Self.randomID()) : .int(next)
        case .fraction(let value)?:
            candidate = .double(value + 1)
        case nil:
            candidate = hasStringIDs ? .string(Self.randomID()) : .int(1)
        }
        while let text = JSText.idText(candidate), index[text] != nil {
            if case .int(let value) = candidate, value < Int.max {
                candidate = .int(value + 1)
            } else {
                candidate = .string(Self.randomID())
            }
        }
        return candidate
    }

    // MARK: - Internals

    private func append(_ record: StoredRecord) {
        if let id = record.idText {
            if index[id] == nil { index[id] = slots.count } else { hasDuplicateIDs = true }
        }
        slots.append(record)
        for path in columns.keys { columns[path]?.append(record) }
        count += 1
        cachedBody = nil
        noteID(record.members["id"])
        noteKeys(of: record)
    }

    /// Reads the columns' values of `slot` again (its record was replaced or removed).
    private func updateColumns(at slot: Int) {
        for path in columns.keys { columns[path]?.set(slots[slot], at: slot) }
    }

    private func noteKeys(of record: StoredRecord) {
        for key in record.members.keys where key.hasSuffix("Id") && key.count > 2 {
            foreignKeys.insert(key)
        }
    }

    private func noteID(_ id: JSONValue?) {
        switch id {
        case .string?: hasStringIDs = true
        case .int?, .double?:
            guard !maximumIsStale, let candidate = NumericMaximum(id) else { return }
            if numericMaximum.map({ candidate.isGreater(than: $0) }) ?? true { numericMaximum = candidate }
        default: break
        }
    }

    private func recomputeMaximum() {
        maximumIsStale = false
        numericMaximum = nil
        for case let record? in slots { noteID(record.members["id"]) }
    }

    /// Removes the holes left by deletions and renumbers the index.
    private func compact() {
        guard holes > 0 else { return }
        for path in columns.keys { columns[path]?.removeHoles(of: slots) }
        slots = slots.filter { $0 != nil }
        holes = 0
        index.removeAll(keepingCapacity: true)
        for (slot, record) in slots.enumerated() {
            if let id = record?.idText, index[id] == nil { index[id] = slot }
        }
    }

    /// nanoid(7): seven characters of the URL-safe alphabet.
    private static func randomID() -> String {
        let alphabet = Array("useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict")
        var generator = SystemRandomNumberGenerator()
        return String((0..<7).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
    }
}

/// The largest numeric id of a collection: an integer, or a number with a fraction.
private enum NumericMaximum {
    case integer(Int)
    case fraction(Double)

    init?(_ id: JSONValue?) {
        switch id {
        case .int(let value)?: self = .integer(value)
        case .double(let value)?:
            guard value.isFinite else { return nil }
            if let exact = Int(exactly: value) { self = .integer(exact) } else { self = .fraction(value) }
        default: return nil
        }
    }

    var asDouble: Double {
        switch self {
        case .integer(let value): return Double(value)
        case .fraction(let value): return value
        }
    }

    func isGreater(than other: NumericMaximum) -> Bool {
        if case .integer(let lhs) = self, case .integer(let rhs) = other { return lhs > rhs }
        return asDouble > other.asDouble
    }

    func matches(_ id: JSONValue?) -> Bool {
        guard let other = NumericMaximum(id) else { return false }
        return !isGreater(than: other) && !other.isGreater(than: self)
    }
}

/// One field of every record of a collection, read once: what filters and sorts compare.
///
/// Aligned with the collection's slots; a hole (a deleted record) reads as a missing field.
struct FieldColumn {
    /// The property path read (`albumId`, `author.name`).
    let path: String
    /// The value at the path, `nil` when the record has none.
    private(set) var values: [JSONValue?] = []
    /// `String(value)` as json-server compares it, `nil` when the value is missing or `null`
    /// (a filter never matches those).
    private(set) var texts: [String?] = []
    /// How many records have the path (even as `null`).
    private(set) var presentCount = 0

    init(path: String, capacity: Int) {
        self.path = path
        values.reserveCapacity(capacity)
        texts.reserveCapacity(capacity)
    }

    mutating func append(_ record: StoredRecord?) {
        let value = record.flatMap { QueryPath.value($0.members, path) }
        values.append(value)
        texts.append(Self.text(value))
        if value != nil { presentCount += 1 }
    }

    mutating func set(_ record: StoredRecord?, at slot: Int) {
        let value = record.flatMap { QueryPath.value($0.members, path) }
        if values[slot] != nil { presentCount -= 1 }
        if value != nil { presentCount += 1 }
        values[slot] = value
        texts[slot] = Self.text(value)
    }

    /// Drops the entries of the holes of `slots` (called before the collection drops them).
    mutating func removeHoles(of slots: [StoredRecord?]) {
        var kept = 0
        for slot in slots.indices where slots[slot] != nil {
            values[kept] = values[slot]
            texts[kept] = texts[slot]
            kept += 1
        }
        values.removeLast(values.count - kept)
        texts.removeLast(texts.count - kept)
    }

    private static func text(_ value: JSONValue?) -> String? {
        guard let value, value != .null else { return nil }
        return JSText.string(value)
    }
}
