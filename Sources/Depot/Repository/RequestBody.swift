import Foundation

/// The body of a request a repository sends: JSON by default, a URL-encoded form,
/// multipart form data, or raw bytes.
///
/// ```swift
/// repository.request(.post, ["oauth", "token"], body: .form([
///     ("grant_type", "password"), ("scope", "read"), ("scope", "write"),
/// ]))
/// ```
public struct RequestBody: Sendable {
    private enum Content: Sendable {
        case none
        case json(@Sendable (JSONCoding) throws(ServiceError) -> Data)
        case raw(Data, contentType: String)
    }

    private let content: Content

    private init(_ content: Content) {
        self.content = content
    }

    /// No body.
    public static let none = RequestBody(.none)

    /// `value` encoded with the repository's ``JSONCoding`` (`application/json`).
    public static func json<Value: Encodable & Sendable>(_ value: Value) -> RequestBody {
        RequestBody(.json { coding throws(ServiceError) in try coding.encode(value) })
    }

    /// Bytes sent as they are, with their media type.
    public static func data(_ data: Data, contentType: String) -> RequestBody {
        RequestBody(.raw(data, contentType: contentType))
    }

    /// `application/x-www-form-urlencoded` fields, in order; repeat a name for an
    /// array (`scope=read&scope=write`), as HTML forms and OAuth token endpoints expect.
    public static func form(_ fields: [(String, String)]) -> RequestBody {
        let encoded = fields.map { FormEncoding.encode($0.0) + "=" + FormEncoding.encode($0.1) }
            .joined(separator: "&")
        return .data(Data(encoded.utf8), contentType: "application/x-www-form-urlencoded")
    }

    /// `multipart/form-data`, for file uploads.
    public static func multipart(_ form: MultipartForm) -> RequestBody {
        .data(form.encoded(), contentType: form.contentType)
    }

    /// The bytes and their `Content-Type`, or `nil` for no body.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a JSON value cannot be encoded.
    public func encoded(with coding: JSONCoding) throws(ServiceError) -> (data: Data, contentType: String)? {
        switch content {
        case .none: return nil
        case .json(let encode): return (try encode(coding), "application/json")
        case .raw(let data, let contentType): return (data, contentType)
        }
    }
}

/// `application/x-www-form-urlencoded` escaping (WHATWG URL, "urlencoded serializer").
enum FormEncoding {
    private static let allowed = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._ ")

    static func encode(_ text: String) -> String {
        (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(
            of: " ", with: "+")
    }
}
