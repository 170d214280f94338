import Foundation

/// How a server pages a listing: what to ask for, and how to read the answer.
///
/// A ``PagedRepository`` picks one in its `pagination` property; the default is
/// ``jsonServer``.
///
/// ```swift
/// struct PostRepository: PagedRepository {
///     typealias Entity = Post
///     let backend: any Backend
///     let name = "posts"
///     let pagination = Pagination.jsonServer
/// }
/// ```
public struct Pagination: Sendable {
    /// The rules behind this pagination.
    public let style: any PaginationStyle

    /// A pagination with your own rules.
    public init(_ style: any PaginationStyle) {
        self.style = style
    }

    /// json-server's convention: `_page` and `_limit`, answered with
    /// `X-Total-Count` and an RFC 8288 `Link` header.
    public static let jsonServer = Pagination(JSONServerPagination())
}

/// The rules of one paging convention.
public protocol PaginationStyle: Sendable {
    /// The query items that ask for page `number` (from 1) of `size` items.
    func query(page number: Int, size: Int) -> [URLQueryItem]

    /// Reads where the items are and what the server said about the other pages.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the header or key that is malformed.
    func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError) -> PageLayout
}

/// What a ``PaginationStyle`` reads from a page's response, before its items are decoded.
public struct PageLayout: Sendable, Hashable {
    /// The key path of the items array in the body; empty when the body is the array.
    public var itemsPath: [String]
    /// The total number of items, when the server says.
    public var total: Int?
    /// Whether a next page exists, when the server says so directly.
    public var hasNext: Bool?
    /// The links the server sent.
    public var links: [Link]

    /// Creates a layout.
    public init(itemsPath: [String] = [], total: Int? = nil, hasNext: Bool? = nil, links: [Link] = []) {
        self.itemsPath = itemsPath
        self.total = total
        self.hasNext = hasNext
        self.links = links
    }
}

/// json-server 0.17's paging: `_page` and `_limit`, answered with `X-Total-Count`
/// and a `Link` header with `first`, `prev`, `next` and `last`.
public struct JSONServerPagination: PaginationStyle {
    /// The query parameter for the page number.
    public var pageParameter: String
    /// The query parameter for the page size.
    public var sizeParameter: String

    /// Creates the style, with other parameter names if your server renamed them.
    public init(pageParameter: String = "_page", sizeParameter: String = "_limit") {
        self.pageParameter = pageParameter
        self.sizeParameter = sizeParameter
    }

    /// `_page=number&_limit=size`.
    public func query(page number: Int, size: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: pageParameter, value: String(number)),
            URLQueryItem(name: sizeParameter, value: String(size)),
        ]
    }

    /// Reads `X-Total-Count` and `Link`; the body is the items array.
    public func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
        -> PageLayout
    {
        let total = try PageHeaders.integer("X-Total-Count", in: response.headers)
        var links: [Link] = []
        for value in response.headers.values(for: "Link") { links += try LinkHeader.parse(value) }
        let hasNext: Bool? =
            total.map { number * size < $0 } ?? (links.isEmpty ? nil : links[rel: "next"] != nil)
        return PageLayout(total: total, hasNext: hasNext, links: links)
    }
}

/// Reading of numeric paging headers.
public enum PageHeaders {
    /// The non-negative integer in header `name`, `nil` when it is absent.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the header when it is present
    ///   but not a non-negative integer.
    public static func integer(_ name: String, in headers: HTTPHeaders) throws(ServiceError) -> Int? {
        guard let text = headers[name] else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw .decoding(
                DecodingFailure(
                    type: "Int", codingPath: "header \(name)",
                    description: "expected a non-negative integer, got \"\(text.prefix(100))\""))
        }
        return value
    }
}
