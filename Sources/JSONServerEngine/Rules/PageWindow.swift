import Depot
import Foundation

/// `_page` and `_limit`, as json-server's `getPage` reads them: the page number is
/// at least 1, and a `_limit` that is missing, `0` or not a number is 10 (a
/// negative one is kept, and slices as JavaScript's `Array.slice` does).
package struct PageWindow {
    package let number: Int
    package let size: Int
    package let total: Int
    package let range: Range<Int>
    /// `number * size`, unclamped: json-server offers `next` while it is below `total`.
    private let end: Int

    package init(query: JSONServerQuery, total: Int) {
        (number, size) = Self.numberAndSize(query)
        self.total = total
        let (start, overflowA) = (number - 1).multipliedReportingOverflow(by: size)
        let (end, overflowB) = number.multipliedReportingOverflow(by: size)
        self.end = overflowB ? (size > 0 ? Int.max : Int.min) : end
        range = overflowA || overflowB ? total..<total : Self.slice(total, start: start, end: end)
    }

    /// The page number (at least 1) and size (`_limit`; 10 when missing, `0` or not a number).
    package static func numberAndSize(_ query: JSONServerQuery) -> (number: Int, size: Int) {
        let limit = JSText.parseInt(query.limit) ?? 0
        return (max(JSText.parseInt(query.page) ?? 1, 1), limit != 0 ? limit : 10)
    }

    /// `<…_page=1…>; rel="first", <…>; rel="prev", <…>; rel="next", <…>; rel="last"`:
    /// no `prev` on the first page, no `next` on the last, no `first` and `last` when
    /// the page holds every item, nothing when the page is empty (as json-server does).
    package func linkHeader(query items: [URLQueryItem], url: (_ encodedQuery: String) -> String) -> String? {
        guard !range.isEmpty else { return nil }
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
    package static func slice(_ count: Int, start: Int, end: Int) -> Range<Int> {
        var lower = start < 0 ? max(count + start, 0) : min(start, count)
        var upper = end > count ? count : end
        if upper < 0 { upper = max(count + upper, 0) }
        if lower > upper { lower = upper }
        return lower..<upper
    }
}
