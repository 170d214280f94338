import Foundation

/// Reading of paging headers' numbers, such as `X-Total-Count`, for styles of your own (their
/// `Link` headers: ``LinkHeader``).
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

    /// The former home of ``LinkHeader/links(in:)``, which reads every `Link` header.
    @available(*, deprecated, renamed: "LinkHeader.links(in:)")
    public static func links(in headers: HTTPHeaders) throws(ServiceError) -> [Link] {
        try LinkHeader.links(in: headers)
    }
}
