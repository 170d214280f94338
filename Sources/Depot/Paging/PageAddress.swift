/// Where a page is: a page number, a URL the server sent (``href(_:)``), or an opaque cursor
/// (``cursor(_:)``). ``Page/nextAddress`` says where the page after a page is, and
/// ``PagedRepository/findPage(at:number:size:query:)`` fetches it.
///
/// ```swift
/// if let next = first.nextAddress {
///     let second = try await posts.findPage(at: next, number: 2, size: 20, query: [:]).value
/// }
/// ```
public enum PageAddress: Sendable, Hashable {
    /// Page `n`, from 1, asked for with the style's page and size parameters.
    case number(Int)
    /// A URL or path the server sent (a `Link` header's `next`, an envelope's `next`),
    /// fetched as is: it already carries the page, the size and the caller's filters.
    case href(String)
    /// An opaque cursor the server sent, sent back in the style's cursor parameter.
    case cursor(String)

    /// The address a server's `next` value stands for: an absolute URL
    /// (`https://…`, `//host/…`) or a path starting with `/` is an ``href(_:)``,
    /// anything else a ``cursor(_:)``.
    ///
    /// `.href(orCursor: "https://api.example.com/posts?cursor=cD0xMA")` is an href;
    /// `.href(orCursor: "dXNlcjpXMDdRQ1JBNUU=")` is a cursor.
    public static func href(orCursor value: String) -> PageAddress {
        isLink(value) ? .href(value) : .cursor(value)
    }

    /// Page `number + 1`, or `nil` when `number` is the largest `Int` (a server that
    /// claims such a page has no page after it that can be asked for).
    static func page(after number: Int) -> PageAddress? {
        let (next, overflow) = number.addingReportingOverflow(1)
        return overflow ? nil : .number(next)
    }

    /// Whether `value` is an absolute URL or an absolute path rather than a token.
    static func isLink(_ value: String) -> Bool {
        if value.hasPrefix("/") { return true }
        guard Origin.startsWithScheme(value[...]), let colon = value.firstIndex(of: ":") else { return false }
        return value[value.index(after: colon)...].hasPrefix("//")
    }
}

extension PageAddress: CustomStringConvertible {
    /// `page 3`, `href https://…`, `cursor cD0xMA`: for messages and logs.
    public var description: String {
        switch self {
        case .number(let number): "page \(number)"
        case .href(let href): "href \(href.prefix(200))"
        case .cursor(let cursor): "cursor \(cursor.prefix(200))"
        }
    }
}
