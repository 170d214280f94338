import Depot
import Foundation

/// json-server 0.17's rules for records held outside ``InMemoryBackend``, taken from the code
/// InMemoryBackend answers with: DepotOffline lays the writes waiting in its outbox over an
/// answer with them, so that a pending write changes a read as the server would have.
package enum JSONServerRules {
    /// `PUT`: `members` with the record's own `id` (json-server keeps the id a replacement
    /// leaves out or changes).
    package static func replacing(id: JSONValue?, with members: [String: JSONValue]) -> [String: JSONValue] {
        var members = members
        members["id"] = id
        return members
    }

    /// `PATCH`: `changes` merged into `record` member by member (a shallow merge), keeping its
    /// `id`.
    package static func merging(_ changes: [String: JSONValue], into record: [String: JSONValue])
        -> [String: JSONValue]
    {
        var members = record
        members.merge(changes) { _, new in new }
        members["id"] = record["id"]
        return members
    }

    /// The JSON value of `data`, or `nil` when it is not JSON.
    package static func parse(_ data: Data) -> JSONValue? {
        try? JSONParser.parse(data).get()
    }

    /// The id text (``idText(_:)``) of the JSON object that is the whole of `data`, parsed as
    /// ``parse(_:)`` parses it but without building the object's own dictionary
    /// (``JSONParser/member(_:inWhole:)``). `nil` when `data` is not such an object (one cut
    /// short or invalid, too) or its `id` is missing or not a primitive.
    package static func idText(ofObject data: Data) -> String? {
        data.withUnsafeBytes { idText(JSONParser.member("id", inWhole: $0)) }
    }

    /// The bytes of the JSON object `members`, as InMemoryBackend writes a record.
    package static func encode(_ members: [String: JSONValue]) -> Data {
        JSONWriter.encode(object: members)
    }

    /// The bytes of `value` as JSON.
    package static func encode(value: JSONValue) -> Data {
        JSONWriter.encode(value)
    }

    /// The elements of the JSON array `data`, each with its `id` as json-server compares ids
    /// (``idText(_:)``), read in one pass; `nil` when `data` is not an array.
    package static func elementsWithIDs(ofArray data: Data) -> [(element: Range<Int>, id: String?)]? {
        data.withUnsafeBytes { raw -> [(element: Range<Int>, id: String?)]? in
            guard let elements = JSONParser.elements(ofArray: raw, member: "id") else { return nil }
            return elements.map { element, member in
                guard let member else { return (element, nil) }
                let value = UnsafeRawBufferPointer(rebasing: raw[member])
                // An integer's text is its bytes (short: kept inline, nothing allocated).
                if value.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }) {
                    return (element, String(decoding: value, as: UTF8.self))
                }
                return (element, idText(try? JSONParser.parse(Data(value)).get()))
            }
        }
    }

    /// The value at `path` (a property path: `id`, `author.name`) in the JSON object at
    /// `range` of `data`, parsing only the member the path starts with.
    package static func value(at path: String, in data: Data, range: Range<Int>) -> JSONValue? {
        data.withUnsafeBytes { PropertyPath.value(in: UnsafeRawBufferPointer(rebasing: $0[range]), path) }
    }

    /// The value at `path` (a property path) in the object `members`.
    package static func value(at path: String, in members: [String: JSONValue]) -> JSONValue? {
        PropertyPath.value(members, path)
    }

    /// Whether a created record keeps the `id` it was sent with: json-server gives it a new
    /// one when the id is missing or false to JavaScript (`null`, `0`, `""`, `false`).
    package static func keepsOwnID(_ members: [String: JSONValue]) -> Bool {
        !JSText.isFalsy(members["id"])
    }

    /// An id as json-server compares ids (`id.toString()`: `1` and `"1"` are the same record);
    /// `nil` for a missing or `null` id.
    package static func idText(_ value: JSONValue?) -> String? {
        JSText.idText(value)
    }
}

/// What one listing query (`GET /posts?userId=1&_sort=views&_page=2`) selects, by
/// json-server's rules: which records its filters and full-text search admit, the order its
/// `_sort` and `_order` put them in, and which part of the listing its paging shows. The same
/// filters, search and sort keys InMemoryBackend runs over a collection.
package struct ListingRule {
    private let filters: [CompiledFilter]
    /// A `_like` pattern that is not a regular expression: the server refuses the query, and
    /// nothing is admitted.
    private let refused: Bool
    private let text: String?
    private let sortKeys: [SortKey]
    /// Which part of the listing the query shows.
    package let window: ListingWindow

    /// The rule of a listing asked with `items`.
    package init(query items: [URLQueryItem]) {
        let query = JSONServerQuery(items)
        var filters: [CompiledFilter] = []
        var refused = false
        for filter in query.filters {
            do {
                filters.append(try CompiledFilter(filter))
            } catch {
                refused = true
            }
        }
        self.filters = filters
        self.refused = refused
        text = (query.text ?? "").isEmpty ? nil : query.text?.lowercased()
        sortKeys = SortKey.parse(sort: query.sort, order: query.order)
        window = ListingWindow(query)
    }

    /// Whether the query sorts (`_sort`): without it a listing keeps the collection's order,
    /// and a new record comes last.
    package var isSorted: Bool { !sortKeys.isEmpty }

    /// Whether the query's filters and full-text search admit `record`. An equality filter on
    /// a field for which `isKnown` is `false` (no record of the collection has it) is dropped,
    /// as json-server drops it.
    package func admits(_ record: [String: JSONValue], isKnown: (String) -> Bool = { _ in true }) -> Bool {
        if refused { return false }
        for rule in filters {
            let value = PropertyPath.value(record, rule.filter.path)
            if rule.filter.comparison == nil && value == nil && !isKnown(rule.filter.path) { continue }
            if !rule.matches(value, text: FieldColumn.text(value)) { return false }
        }
        if let text, !FullText.matches(record, text) { return false }
        return true
    }

    /// The property paths the sort keys read, in order.
    package var sortPaths: [String] { sortKeys.map(\.path) }

    /// `lhs` against `rhs`, each a record's values at ``sortPaths``: negative when `lhs` comes
    /// first, zero when the keys do not tell them apart.
    package func compare(_ lhs: [JSONValue?], _ rhs: [JSONValue?]) -> Int {
        for (offset, key) in sortKeys.enumerated() {
            let comparison = key.compare(
                lhs.indices.contains(offset) ? lhs[offset] : nil,
                rhs.indices.contains(offset) ? rhs[offset] : nil)
            if comparison != 0 { return comparison }
        }
        return 0
    }
}
