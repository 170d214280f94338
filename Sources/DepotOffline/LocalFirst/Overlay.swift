import Depot
import Foundation
import JSONServerEngine

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
        // Writes the server accepted (laid over an older stored answer) are not counted.
        let unsent = writes.count { $0.sentAt == nil }
        if let record {
            return Laid(
                result: .success(
                    BackendResponse(status: 200, headers: headers, body: JSONServerRules.encode(record))),
                applied: unsent)
        }
        // Gone only when a write removed it; a PATCH alone tells nothing of a record unseen.
        guard known || writes.contains(where: { $0.method == .delete || $0.method == .post }) else {
            return nil
        }
        return Laid(result: .failure(goneError(for: request)), applied: unsent)
    }

    /// An empty listing: what the server holds of a record created offline.
    static let emptyListing = BackendResponse(
        status: 200, headers: BackendResponse.jsonHeaders(), body: Data("[]".utf8))

    /// Whether `query` filters on a record created offline that the server has not named
    /// (`comments?postId=-1`): no answer of the server can hold what it lists.
    static func filtersOnLocalRecord(_ query: [URLQueryItem], pending: PendingWrites) -> Bool {
        query.contains { item in
            item.value.map { pending.createsRecord(withID: $0) } ?? false
        }
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
        /// Where the element lies in the answer, when it is unchanged.
        var range: Range<Int>?
        /// The record, when a write changed or made it.
        var record: [String: JSONValue]?
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
        guard !writes.isEmpty, let elements = JSONServerRules.elementsWithIDs(ofArray: body) else {
            return nil
        }
        let ranges = elements.map(\.element)
        let rule = ListingRule(query: query)
        // Where each record a write changes lies in the answer.
        let targets = Set(writes.lazy.compactMap(\.recordID))
        var positions: [String: Int] = [:]
        if !targets.isEmpty {
            for (position, element) in elements.enumerated() {
                if let id = element.id, targets.contains(id) { positions[id] = position }
            }
        }
        var total = response.headers["X-Total-Count"].flatMap { Int($0) }
        var changed: [Int: [String: JSONValue]] = [:]
        var removed = Set<Int>()
        var created: [(id: String?, record: [String: JSONValue], counted: Bool)] = []
        // Writes the server accepted (laid over an older stored answer) are not counted, nor
        // creates the query does not admit.
        var applied = 0
        for write in writes {
            let counted = write.sentAt == nil
            if write.method == .post {
                guard let record = write.createdRecord else { continue }
                if let id = write.recordID, let position = positions[id], !removed.contains(position) {
                    // The answer holds it already (the server had it when it answered).
                    changed[position] = record
                    if counted { applied += 1 }
                } else {
                    created.append((write.recordID, record, counted))
                }
            } else if let id = write.recordID, let local = created.firstIndex(where: { $0.id == id }) {
                if counted { created[local].counted = true }
                if let next = write.applied(to: created[local].record) {
                    created[local].record = next
                } else {
                    created.remove(at: local)
                }
            } else if let id = write.recordID, let position = positions[id], !removed.contains(position) {
                if counted { applied += 1 }
                let current = changed[position] ?? Self.members(body, ranges[position])
                if let next = write.applied(to: current) {
                    changed[position] = next
                } else {
                    changed[position] = nil
                    removed.insert(position)
                }
            }
        }
        // The records the writes changed or made, held to the query's filters (an equality
        // filter on a field no listed record has is dropped, as json-server drops it).
        let known = { (path: String) in
            ranges.contains { JSONServerRules.value(at: path, in: body, range: $0) != nil }
                || changed.values.contains { JSONServerRules.value(at: path, in: $0) != nil }
                || created.contains { JSONServerRules.value(at: path, in: $0.record) != nil }
        }
        for (position, record) in changed where !rule.admits(record, isKnown: known) {
            removed.insert(position)
        }
        total = total.map { $0 - removed.count }
        let admittedCreates = created.filter { rule.admits($0.record, isKnown: known) }
        applied += admittedCreates.count { $0.counted }
        let admitted = admittedCreates.map(\.record)
        total = total.map { $0 + admitted.count }
        var originals: [Item] = []
        originals.reserveCapacity(ranges.count)
        for (position, range) in ranges.enumerated() where !removed.contains(position) {
            originals.append(Item(range: changed[position] == nil ? range : nil, record: changed[position]))
        }
        let placed = place(
            admitted.map { Item(range: nil, record: $0) }, among: originals, rule: rule, body: body,
            total: total,
            pageCount: ranges.count)
        var headers = edited(response.headers)
        if let total { headers["X-Total-Count"] = String(total) }
        return Laid(
            result: .success(
                BackendResponse(status: response.status, headers: headers, body: array(placed, from: body))),
            applied: applied)
    }

    /// The JSON array of `items`: a changed or made record written anew, and each run of
    /// unchanged neighbours copied from `body` in one piece, with the separators between them.
    private static func array(_ items: [Item], from body: Data) -> Data {
        var data = Data(capacity: body.count + 256)
        data.append(UInt8(ascii: "["))
        body.withUnsafeBytes { raw in
            var run: Range<Int>?
            func flush() {
                if let current = run {
                    data.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[current]))
                }
                run = nil
            }
            for (offset, item) in items.enumerated() {
                if let range = item.range, let current = run,
                    items[offset - 1].range?.upperBound == current.upperBound,
                    Self.isSeparator(raw[current.upperBound..<range.lowerBound])
                {
                    // The next element of the answer: extend the run over the separator.
                    run = current.lowerBound..<range.upperBound
                    continue
                }
                flush()
                if offset > 0 { data.append(UInt8(ascii: ",")) }
                if let range = item.range {
                    run = range
                } else if let record = item.record {
                    data.append(JSONServerRules.encode(record))
                }
            }
            flush()
        }
        data.append(UInt8(ascii: "]"))
        return data
    }

    /// `created` placed among `originals` (the page's records, in the server's order) as the
    /// query places new records, keeping only those whose place is within the page.
    private static func place(
        _ created: [Item], among originals: [Item], rule: ListingRule, body: Data, total: Int?, pageCount: Int
    ) -> [Item] {
        guard !created.isEmpty else { return originals }
        if !rule.isSorted {
            // Last in the listing: on this page when the page reaches its end.
            if rule.window == .all { return originals + created }
            guard let (start, size) = rule.window.knownRange else { return originals }
            // Positions near `Int.max` (a query's `_limit=99999999999999999999`, a server's
            // `X-Total-Count`) place nothing rather than overflow.
            let counted: Int
            if let total {
                counted = total
            } else {
                let (estimate, overflow) = start.addingReportingOverflow(pageCount + created.count)
                guard !overflow else { return originals }
                counted = estimate
            }
            let (listed, overflow) = counted.subtractingReportingOverflow(created.count)
            guard !overflow else { return originals }
            let end = start + size  // `knownRange` gives no part whose end overflows.
            var page = originals
            for (offset, item) in created.enumerated() {
                let (position, overflow) = listed.addingReportingOverflow(offset)
                if !overflow && position >= start && position < end && page.count < size { page.append(item) }
            }
            return page
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
        if rule.window == .all {
            firstPage = true
        } else {
            guard let (start, pageSize) = rule.window.knownRange else { return originals }
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

    /// Whether `bytes` is what lies between two neighbouring elements of an array: one comma
    /// and white space (so no element was left out between them).
    private static func isSeparator(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        var commas = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: ","): commas += 1
            case 0x20, 0x0A, 0x0D, 0x09: continue
            default: return false
            }
        }
        return commas == 1
    }

    /// The answer's header fields for a body the overlay rewrote: without those that described
    /// the server's bytes (`ETag`, `Last-Modified`, `Content-Length`, `Content-Encoding`).
    private static func edited(_ headers: HTTPHeaders) -> HTTPHeaders {
        var headers = headers
        for field in ["ETag", "Last-Modified", "Content-Length", "Content-Encoding"] { headers.remove(field) }
        return headers
    }
}
