import Depot
import Foundation
import JSONServerEngine

/// One collection of the in-memory store: records in insertion order, an index from
/// id text to slot (lookup by id is O(1)), and json-server's next-id rule.
///
/// Each record is kept once, as its JSON bytes (a `Data` of their exact size, which an answer
/// shares instead of copying) plus its id text; rules that need a field parse that field
/// only. Deleting leaves a hole in the slots, compacted away the next time positions matter
/// (listing), so deletion and lookup stay O(1). The fields that queries read are kept as
/// columns (``FieldColumn``), read once and kept in step with every write, so a filter or a
/// sort compares values in place. Not thread-safe: the store's lock guards it.
final class RecordCollection {
    /// A record's bytes, its id text, and the `ETag` of its bytes (as ``ConditionalGET``
    /// computes it; 15 bytes kept inline, so a `GET` of the record does not hash it); a hole
    /// has no bytes.
    private struct Slot {
        var bytes: Data?
        var idText: String?
        var entityTag: String

        var isHole: Bool { bytes == nil }
        static let hole = Slot(bytes: nil, idText: nil, entityTag: "")

        /// The record's byte count; 0 for a hole.
        var count: Int { bytes?.count ?? 0 }
    }

    // The store's lock serializes every access, and no access to these overlaps another (each
    // is a read or a write of its own, never held across a call that touches the same
    // property): the dynamic exclusivity checks, a runtime call per access on every lookup,
    // are left out.
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private var index = IDIndex()
    private var holes = 0
    private var numericMaximum: NumericMaximum?
    private var maximumIsStale = false
    /// Whether some record has had an id that is neither a number nor `null`: then the
    /// largest id is found as lodash finds it, not from `numericMaximum`.
    private var hasOtherIDs = false
    private var hasDuplicateIDs = false
    /// The columns read so far, by property path; aligned with `slots` (holes included).
    private var columns: [String: FieldColumn] = [:]

    /// Names ending in `Id` that some record has had: where a cascade must look.
    private(set) var foreignKeys: Set<String> = []

    /// The number of records.
    private(set) var count = 0

    /// An empty collection.
    init() {}

    /// A collection of seeded records: each one's members (read for its id and keys, not
    /// kept) and the range of its bytes in `document`, or `nil` to write them from the
    /// members.
    init(seed records: [(members: [String: JSONValue], bytes: Range<Int>?)], document: Data) {
        slots.reserveCapacity(records.count)
        document.withUnsafeBytes { raw in
            for (members, range) in records {
                let bytes =
                    if let range, let base = raw.baseAddress, !range.isEmpty {
                        // One copy of exactly the record's bytes (a slice would keep the
                        // whole document alive).
                        Data(bytes: base + range.lowerBound, count: range.count)
                    } else {
                        JSONWriter.encode(object: members)
                    }
                append(bytes, members: members)
            }
        }
    }

    // MARK: - Reading

    /// The records in order.
    var records: [StoredRecord] {
        compact()
        return slots.indices.map(record(inSlot:))
    }

    /// The record at `position` (from 0, in order).
    func record(at position: Int) -> StoredRecord? {
        compact()
        return slots.indices.contains(position) ? record(inSlot: position) : nil
    }

    /// The record whose id has the text `id` (`"1"` finds `1`).
    func record(id: String) -> StoredRecord? {
        index[id].map(record(inSlot:))
    }

    /// The values at `path` of every record, by position (from 0, in order): read from
    /// the records the first time a query asks, then kept in step with writes.
    func column(_ path: String) -> FieldColumn {
        compact()
        return alignedColumn(path)
    }

    /// The values at `path` of every slot, holes included (as `nil`), read once.
    private func alignedColumn(_ path: String) -> FieldColumn {
        if let column = columns[path] { return column }
        var column = FieldColumn(path: path, capacity: slots.count)
        for slot in slots.indices { column.append(value(at: path, inSlot: slot)) }
        columns[path] = column
        return column
    }

    /// The JSON array of every record.
    var body: Data {
        compact()
        return body(of: slots.indices)
    }

    /// The JSON array of the records at `positions` (from 0, in order), copied in one pass
    /// into a buffer of the exact size (no per-record append).
    func body(of positions: some Collection<Int>) -> Data {
        compact()
        var total = 1
        for position in positions { total += slots[position].count + 1 }
        if total == 1 { total = 2 }  // "[]"
        var data = Data(count: total)
        data.withUnsafeMutableBytes { output in
            var offset = 0
            output[offset] = UInt8(ascii: "[")
            offset += 1
            for position in positions {
                if offset > 1 {
                    output[offset] = UInt8(ascii: ",")
                    offset += 1
                }
                guard let bytes = slots[position].bytes else { continue }
                bytes.withUnsafeBytes { record in
                    UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + record.count)])
                        .copyMemory(from: record)
                }
                offset += bytes.count
            }
            output[offset] = UInt8(ascii: "]")
        }
        return data
    }

    /// Whether some record has `path` (a member, or a dotted path into one), as
    /// lodash's `_.has` tests it.
    func someRecordHas(path: String) -> Bool {
        column(path).presentCount > 0
    }

    // MARK: - Writing

    /// Appends `record`, whose members are `members`; `false` when its id is taken.
    @discardableResult
    func insert(_ record: StoredRecord, members: [String: JSONValue]) -> Bool {
        if let id = record.idText, index[id] != nil { return false }
        append(record.bytes, members: members)
        return true
    }

    /// Replaces the record whose id text is `id` by `record`, whose members are `members`;
    /// `false` when there is none.
    @discardableResult
    func replace(id: String, with record: StoredRecord, members: [String: JSONValue]) -> Bool {
        guard let slot = index[id] else { return false }
        slots[slot] = Self.slot(record.bytes, idText: record.idText)
        noteKeys(of: members)
        updateColumns { $0.set(PropertyPath.value(members, $0.path), at: slot) }
        return true
    }

    /// Removes and returns the record whose id text is `id`.
    func remove(id: String) -> StoredRecord? {
        guard let slot = index.removeValue(forKey: id) else { return nil }
        let record = record(inSlot: slot)
        release(slot)
        if hasDuplicateIDs, let twin = slots.firstIndex(where: { $0.idText == id }) { index[id] = twin }
        return record
    }

    /// Adds to `doomed` the slots of the records whose foreign key `key` (`albumId`) refers to
    /// nothing: its text (`String(value)`, as json-server's `getById` compares) is not one
    /// `exists` accepts. A record without `key`, or with `key` `null`, refers to nothing and
    /// is kept (json-server answers 500 on a `null` key; Depot's deliberate difference).
    /// Linear in the slots, reading the column of `key` (kept in step with writes).
    func collectOrphans(of key: String, into doomed: inout [Int], exists: (String) -> Bool) {
        let column = alignedColumn(key)
        guard column.presentCount > 0 else { return }
        column.texts.withUnsafeBufferPointer { texts in
            for slot in texts.indices {
                guard let text = texts[slot], !exists(text) else { continue }
                doomed.append(slot)
            }
        }
    }

    /// Whether a record has the id text `id`. O(1).
    func containsID(_ id: String) -> Bool {
        index[id] != nil
    }

    /// Removes the records of `doomed` (slots, as ``collectOrphans(of:into:exists:)`` gives
    /// them; a slot given twice is removed once); returns how many.
    @discardableResult
    func remove(slots doomed: [Int]) -> Int {
        var removed = 0
        for slot in doomed where !slots[slot].isHole {
            if let id = slots[slot].idText, index[id] == slot { index[id] = nil }
            release(slot)
            removed += 1
        }
        if removed > 0 && hasDuplicateIDs { compact() }
        return removed
    }

    /// The id json-server 0.17 gives a new record (its `createId`), from the ids present at
    /// the time of the `POST`: 1 in an empty collection, else the largest id (lodash's
    /// `maxBy`, JavaScript's `>` in record order, so a string id that is not a number never
    /// wins against numbers) plus one when it is a finite number, else a random 7-character
    /// string. An id freed by a deletion is given again. Never one that is taken.
    func nextID() -> JSONValue {
        if count == 0 { return .int(1) }
        let largest: JSONValue?
        if hasOtherIDs {
            largest = Self.largest(column("id").values)
        } else {
            if maximumIsStale { recomputeMaximum() }
            largest = numericMaximum?.value
        }
        var candidate: JSONValue
        switch NumericMaximum(largest) {
        case .integer(let value)?:
            let (next, overflow) = value.addingReportingOverflow(1)
            candidate = overflow ? .string(Self.randomID()) : .int(next)
        case .fraction(let value)?:
            candidate = .double(value + 1)
        case nil:
            // No id at all (json-server fails reading the id of `undefined`): 1.
            candidate = largest == nil ? .int(1) : .string(Self.randomID())
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

    /// lodash's `maxBy` over `ids` in order: the first that is not `null` or missing, replaced
    /// by each later one that JavaScript's `>` holds greater.
    private static func largest(_ ids: [JSONValue?]) -> JSONValue? {
        var result: (value: JSONValue, primitive: JSText.Primitive)?
        for case let id? in ids {
            guard let primitive = JSText.primitive(id) else { continue }
            if let current = result, !JSText.less(current.primitive, primitive) { continue }
            result = (id, primitive)
        }
        return result?.value
    }

    // MARK: - Internals

    private func record(inSlot slot: Int) -> StoredRecord {
        let place = slots[slot]
        return StoredRecord(bytes: place.bytes ?? Data(), idText: place.idText, entityTag: place.entityTag)
    }

    /// The value at `path` in the record of `slot`; `nil` for a hole.
    private func value(at path: String, inSlot slot: Int) -> JSONValue? {
        guard let bytes = slots[slot].bytes else { return nil }
        return bytes.withUnsafeBytes { PropertyPath.value(in: $0, path) }
    }

    /// The slot of a record of `bytes`, kept as they are (they are the store's own: a
    /// seeded record's copy or the writer's output), with their tag.
    private static func slot(_ bytes: Data, idText: String?) -> Slot {
        Slot(bytes: bytes, idText: idText, entityTag: ConditionalGET.entityTag(for: bytes))
    }

    private func append(_ bytes: Data, members: [String: JSONValue]) {
        let idText = JSText.idText(members["id"])
        if let id = idText {
            if index[id] == nil { index[id] = slots.count } else { hasDuplicateIDs = true }
        }
        slots.append(Self.slot(bytes, idText: idText))
        updateColumns { $0.append(PropertyPath.value(members, $0.path)) }
        count += 1
        noteID(members["id"])
        noteKeys(of: members)
    }

    /// Changes every column in place. (Iterating `columns.keys` while writing `columns[path]`
    /// would keep a second reference to the dictionary and copy each column written, all its
    /// values, on every write.)
    private func updateColumns(_ change: (inout FieldColumn) -> Void) {
        guard !columns.isEmpty else { return }
        var index = columns.values.startIndex
        while index != columns.values.endIndex {
            change(&columns.values[index])
            columns.values.formIndex(after: &index)
        }
    }

    /// Turns `slot` into a hole (the index is the caller's to update).
    private func release(_ slot: Int) {
        if let maximum = numericMaximum, maximum.matches(value(at: "id", inSlot: slot)) {
            maximumIsStale = true
        }
        slots[slot] = .hole
        updateColumns { $0.set(nil, at: slot) }
        holes += 1
        count -= 1
    }

    private func noteKeys(of members: [String: JSONValue]) {
        for key in members.keys where key.hasSuffix("Id") && key.count > 2 {
            foreignKeys.insert(key)
        }
    }

    private func noteID(_ id: JSONValue?) {
        switch id {
        case nil, .null?: break
        case .int?, .double?:
            guard !maximumIsStale, let candidate = NumericMaximum(id) else { return }
            if numericMaximum.map({ candidate.isGreater(than: $0) }) ?? true { numericMaximum = candidate }
        default: hasOtherIDs = true
        }
    }

    private func recomputeMaximum() {
        maximumIsStale = false
        numericMaximum = nil
        for slot in slots.indices where !slots[slot].isHole { noteID(value(at: "id", inSlot: slot)) }
    }

    /// Removes the holes left by deletions and renumbers the index.
    private func compact() {
        guard holes > 0 else { return }
        let isHole = slots.map(\.isHole)
        updateColumns { $0.removeHoles(isHole) }
        slots.removeAll(where: \.isHole)
        holes = 0
        index.removeAll(keepingCapacity: true)
        for (slot, place) in slots.enumerated() {
            if let id = place.idText, index[id] == nil { index[id] = slot }
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

    /// The number as a JSON value.
    var value: JSONValue {
        switch self {
        case .integer(let value): return .int(value)
        case .fraction(let value): return .double(value)
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

/// The index from a record's id text to its slot.
///
/// Ids written as small non-negative integers in their canonical form (`0`, `1`, `42`, as
/// json-server's ids usually are) are found by position in an array, with neither hashing
/// nor probing; any other text (`"01"`, `"abc"`, an id too large for the array) is kept in
/// a dictionary. The array grows only while it stays within about twice the number of ids it
/// holds, so sparse ids cannot make it large.
struct IDIndex {
    /// For each number, its slot plus one; 0 when no record has that id.
    private var numbered: [Int32] = []
    /// How many entries of `numbered` are not 0.
    private var numberedCount = 0
    /// Every other id text.
    private var texts: [String: Int] = [:]

    /// The slot of the record whose id text is `id`; setting `nil` removes it.
    subscript(id: String) -> Int? {
        get {
            if let number = Self.number(id), number < numbered.count, numbered[number] != 0 {
                return Int(numbered[number]) - 1
            }
            return texts.isEmpty ? nil : texts[id]
        }
        set {
            guard let number = Self.number(id), canHold(number, slot: newValue) else {
                texts[id] = newValue
                return
            }
            // An id kept as text while the array was too short moves to the array.
            if !texts.isEmpty { texts[id] = nil }
            if number >= numbered.count {
                guard newValue != nil else { return }
                grow(toHold: number)
            }
            let old = numbered[number]
            let new = newValue.map { Int32($0 + 1) } ?? 0
            numbered[number] = new
            numberedCount += (new != 0 ? 1 : 0) - (old != 0 ? 1 : 0)
        }
    }

    /// Removes `id` and returns its slot, if it had one.
    mutating func removeValue(forKey id: String) -> Int? {
        let slot = self[id]
        if slot != nil { self[id] = nil }
        return slot
    }

    /// Removes every id.
    mutating func removeAll(keepingCapacity: Bool) {
        if keepingCapacity {
            for position in numbered.indices { numbered[position] = 0 }
        } else {
            numbered = []
        }
        numberedCount = 0
        texts.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Whether the array holds `number` (or may grow to): within its bounds, or within about
    /// twice the ids it holds; and a slot it can store.
    private func canHold(_ number: Int, slot: Int?) -> Bool {
        if let slot, slot >= Int(Int32.max) - 1 { return false }
        return number < numbered.count || number <= 2 * numberedCount + 1024
    }

    /// Lengthens the array to hold `number`, at least doubling it.
    private mutating func grow(toHold number: Int) {
        let length = max(number + 1, min(numbered.count * 2, 2 * numberedCount + 1025))
        numbered.append(contentsOf: repeatElement(0, count: length - numbered.count))
    }

    /// The value of `text` when it is a canonical non-negative integer of at most nine
    /// digits (`0`, or a digit 1–9 followed by digits), else `nil`.
    static func number(_ text: String) -> Int? {
        let bytes = text.utf8
        guard let first = bytes.first, bytes.count <= 9 else { return nil }
        if first == UInt8(ascii: "0") { return bytes.count == 1 ? 0 : nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
