import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files.
///
/// ```swift
/// var form = MultipartForm()
/// form.append("title", "Holiday")
/// form.append("photo", file: jpegData, filename: "beach.jpg", contentType: "image/jpeg")
/// photos.request(.post, ["photos"], body: .multipart(form))
/// ```
public struct MultipartForm: Sendable {
    private struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var data: Data
    }

    /// The boundary between parts; random unless given.
    public let boundary: String
    private var parts: [Part] = []

    /// Creates an empty form.
    public init(boundary: String = "depot-" + UUID().uuidString) {
        self.boundary = boundary
    }

    /// The `Content-Type` to send, with the boundary.
    public var contentType: String {
        "multipart/form-data; boundary=\(boundary)"
    }

    /// Adds a text field.
    public mutating func append(_ name: String, _ value: String) {
        parts.append(Part(name: name, data: Data(value.utf8)))
    }

    /// Adds a file.
    public mutating func append(
        _ name: String, file: Data, filename: String, contentType: String = "application/octet-stream"
    ) {
        parts.append(Part(name: name, filename: filename, contentType: contentType, data: file))
    }

    /// The encoded body.
    public func encoded() -> Data {
        var body = Data()
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quote(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(Self.quote(filename))\"" }
            head += "\r\n"
            if let type = part.contentType { head += "Content-Type: \(type)\r\n" }
            body.append(Data((head + "\r\n").utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    /// Escapes a name for a quoted parameter: quotes and line breaks are percent-encoded,
    /// as browsers do (HTML's form submission algorithm).
    private static func quote(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}
