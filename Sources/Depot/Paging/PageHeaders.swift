import Foundation

/// Reading of paging headers, for styles of your own: numbers such as `X-Total-Count`
/// and RFC 8288 `Link` headers.
public enum PageHeaders {
    /// The non-negative integer in header `name`, `nil` when it is absent.
    ///
    /// `PageHeaders.integer("X-Total", in: response.headers)` is `100` for `X-Total: 100`.
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

    /// The links of every `Link` header, in order; empty when there is none.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the `Link` header when one is malformed.
    public static func links(in headers: HTTPHeaders) throws(ServiceError) -> [Link] {
        var links: [Link] = []
        for value in headers.values(for: "Link") { links += try LinkHeader.parse(value) }
        return links
    }
}
