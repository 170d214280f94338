import Depot
import Foundation
import JSONServerEngine

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
            JSONServerQuery.Filter(key: key, path: key, comparison: nil, values: [value])
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

        let window = ListingWindow(query)
        if window != .all {
            let paging = if case .page = window { true } else { false }
            headers["X-Total-Count"] = String(total)
            headers["Access-Control-Expose-Headers"] = paging ? "X-Total-Count, Link" : "X-Total-Count"
        }
        let range = window.range(total: total)
        let links = window.linkHeader(total: total, query: location.query) {
            location.base.url(location.path, query: $0)
        }
        if let links { headers["Link"] = links }

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
            if filter.comparison == nil && !collection.someRecordHas(path: filter.path) { continue }
            do {
                filters.append(try CompiledFilter(filter))
            } catch {
                throw .badRequest(error.message)
            }
        }
        let text = (query.text ?? "").isEmpty ? nil : query.text?.lowercased()
        let sortKeys = SortKey.parse(sort: query.sort, order: query.order)
        guard !filters.isEmpty || text != nil || !sortKeys.isEmpty else { return nil }

        var positions = Array(0..<collection.count)
        for filter in filters {
            positions = filter.passing(positions, in: collection.column(filter.filter.path))
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
}
