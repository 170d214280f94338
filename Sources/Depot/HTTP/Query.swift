import Foundation

/// Query parameters for listing calls, in json-server's dialect by default.
///
/// Write it as a dictionary literal for plain filters, or build it:
///
/// ```swift
/// posts.findAll(query: ["userId": 1])
/// posts.findAll(query: Query()
///     .filter("userId", 1, 2)              // userId=1&userId=2 (OR)
///     .filter("views", .atLeast, 100)      // views_gte=100
///     .sorted(by: "title")                 // _sort=title&_order=asc
///     .search("lorem"))                    // q=lorem
/// ```
///
/// Names may repeat and order is kept. Values are any `CustomStringConvertible`.
public struct Query: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The direction of a sort key.
    public enum Order: String, Sendable, Hashable {
        /// Smallest first.
        case ascending = "asc"
        /// Largest first.
        case descending = "desc"
    }

    /// A comparison other than equality, written as a suffix on the field name.
    public enum Comparison: String, Sendable, Hashable {
        /// `field_gte=value`: greater than or equal.
        case atLeast = "_gte"
        /// `field_lte=value`: less than or equal.
        case atMost = "_lte"
        /// `field_ne=value`: not equal.
        case notEqual = "_ne"
        /// `field_like=value`: matches a case-insensitive regular expression.
        case like = "_like"
    }

    private var parameters: [URLQueryItem]
    private var sortKeys: [(field: String, order: Order)] = []

    /// An empty query.
    public init() {
        parameters = []
    }

    /// Creates a query of equality filters, e.g. `["userId": 1]`.
    public init(dictionaryLiteral elements: (String, any CustomStringConvertible)...) {
        parameters = elements.map { URLQueryItem(name: $0.0, value: $0.1.description) }
    }

    /// The query items to send, parameters first, then `_sort` and `_order`.
    public var items: [URLQueryItem] {
        guard !sortKeys.isEmpty else { return parameters }
        return parameters + [
            URLQueryItem(name: "_sort", value: sortKeys.map(\.field).joined(separator: ",")),
            URLQueryItem(name: "_order", value: sortKeys.map(\.order.rawValue).joined(separator: ",")),
        ]
    }

    /// Whether the query has no items.
    public var isEmpty: Bool {
        parameters.isEmpty && sortKeys.isEmpty
    }

    /// Adds `name=value` as it is, for parameters the builder does not name.
    public func adding(_ name: String, _ value: any CustomStringConvertible) -> Query {
        var copy = self
        copy.parameters.append(URLQueryItem(name: name, value: value.description))
        return copy
    }

    /// Keeps items whose `field` equals one of `values` (`field=a&field=b`, an OR).
    public func filter(_ field: String, _ values: any CustomStringConvertible...) -> Query {
        values.reduce(self) { $0.adding(field, $1) }
    }

    /// Keeps items whose `field` compares to `value` as `comparison` says (`views_gte=10`).
    public func filter(
        _ field: String, _ comparison: Comparison, _ value: any CustomStringConvertible
    ) -> Query {
        adding(field + comparison.rawValue, value)
    }

    /// Sorts by `field`; call again to add a second key (`_sort=a,b&_order=asc,desc`).
    public func sorted(by field: String, _ order: Order = .ascending) -> Query {
        var copy = self
        copy.sortKeys.append((field, order))
        return copy
    }

    /// Keeps items that contain `text` in any string field (`q=text`).
    public func search(_ text: String) -> Query {
        adding("q", text)
    }

    /// Includes children of each item (`_embed=comments`).
    public func embed(_ relation: String) -> Query {
        adding("_embed", relation)
    }

    /// Includes the parent of each item (`_expand=user`).
    public func expand(_ relation: String) -> Query {
        adding("_expand", relation)
    }

    /// This query followed by `other`'s items.
    public func merging(_ other: Query) -> Query {
        var copy = self
        copy.parameters += other.parameters
        copy.sortKeys += other.sortKeys
        return copy
    }

    /// Queries are equal when they send the same items.
    public static func == (lhs: Query, rhs: Query) -> Bool {
        lhs.items == rhs.items
    }

    /// Hashes the items.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(items)
    }
}
