import Depot
import Foundation

/// Lays the writes waiting in the outbox over a read's answer, as if the server had applied
/// them, by json-server's rules (``Depot/JSONServerRules``, ``Depot/ListingRule``: the code
/// InMemoryBackend answers with).
enum Overlay {
    /// An answer with pending writes laid over it, and how many of them changed it.
    struct Laid {
        var result: Result<BackendResponse, ServiceError>
        var applied: Int
    }

    /// The answer to a read of one record (`GET posts/7`) given `writes`, the pending writes
    /// to it in replay order, and `answer`, what the network or the store answered: the record
    /// replaced, merged into or gone (`404` with `{}`); a record created offline answered from
    /// its create. `nil` when the writes leave the answer as it is (a `PATCH` of a record no
    /// answer holds).
    static func record(
        _ answer: Result<BackendResponse, ServiceError>?, writes: [PendingWrite], request: BackendRequest
    ) -> Laid? {
        guard !writes.isEmpty else { return nil }
        var headers = BackendResponse.jsonHeaders()
        var record: [String: JSONValue]?
        if case .success(let response)? = answer {
            guard case .object(let members)? = JSONServerRules.parse(response.body) else { return nil }
            record = members
            headers = edited(response.headers)
        }
        let known = record != nil
        for write in writes { record = write.applied(to: record) }
        if let record {
            return Laid(
                result: .success(
                    BackendResponse(status: 200, headers: headers, body: JSONServerRules.encode(record))),
                applied: writes.count)
        }
        // Gone only when a write removed it; a PATCH alone tells nothing of a record unseen.
        guard known || writes.contains(where: { $0.method == .delete || $0.method == .post }) else {
            return nil
        }
        return Laid(result: .failure(goneError(for: request)), applied: writes.count)
    }

    /// The `404` a deleted record answers, as json-server sends it (`{}`).
    static func goneError(for request: BackendRequest) -> ServiceError {
        let response = BackendResponse(
            status: 404, headers: BackendResponse.jsonHeaders(), body: Data("{}".utf8))
        return ServiceError(response: response, for: request) ?? .notFound(FailureResponse(status: 404))
    }

    /// One element of a listing being laid over: an element of the answer (its bytes), or a
    /// record a pending write made or changed.
    private struct Item {
        var range: Range<Int>?
        var record: [String: JSONValue]?
        var id: String?
        /// Created by a pending write (not in the answer, not in its total).
        var isCreated: Bool
    }

    /// A listing's answer (`GET posts?userId=1&_sort=views&_page=2`, a JSON array) with
    /// `writes`, the pending writes to the collection in replay order, laid over it:
    /// - a record of the answer that a write replaced or merged into is changed in place (and
    ///   leaves the answer when it no longer passes the query's filters); a deleted one leaves;
    /// - a created record that passes the filters is inserted where the query's sort puts it,
    ///   or last when it does not sort, if that place is within the page the answer shows;
    /// - `X-Total-Count` counts the records that left and every created record that passes.
    ///
    /// What one page cannot show is left out: a create whose place is on another page is not
    /// inserted (though counted), and records shift between pages only within this one. An
    /// answer that is not a JSON array (an envelope) is left as it is: `nil`.
    static func listing(_ response: BackendResponse, query: [URLQueryItem], writes: [PendingWrite]) -> Laid? {
        // Offsets from 0, as the element ranges are.
        let body = response.body.startIndex == 0 ? response.body : Data(response.body)
        guard !writes.isEmpty, let ranges = JSONServerRules.elements(ofArray: body) else { return nil }
        let rule = ListingRule(query: query)
        var items = ranges.map { range in
            Item(
                range: range, record: nil,
                id: JSONServerRules.idText(JSONServerRules.value(at: "id", in: body, range: range)),
                isCreated: false)
        }
        var total = response.headers["X-Total-Count"].flatMap { Int($0) }
        var applied = 0
        var changed = Set<String>()
        for write in writes {
            if write.method == .post {
                guard let record = write.createdRecord else { continue }
                items.append(Item(range: nil, record: record, id: write.recordID, isCreated: true))
                changed.insert(write.recordID ?? "")
                applied += 1
                continue
            }
            guard let id = write.recordID, let index = items.firstIndex(where: { $0.id == id }) else {
                continue
            }
            let current = items[index].record ?? items[index].range.flatMap { Self.members(body, $0) }
            applied += 1
            if let next = write.applied(to: current) {
                items[index].record = next
                items[index].range = nil
                changed.insert(id)
            } else {
                if !items[index].isCreated { total = total.map { $0 - 1 } }
                items.remove(at: index)
            }
        }
        // The records the writes changed or made, held to the query's filters.
        let known = { (path: String) in
            items.contains { item in
                item.record.map { JSONServerRules.value(at: path, in: $0) != nil }
                    ?? item.range.map { JSONServerRules.value(at: path, in: body, range: $0) != nil } ?? false
            }
        }
        var kept: [Item] = []
        for item in items {
            if let record = item.record, !rule.admits(record, isKnown: known) {
                if !item.isCreated { total = total.map { $0 - 1 } }
                continue
            }
            kept.append(item)
        }
        let originals = kept.filter { !$0.isCreated }
        let created = kept.filter(\.isCreated)
        total = total.map { $0 + created.count }
        let placed = place(
            created, among: originals, rule: rule, body: body, total: total, pageCount: ranges.count)
        var headers = edited(response.headers)
        if let total { headers["X-Total-Count"] = String(total) }
        let pieces = placed.map { item in
            item.record.map(JSONServerRules.encode) ?? item.range.map { body[$0] } ?? Data()
        }
        return Laid(
            result: .success(
                BackendResponse(
                    status: response.status, headers: headers, body: JSONServerRules.array(pieces))),
            applied: applied)
    }

    /// `created` placed among `originals` (the page's records, in the server's order) as the
    /// query places new records, keeping only those whose place is within the page.
    private static func place(
        _ created: [Item], among originals: [Item], rule: ListingRule, body: Data, total: Int?, pageCount: Int
    ) -> [Item] {
        guard !created.isEmpty else { return originals }
        if !rule.isSorted {
            // Last in the listing: on this page when the page reaches its end.
            switch rule.window {
            case .all: return originals + created
            case .unknown: return originals
            case .range(let start, let size):
                let listed = (total ?? (start + pageCount + created.count)) - created.count
                var page = originals
                for (offset, item) in created.enumerated() {
                    let position = listed + offset
                    if position >= start && position < start + size && page.count < size { page.append(item) }
                }
                return page
            }
        }
        let paths = rule.sortPaths
        func values(_ item: Item) -> [JSONValue?] {
            if let record = item.record { return paths.map { JSONServerRules.value(at: $0, in: record) } }
            guard let range = item.range else { return [] }
            return paths.map { JSONServerRules.value(at: $0, in: body, range: range) }
        }
        var page = originals
        var keys = originals.map(values)
        let firstPage: Bool
        var size = Int.max
        switch rule.window {
        case .all: firstPage = true
        case .unknown: return originals
        case .range(let start, let pageSize):
            firstPage = start == 0
            size = pageSize
        }
        let full = originals.count >= size
        for item in created {
            let key = values(item)
            // After every record it does not sort before (a new record comes after its equals).
            let index = keys.firstIndex { rule.compare(key, $0) < 0 } ?? keys.endIndex
            if index == 0 && !firstPage && !page.isEmpty { continue }  // On an earlier page.
            if index == keys.endIndex && full { continue }  // On a later page.
            page.insert(item, at: index)
            keys.insert(key, at: index)
        }
        return Array(page.prefix(size))
    }

    /// The members of the object at `range` of `body`.
    private static func members(_ body: Data, _ range: Range<Int>) -> [String: JSONValue]? {
        guard case .object(let members)? = JSONServerRules.parse(body[range]) else { return nil }
        return members
    }

    /// The answer's header fields for a body the overlay rewrote: without those that described
    /// the server's bytes (`ETag`, `Last-Modified`, `Content-Length`, `Content-Encoding`).
    private static func edited(_ headers: HTTPHeaders) -> HTTPHeaders {
        var headers = headers
        for field in ["ETag", "Last-Modified", "Content-Length", "Content-Encoding"] { headers.remove(field) }
        return headers
    }
}
