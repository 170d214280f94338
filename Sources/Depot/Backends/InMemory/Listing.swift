import Foundation

/// json-server 0.17's `GET /name`: filter, full text, sort, then slice or page, then
/// embed and expand; answered by splicing the records' stored bytes.
enum Listing {
    /// A filter a nested route adds: `GET /users/1/posts` keeps posts whose
    /// `userId` has the text `1`.
    struct Scope {
        /// The foreign key, `userId`.
        var key: String
        /// The parent's id as text.
        var value: String
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
        let query = ListQuery(location.query)
        var headers = BackendResponse.jsonHeaders()
        if query.isEmpty && scope == nil {
            return BackendResponse(status: 200, headers: headers, body: collection.body)
        }
        let selection = try select(collection, query: query, scope: scope)
        let total = selection?.count ?? collection.count

        let paging = ListQuery.isSet(query.page)
        if paging || ListQuery.isSet(query.end) || ListQuery.isSet(query.limit) {
            headers["X-Total-Count"] = String(total)
            headers["Access-Control-Expose-Headers"] = paging ? "X-Total-Count, Link" : "X-Total-Count"
        }
        var range: Range<Int>?
        if paging {
            let page = PageWindow(query: query, total: total)
            range = page.range
            if let links = page.linkHeader(location) { headers["Link"] = links }
        } else if ListQuery.isSet(query.end) {
            range = slice(
                total, start: JSText.parseInt(query.start) ?? 0, end: JSText.parseInt(query.end) ?? 0)
        } else if ListQuery.isSet(query.limit) {
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
        let records: [StoredRecord]
        switch (selection, range) {
        case (let selected?, let range?): records = Array(selected[range])
        case (let selected?, nil): records = selected
        case (nil, let range?): records = range.compactMap { collection.record(at: $0) }
        case (nil, nil):
            guard !relations.isEmpty else {
                return BackendResponse(status: 200, headers: headers, body: collection.body)
            }
            records = collection.records
        }
        let body = JSONSplice.array(records.map { relations.bytes(of: $0) })
        return BackendResponse(status: 200, headers: headers, body: body)
    }

    /// The records that pass the filters, the full-text search and the scope, in
    /// sorted order; `nil` when that is the whole collection as it is.
    private static func select(
        _ collection: RecordCollection, query: ListQuery, scope: Scope?
    ) throws(Refusal) -> [StoredRecord]? {
        var filters: [CompiledFilter] = []
        for filter in query.filters {
            // json-server drops a plain filter on a field no record has.
            if filter.operation == .equal && !collection.someRecordHas(path: filter.path) { continue }
            filters.append(try CompiledFilter(filter))
        }
        let text = (query.text ?? "").isEmpty ? nil : query.text?.lowercased()
        let sortKeys = SortKey.parse(sort: query.sort, order: query.order)
        guard !filters.isEmpty || text != nil || scope != nil || !sortKeys.isEmpty else { return nil }

        var records = collection.records
        if let text { records = records.filter { FullText.matches($0.members, text) } }
        if !filters.isEmpty {
            records = records.filter { record in filters.allSatisfy { $0.matches(record.members) } }
        }
        if let scope {
            records = records.filter { record in
                guard let value = QueryPath.value(record.members, scope.key), value != .null else {
                    return false
                }
                return JSText.string(value) == scope.value
            }
        }
        if !sortKeys.isEmpty { records = SortKey.sort(records, by: sortKeys) }
        return records
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

/// `_page` and `_limit`, as json-server's `getPage` reads them.
private struct PageWindow {
    let number: Int
    let size: Int
    let total: Int
    let range: Range<Int>

    init(query: ListQuery, total: Int) {
        number = max(JSText.parseInt(query.page) ?? 1, 1)
        let limit = JSText.parseInt(query.limit) ?? 0
        size = limit > 0 ? limit : 10
        self.total = total
        let (start, overflowA) = (number - 1).multipliedReportingOverflow(by: size)
        let (end, overflowB) = number.multipliedReportingOverflow(by: size)
        range = overflowA || overflowB ? total..<total : Listing.slice(total, start: start, end: end)
    }

    /// `<…_page=1…>; rel="first", <…>; rel="prev", <…>; rel="next", <…>; rel="last"`:
    /// no `prev` on the first page, no `next` on the last, nothing when the page is
    /// empty or holds every item (as json-server does).
    func linkHeader(_ location: Listing.Location) -> String? {
        guard !range.isEmpty else { return nil }
        var links: [(rel: String, page: Int)] = []
        let isPartial = range.count != total
        if isPartial { links.append(("first", 1)) }
        if number > 1 { links.append(("prev", number - 1)) }
        if range.upperBound < total && number * size < total { links.append(("next", number + 1)) }
        if isPartial { links.append(("last", total / size + (total % size == 0 ? 0 : 1))) }
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
        return QueryText.encode(items)
    }
}

/// One `_sort` key and its `_order`.
struct SortKey {
    var path: String
    var descending: Bool

    /// `_sort=a,b&_order=asc,desc`; a key without an order is ascending.
    static func parse(sort: String?, order: String?) -> [SortKey] {
        guard let sort, !sort.isEmpty else { return [] }
        let orders = (order ?? "").split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        return sort.split(separator: ",", omittingEmptySubsequences: false).enumerated().map { offset, path in
            SortKey(
                path: String(path), descending: orders.indices.contains(offset) && orders[offset] == "desc")
        }
    }

    /// `records` ordered by `keys`, stably: numbers compare as numbers, strings as
    /// strings (JavaScript's rules), and records without the field (or with `null`)
    /// come last whatever the order.
    static func sort(_ records: [StoredRecord], by keys: [SortKey]) -> [StoredRecord] {
        let values = records.map { record in
            keys.map { key in QueryPath.value(record.members, key.path).flatMap(JSText.primitive) }
        }
        let order = records.indices.sorted { lhs, rhs in
            for (position, key) in keys.enumerated() {
                switch (values[lhs][position], values[rhs][position]) {
                case (nil, nil): continue
                case (nil, _): return false
                case (_, nil): return true
                case (let left?, let right?):
                    let comparison = JSText.compare(left, right)
                    if comparison != 0 { return key.descending ? comparison > 0 : comparison < 0 }
                }
            }
            return lhs < rhs
        }
        return order.map { records[$0] }
    }
}

/// Query strings for the URLs the backend writes, encoded per RFC 3986: names and
/// values keep only unreserved characters (and `,`), so they read back exactly.
enum QueryText {
    static func encode(_ items: [URLQueryItem]) -> String {
        items.map { item in
            let name = component(item.name)
            guard let value = item.value else { return name }
            return name + "=" + component(value)
        }
        .joined(separator: "&")
    }

    private static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    private static let allowed = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~,")
}
