import Foundation

/// json-server 0.17's `GET /name`: filter, full text, sort, then slice or page, then
/// embed and expand; answered by splicing the records' stored bytes.
enum Listing {
    /// The filter a nested route adds: `GET /users/1/posts` is `GET /posts` with
    /// `userId=1` in place of any `userId` the query had. Like any plain filter, it
    /// is dropped when no post has a `userId` at all.
    struct Scope {
        /// The foreign key, `userId`.
        var key: String
        /// The parent's id as text.
        var value: String

        /// The scope of `/parent/:id/…`: `userId` = `1` for `/users/1/posts`.
        init(parent: String, id: String) {
            key = Inflector.singular(parent) + "Id"
            value = id
        }

        /// The filter the scope adds.
        var filter: JSONServerQuery.Filter {
            JSONServerQuery.Filter(key: key, path: key, operation: .equal, values: [value])
        }

        /// Whether the scope's listing holds `record` of `collection`: its foreign key
        /// reads the parent's id (compared as the listing's filter compares it), or no
        /// record of `collection` has the key (the filter is then dropped).
        func holds(_ record: StoredRecord, in collection: RecordCollection) -> Bool {
            if (try? CompiledFilter(filter))?.matches(record) == true { return true }
            return !collection.someRecordHas(path: key)
        }
    }

    /// Where the listing was asked, for the `Link` header's URLs.
    struct Location {
        /// The backend's base.
        var base: BaseLocation
        /// The encoded path relative to the base: `posts`, `users/1/posts`.
        var path: String
        /// The request's query items, in order.
        var query: [URLQueryItem]
    }

    /// The answer to a listing of `collection` (named `name`).
    ///
    /// - Throws: 400 for a `_like` pattern that is not a regular expression.
    static func respond(
        _ collection: RecordCollection,
        named name: String,
        scope: Scope?,
        at location: Location,
        database: Database
    ) throws(Refusal) -> BackendResponse {
        var query = JSONServerQuery(location.query)
        if let scope { query.setFilter(scope.filter) }
        var headers = BackendResponse.jsonHeaders()
        if query.isEmpty {
            return BackendResponse(status: 200, headers: headers, body: collection.body)
        }
        let selection = try select(collection, query: query)
        let total = selection?.count ?? collection.count

        let paging = JSONServerQuery.isSet(query.page)
        if paging || JSONServerQuery.isSet(query.end) || JSONServerQuery.isSet(query.limit) {
            headers["X-Total-Count"] = String(total)
            headers["Access-Control-Expose-Headers"] = paging ? "X-Total-Count, Link" : "X-Total-Count"
        }
        var range: Range<Int>?
        if paging {
            let page = PageWindow(query: query, total: total)
            range = page.range
            if let links = page.linkHeader(location) { headers["Link"] = links }
        } else if JSONServerQuery.isSet(query.end) {
            range = slice(
                total, start: JSText.parseInt(query.start) ?? 0, end: JSText.parseInt(query.end) ?? 0)
        } else if JSONServerQuery.isSet(query.limit) {
            let start = JSText.parseInt(query.start) ?? 0
            let end =
                JSText.parseInt(query.limit).map { limit in
                    let (sum, overflow) = start.addingReportingOverflow(limit)
                    return overflow ? (limit > 0 ? Int.max : Int.min) : sum
                } ?? 0
            range = slice(total, start: start, end: end)
        }

        let relations = Relations(
            collection: name, embed: query.embed, expand: query.expand, database: database)
        let positions: [Int]
        switch (selection, range) {
        case (let selected?, let range?): positions = Array(selected[range])
        case (let selected?, nil): positions = selected
        case (nil, let range?): positions = Array(range)
        case (nil, nil):
            guard !relations.isEmpty else {
                return BackendResponse(status: 200, headers: headers, body: collection.body)
            }
            positions = Array(0..<collection.count)
        }
        guard !relations.isEmpty else {
            return BackendResponse(status: 200, headers: headers, body: collection.body(of: positions))
        }
        // Materialized first: the splice counts its pieces before it copies them.
        let pieces = positions.compactMap { position in
            collection.record(at: position).map(relations.bytes(of:))
        }
        return BackendResponse(status: 200, headers: headers, body: JSONSplice.array(pieces))
    }

    /// The positions of the records that pass the filters and the full-text search, in
    /// sorted order; `nil` when that is the whole collection as it is. Filters and sort keys
    /// read the collection's columns: each value once, no record copied.
    private static func select(
        _ collection: RecordCollection, query: JSONServerQuery
    ) throws(Refusal) -> [Int]? {
        var filters: [CompiledFilter] = []
        for filter in query.filters {
            // json-server drops a plain filter on a field no record has.
            if filter.operation == .equal && !collection.someRecordHas(path: filter.path) { continue }
            filters.append(try CompiledFilter(filter))
        }
        let text = (query.text ?? "").isEmpty ? nil : query.text?.lowercased()
        let sortKeys = SortKey.parse(sort: query.sort, order: query.order)
        guard !filters.isEmpty || text != nil || !sortKeys.isEmpty else { return nil }

        var positions = Array(0..<collection.count)
        for filter in filters {
            let column = collection.column(filter.filter.path)
            positions = column.values.withUnsafeBufferPointer { values in
                column.texts.withUnsafeBufferPointer { texts in
                    positions.filter { filter.matches(values[$0], text: texts[$0]) }
                }
            }
        }
        if let text {
            positions = positions.filter { position in
                collection.record(at: position).map { FullText.matches($0.members(), text) } ?? false
            }
        }
        if !sortKeys.isEmpty {
            positions = SortKey.sort(positions, by: sortKeys.map { ($0, collection.column($0.path)) })
        }
        return positions
    }

    /// lodash's `_.slice(array, start, end)` range over `count` elements: negative
    /// positions count from the end.
    static func slice(_ count: Int, start: Int, end: Int) -> Range<Int> {
        var lower = start < 0 ? max(count + start, 0) : min(start, count)
        var upper = end > count ? count : end
        if upper < 0 { upper = max(count + upper, 0) }
        if lower > upper { lower = upper }
        return lower..<upper
    }
}

/// `_page` and `_limit`, as json-server's `getPage` reads them: the page number is
/// at least 1, and a `_limit` that is missing, `0` or not a number is 10 (a
/// negative one is kept, and slices as JavaScript's `Array.slice` does).
struct PageWindow {
    let number: Int
    let size: Int
    let total: Int
    let range: Range<Int>
    /// `number * size`, unclamped: json-server offers `next` while it is below `total`.
    private let end: Int

    init(query: JSONServerQuery, total: Int) {
        (number, size) = Self.numberAndSize(query)
        self.total = total
        let (start, overflowA) = (number - 1).multipliedReportingOverflow(by: size)
        let (end, overflowB) = number.multipliedReportingOverflow(by: size)
        self.end = overflowB ? (size > 0 ? Int.max : Int.min) : end
        range = overflowA || overflowB ? total..<total : Listing.slice(total, start: start, end: end)
    }

    /// The page number (at least 1) and size (`_limit`; 10 when missing, `0` or not a number).
    static func numberAndSize(_ query: JSONServerQuery) -> (number: Int, size: Int) {
        let limit = JSText.parseInt(query.limit) ?? 0
        return (max(JSText.parseInt(query.page) ?? 1, 1), limit != 0 ? limit : 10)
    }

    /// `<…_page=1…>; rel="first", <…>; rel="prev", <…>; rel="next", <…>; rel="last"`:
    /// no `prev` on the first page, no `next` on the last, no `first` and `last` when
    /// the page holds every item, nothing when the page is empty (as json-server does).
    func linkHeader(_ location: Listing.Location) -> String? {
        guard !range.isEmpty else { return nil }
        var links: [(rel: String, page: Int)] = []
        let isPartial = range.count != total
        if isPartial { links.append(("first", 1)) }
        if number > 1 { links.append(("prev", number - 1)) }
        if end < total { links.append(("next", number + 1)) }
        if isPartial { links.append(("last", Int((Double(total) / Double(size)).rounded(.up)))) }
        guard !links.isEmpty else { return nil }
        return links.map { link in
            "<\(location.base.url(location.path, query: Self.query(location.query, page: link.page)))>; rel=\"\(link.rel)\""
        }
        .joined(separator: ", ")
    }

    /// The query items with the first `_page` set to `page`, encoded.
    private static func query(_ items: [URLQueryItem], page: Int) -> String {
        var replaced = false
        let items = items.map { item -> URLQueryItem in
            guard !replaced, item.name == "_page" else { return item }
            replaced = true
            return URLQueryItem(name: "_page", value: String(page))
        }
        return QueryString.encode(keepingCommas: true, items)
    }
}

/// One `_sort` key and its `_order`.
struct SortKey {
    var path: String
    var descending: Bool

    /// `_sort=a,b&_order=asc,desc`: an order is `desc` (any case, nothing around it)
    /// or ascending; a key without an order is ascending.
    static func parse(sort: String?, order: String?) -> [SortKey] {
        guard let sort, !sort.isEmpty else { return [] }
        let orders = (order ?? "").split(separator: ",", omittingEmptySubsequences: false).map {
            $0.lowercased()
        }
        return sort.split(separator: ",", omittingEmptySubsequences: false).enumerated().map { offset, path in
            SortKey(
                path: String(path), descending: orders.indices.contains(offset) && orders[offset] == "desc")
        }
    }

    /// `lhs` against `rhs` (a record's values at this key), negative when `lhs` comes first in
    /// this key's order, zero when the key does not tell them apart.
    func compare(_ lhs: JSONValue?, _ rhs: JSONValue?) -> Int {
        let comparison = Value.compare(Value(lhs), Value(rhs))
        return descending ? -comparison : comparison
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
    static func sort(_ positions: [Int], by keys: [(key: SortKey, column: FieldColumn)]) -> [Int] {
        let values = keys.map { key in positions.map { Value(key.column.values[$0]) } }
        let order: [Int]
        if keys.count == 1, let only = values.first, let descending = keys.first?.key.descending {
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
                    if comparison != 0 { return key.key.descending ? comparison > 0 : comparison < 0 }
                }
                return lhs < rhs
            }
        }
        return order.map { positions[$0] }
    }
}
