import Depot
import Foundation

/// The query of a json-server listing, sorted into its parts: full text, slicing,
/// paging, sorting, relations, and the field filters that remain.
package struct JSONServerQuery {
    /// One field filter: `userId=1&userId=2`, `views_gte=10`, `title_like=^a`.
    package struct Filter {
        /// The parameter name as sent (`views_gte`).
        package var key: String
        /// The property path the filter reads (`views`).
        package var path: String
        /// The comparison its name's suffix selects (the one `Query` sends); `nil` for none:
        /// equal to one of the values.
        package var comparison: Query.Comparison?
        /// The values; several are an OR (an AND for `_ne`).
        package var values: [String]

        /// A filter on `path`, sent as `key`.
        package init(key: String, path: String, comparison: Query.Comparison?, values: [String]) {
            self.key = key
            self.path = path
            self.comparison = comparison
            self.values = values
        }
    }

    /// `q`: full-text search (the first value).
    package var text: String?
    /// `_start`, `_end`, `_page`, `_limit`, `_sort`, `_order` (first values).
    package var start, end, page, limit, sort, order: String?
    /// `_embed` and `_expand` (every value).
    package var embed: [String] = []
    package var expand: [String] = []
    /// The other parameters, in order of first appearance.
    package var filters: [Filter] = []

    /// Whether the query asks for anything beyond the whole collection in order.
    package var isEmpty: Bool {
        text == nil && start == nil && end == nil && page == nil && limit == nil && sort == nil
            && embed.isEmpty && expand.isEmpty && filters.isEmpty
    }

    /// Sorts `items` into their parts. A name ending in `[]` or `[0]` (how jQuery and
    /// Axios send arrays) is read without it, as Express's query parser reads it.
    package init(_ items: [URLQueryItem]) {
        var positions: [String: Int] = [:]
        for item in items {
            let value = item.value ?? ""
            let name = Self.plainName(item.name)
            switch name {
            case "q": text = text ?? value
            case "_start": start = start ?? value
            case "_end": end = end ?? value
            case "_page": page = page ?? value
            case "_limit": limit = limit ?? value
            case "_sort": sort = sort ?? value
            case "_order": order = order ?? value
            case "_embed": embed.append(value)
            case "_expand": expand.append(value)
            case "callback", "_": continue  // JSONP and jQuery's cache buster.
            default:
                if let position = positions[name] {
                    filters[position].values.append(value)
                } else {
                    positions[name] = filters.count
                    filters.append(Self.filter(name, value))
                }
            }
        }
    }

    /// Replaces every filter named as `filter` is with it, as json-server's nested
    /// route sets `req.query.userId` for `GET /users/1/posts`.
    package mutating func setFilter(_ filter: Filter) {
        filters.removeAll { $0.key == filter.key }
        filters.append(filter)
    }

    /// `name` without a trailing `[]` or `[digits]`: `id[]` and `id[0]` are `id`.
    private static func plainName(_ name: String) -> String {
        guard name.hasSuffix("]"), let open = name.lastIndex(of: "["), open != name.startIndex else {
            return name
        }
        let inside = name[name.index(after: open)..<name.index(before: name.endIndex)]
        return inside.allSatisfy({ $0.isASCII && $0.isNumber }) ? String(name[..<open]) : name
    }

    private static func filter(_ key: String, _ value: String) -> Filter {
        for comparison in Query.Comparison.allCases where key.hasSuffix(comparison.rawValue) {
            return Filter(
                key: key, path: String(key.dropLast(comparison.rawValue.count)), comparison: comparison,
                values: [value])
        }
        return Filter(key: key, path: key, comparison: nil, values: [value])
    }

    /// json-server's truthiness of a parameter: present and not empty.
    package static func isSet(_ value: String?) -> Bool {
        !(value ?? "").isEmpty
    }
}

/// A `_like` pattern that is not a regular expression, and what to answer about it.
package struct InvalidPattern: Error {
    /// `title_like=( is not a valid regular expression`.
    package let message: String
}

/// A ``JSONServerQuery/Filter`` ready to test records.
package struct CompiledFilter {
    package let filter: JSONServerQuery.Filter
    private let patterns: [NSRegularExpression]

    /// Compiles the `_like` patterns. An empty one (`title_like=`, what a cleared
    /// search box sends) is JavaScript's `new RegExp("")`, `/(?:)/`, which matches
    /// every value, as json-server reads it (ICU refuses an empty pattern).
    ///
    /// - Throws: ``InvalidPattern`` for a pattern that is not a regular expression (json-server
    ///   answers 500; InMemoryBackend answers 400).
    package init(_ filter: JSONServerQuery.Filter) throws(InvalidPattern) {
        self.filter = filter
        guard filter.comparison == .like else {
            patterns = []
            return
        }
        var compiled: [NSRegularExpression] = []
        for value in filter.values {
            do {
                compiled.append(
                    try NSRegularExpression(
                        pattern: value.isEmpty ? "(?:)" : value, options: [.caseInsensitive]))
            } catch {
                throw InvalidPattern(message: "\(filter.key)=\(value) is not a valid regular expression")
            }
        }
        patterns = compiled
    }

    /// The positions among `positions` whose records pass, read from `column` (the column of
    /// the filter's path): one call per filter, so the scan of a collection runs in this module,
    /// where ``matches(_:text:)`` is inlined, not once per record across modules.
    package func passing(_ positions: [Int], in column: FieldColumn) -> [Int] {
        column.values.withUnsafeBufferPointer { values in
            column.texts.withUnsafeBufferPointer { texts in
                positions.filter { matches(values[$0], text: texts[$0]) }
            }
        }
    }

    /// Whether a record whose value at the filter's path is `value` passes, given
    /// `String(value)` as `text` (`nil` for a missing or `null` value): what a
    /// ``FieldColumn`` holds, so a scan reads no record.
    package func matches(_ value: JSONValue?, text: String?) -> Bool {
        guard let value, let text else { return false }
        switch filter.comparison {
        case nil:
            return filter.values.contains(text)
        case .notEqual?:
            return filter.values.allSatisfy { $0 != text }
        case .atLeast?, .atMost?:
            guard let element = JSText.primitive(value) else { return false }
            return filter.values.contains { text in
                let query = JSText.Primitive.string(text)
                return filter.comparison == .atLeast
                    ? JSText.lessOrEqual(query, element) : JSText.lessOrEqual(element, query)
            }
        case .like?:
            let range = NSRange(text.startIndex..<text.endIndex, in: text)
            return patterns.contains { $0.firstMatch(in: text, options: [], range: range) != nil }
        }
    }
}

/// json-server's full-text search (`q`): a case-insensitive substring of any value,
/// nested objects and arrays included; `null`, `false`, `0` and `""` never match.
package enum FullText {
    package static func matches(_ members: [String: JSONValue], _ lowercasedText: String) -> Bool {
        members.values.contains { contains($0, lowercasedText) }
    }

    private static func contains(_ value: JSONValue, _ text: String) -> Bool {
        switch value {
        case .array(let elements): return elements.contains { contains($0, text) }
        case .object(let members): return members.values.contains { contains($0, text) }
        default:
            guard !JSText.isFalsy(value) else { return false }
            return JSText.string(value).lowercased().contains(text)
        }
    }
}
