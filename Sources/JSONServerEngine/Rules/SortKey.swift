import Depot
import Foundation

/// One `_sort` key and its `_order` (the `Query.Order` a `Query` sends).
package struct SortKey {
    package var path: String
    package var order: Query.Order

    /// `_sort=a,b&_order=asc,desc`: an order is `desc` (any case, nothing around it)
    /// or ascending; a key without an order is ascending.
    package static func parse(sort: String?, order: String?) -> [SortKey] {
        guard let sort, !sort.isEmpty else { return [] }
        let orders = (order ?? "").split(separator: ",", omittingEmptySubsequences: false).map {
            $0.lowercased()
        }
        return sort.split(separator: ",", omittingEmptySubsequences: false).enumerated().map { offset, path in
            SortKey(
                path: String(path),
                order: orders.indices.contains(offset) && orders[offset] == "desc" ? .descending : .ascending)
        }
    }

    /// `lhs` against `rhs` (a record's values at this key), negative when `lhs` comes first in
    /// this key's order, zero when the key does not tell them apart.
    package func compare(_ lhs: JSONValue?, _ rhs: JSONValue?) -> Int {
        let comparison = Value.compare(Value(lhs), Value(rhs))
        return order == .descending ? -comparison : comparison
    }

    /// A sort key's value in one record, as lodash's `compareAscending` ranks it:
    /// values, then `null`, then a missing field.
    private enum Value {
        case value(JSText.Primitive)
        case null
        case missing

        init(_ value: JSONValue?) {
            switch value {
            case nil: self = .missing
            case .null?: self = .null
            case let value?: self = JSText.primitive(value).map(Value.value) ?? .null
            }
        }

        /// Negative, zero or positive, ascending.
        static func compare(_ lhs: Value, _ rhs: Value) -> Int {
            switch (lhs, rhs) {
            case (.value(let left), .value(let right)): return JSText.compare(left, right)
            case (.value, _): return -1
            case (_, .value): return 1
            case (.null, .missing): return -1
            case (.missing, .null): return 1
            default: return 0
            }
        }
    }

    /// `positions` ordered by `keys` as lodash's `orderBy` orders them, stably: numbers
    /// compare as numbers, strings as strings (JavaScript's rules); `null` and then
    /// records without the field come after every value when ascending, and before
    /// them when descending. Each key's values are taken from its column once, before
    /// sorting.
    package static func sort(_ positions: [Int], by keys: [(key: SortKey, column: FieldColumn)]) -> [Int] {
        let values = keys.map { key in positions.map { Value(key.column.values[$0]) } }
        let order: [Int]
        if keys.count == 1, let only = values.first,
            let descending = keys.first.map({ $0.key.order == .descending })
        {
            // One key, the usual case: compared in place, no per-comparison array access.
            order = only.withUnsafeBufferPointer { only in
                positions.indices.sorted { lhs, rhs in
                    let comparison = Value.compare(only[lhs], only[rhs])
                    if comparison != 0 { return descending ? comparison > 0 : comparison < 0 }
                    return lhs < rhs
                }
            }
        } else {
            order = positions.indices.sorted { lhs, rhs in
                for (index, key) in keys.enumerated() {
                    let comparison = Value.compare(values[index][lhs], values[index][rhs])
                    if comparison != 0 {
                        return key.key.order == .descending ? comparison > 0 : comparison < 0
                    }
                }
                return lhs < rhs
            }
        }
        return order.map { positions[$0] }
    }
}
