import Foundation

/// Query parameters for listing calls, in json-server's dialect by default: a dictionary
/// literal for plain filters, or built up.
///
/// ```swift
/// posts.findAll(query: ["userId": 1])
/// posts.findAll(query: Query().filter("views", .atLeast, 100).sorted(by: "title").embed("comments"))
/// ```
///
/// What each builder sends, and how json-server answers: the article *Defining repositories*.
public struct Query: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The direction of a sort key.
    public enum Order: String, Sendable, Hashable {
        /// Smallest first.
        case ascending = "asc"
        /// Largest first.
        case descending = "desc"
    }

    /// A comparison other than equality, written as a suffix on the field name.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        /// `field_gte=value`: greater than or equal (numbers compare as numbers,
        /// text as text).
        case atLeast = "_gte"
        /// `field_lte=value`: less than or equal.
        case atMost = "_lte"
        /// `field_ne=value`: not equal; repeated, equal to none of the values.
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

    /// Creates a query of equality filters, e.g. `["userId": 1]`; an array value
    /// repeats the name (`["id": [1, 2]]` is `id=1&id=2`, an OR).
    public init(dictionaryLiteral elements: (String, any CustomStringConvertible)...) {
        parameters = elements.flatMap { name, value in
            Self.texts(of: value).map { URLQueryItem(name: name, value: $0) }
        }
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

    /// Adds `name=value` as it is, for parameters the builder does not name; a
    /// collection value adds `name=element` for each element.
    public func adding(_ name: String, _ value: any CustomStringConvertible) -> Query {
        var copy = self
        copy.parameters += Self.texts(of: value).map { URLQueryItem(name: name, value: $0) }
        return copy
    }

    /// Keeps items whose `field` equals one of `values` (`field=a&field=b`, an OR).
    ///
    /// Pass several values, or one collection: `filter("id", 1, 2)` and
    /// `filter("id", [1, 2])` both send `id=1&id=2`.
    public func filter(_ field: String, _ values: any CustomStringConvertible...) -> Query {
        values.reduce(self) { $0.adding(field, $1) }
    }

    /// Keeps items whose `field` compares to `value` as `comparison` says (`views_gte=10`).
    ///
    /// Several values for one comparison (a collection, or calling again) are an OR,
    /// except for ``Comparison/notEqual``, where an item must differ from them all.
    public func filter(
        _ field: String, _ comparison: Comparison, _ value: any CustomStringConvertible
    ) -> Query {
        adding(field + comparison.rawValue, value)
    }

    /// Sorts by `field`; call again to add a second key (`_sort=a,b&_order=asc,desc`).
    ///
    /// json-server puts items without the field (or with `null`) last when
    /// ascending and first when descending, as lodash's `orderBy` does.
    public func sorted(by field: String, _ order: Order = .ascending) -> Query {
        var copy = self
        copy.sortKeys.append((field, order))
        return copy
    }

    /// Keeps items that contain `text`, ignoring case, in any value at any depth (`q=text`).
    public func search(_ text: String) -> Query {
        adding("q", text)
    }

    /// Keeps the items at positions `range` (from 0) of the filtered, sorted list:
    /// `_start=lower&_end=upper`. json-server then sends `X-Total-Count`.
    public func range(_ range: Range<Int>) -> Query {
        adding("_start", range.lowerBound).adding("_end", range.upperBound)
    }

    /// Keeps the first `count` items of the filtered, sorted list (`_limit=count`).
    /// For pages, use ``PagedRepository/findPage(_:size:query:)`` instead.
    public func limit(_ count: Int) -> Query {
        adding("_limit", count)
    }

    /// Includes, in each item, its children from each of `collections` (`_embed=comments`):
    /// the records whose `<singular>Id` (`postId` for `posts`) is the item's id.
    ///
    /// Decode them with an entity that has the field, e.g.
    /// `struct PostWithComments: Decodable { var id: Int; var comments: [Comment] }`.
    public func embed(_ collections: String...) -> Query {
        collections.reduce(self) { $0.adding("_embed", $1) }
    }

    /// Includes, in each item, the parent that each of `relations` names
    /// (`_expand=user`): the record of `users` whose id is the item's `userId`.
    public func expand(_ relations: String...) -> Query {
        relations.reduce(self) { $0.adding("_expand", $1) }
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

    /// The texts `value` is sent as: one per element of a collection (text is not
    /// taken apart), a floating-point number as JavaScript writes it when it is whole
    /// or not finite (`4`, `Infinity`), else the description.
    static func texts(of value: any CustomStringConvertible) -> [String] {
        if value is any StringProtocol { return [value.description] }
        if let collection = value as? any Collection {
            var texts: [String] = []
            for element in collection {
                guard let element = element as? any CustomStringConvertible else {
                    return [value.description]
                }
                texts += Self.texts(of: element)
            }
            return texts
        }
        if let number = value as? any BinaryFloatingPoint {
            let double = Double(number)
            if double.isNaN { return ["NaN"] }
            if double.isInfinite { return [double < 0 ? "-Infinity" : "Infinity"] }
            if double == double.rounded(), abs(double) < 1e15 { return [String(Int64(double))] }
        }
        return [value.description]
    }
}
