import Depot
import Foundation

/// Which part of a listing a query shows, by json-server's rules: `_page` and `_limit` (as its
/// `getPage` reads them), else `_start` and `_end`, else `_start` and `_limit`; the whole listing
/// otherwise (`_start` alone slices nothing).
///
/// One reading of the query for both its readers: InMemoryBackend, which slices the listing it
/// holds (``range(total:)``), and DepotOffline's overlay, which knows only the part the server
/// answered (``knownRange``).
package enum ListingWindow: Equatable {
    /// The whole listing.
    case all
    /// Page `number` (at least 1) of `size` records: `_limit`, 10 when it is missing, `0` or not a
    /// number (a negative one is kept, and slices as JavaScript's `Array.slice` does).
    case page(number: Int, size: Int)
    /// Positions `start..<end` as lodash's `_.slice` reads them: negative positions count from
    /// the end.
    case slice(start: Int, end: Int)

    /// The part `query` shows.
    package init(_ query: JSONServerQuery) {
        let start = JSText.parseInt(query.start) ?? 0
        if JSONServerQuery.isSet(query.page) {
            let limit = JSText.parseInt(query.limit) ?? 0
            self = .page(number: max(JSText.parseInt(query.page) ?? 1, 1), size: limit != 0 ? limit : 10)
        } else if JSONServerQuery.isSet(query.end) {
            self = .slice(start: start, end: JSText.parseInt(query.end) ?? 0)
        } else if JSONServerQuery.isSet(query.limit) {
            let end =
                JSText.parseInt(query.limit).map { limit in
                    let (sum, overflow) = start.addingReportingOverflow(limit)
                    return overflow ? (limit > 0 ? Int.max : Int.min) : sum
                } ?? 0
            self = .slice(start: start, end: end)
        } else {
            self = .all
        }
    }

    /// The positions shown of a listing of `total` records; `nil` for the whole listing.
    package func range(total: Int) -> Range<Int>? {
        switch self {
        case .all:
            return nil
        case .page(let number, let size):
            let (start, overflowA) = (number - 1).multipliedReportingOverflow(by: size)
            let (end, overflowB) = number.multipliedReportingOverflow(by: size)
            return overflowA || overflowB ? total..<total : Self.slice(total, start: start, end: end)
        case .slice(let start, let end):
            return Self.slice(total, start: start, end: end)
        }
    }

    /// Where the part starts and how many records it holds at most, when that is known without
    /// the whole listing; `nil` for the whole listing, for a part counted from its end, and for
    /// one whose end is past `Int.max` (`start + size` never overflows).
    package var knownRange: (start: Int, size: Int)? {
        switch self {
        case .all:
            return nil
        case .page(let number, let size):
            let (start, overflow) = (number - 1).multipliedReportingOverflow(by: size)
            guard size > 0, !overflow, !start.addingReportingOverflow(size).overflow else { return nil }
            return (start, size)
        case .slice(let start, let end):
            return start >= 0 && end >= start ? (start, end - start) : nil
        }
    }

    /// For a page of a listing of `total` records, its `Link` header as json-server writes it:
    /// `<…_page=1…>; rel="first", <…>; rel="prev", <…>; rel="next", <…>; rel="last"`, with no
    /// `prev` on the first page, no `next` on the last, no `first` and `last` when the page
    /// holds every record, nothing when the page is empty; `nil` for any other part.
    package func linkHeader(total: Int, query items: [URLQueryItem], url: (_ encodedQuery: String) -> String)
        -> String?
    {
        guard case .page(let number, let size) = self, let range = range(total: total), !range.isEmpty else {
            return nil
        }
        // `number * size`, unclamped: json-server offers `next` while it is below `total`.
        let (product, overflow) = number.multipliedReportingOverflow(by: size)
        let end = overflow ? (size > 0 ? Int.max : Int.min) : product
        var links: [(rel: String, page: Int)] = []
        let isPartial = range.count != total
        if isPartial { links.append(("first", 1)) }
        if number > 1 { links.append(("prev", number - 1)) }
        if end < total { links.append(("next", number + 1)) }
        if isPartial { links.append(("last", Int((Double(total) / Double(size)).rounded(.up)))) }
        guard !links.isEmpty else { return nil }
        return links.map { link in
            "<\(url(Self.query(items, page: link.page)))>; rel=\"\(link.rel)\""
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
