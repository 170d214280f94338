import Foundation

/// Finds the server's own explanation in an error body.
package enum ServerMessage {
    /// The message in `body`: for JSON, `detail`, `message`, `error` (a string, or an
    /// object with `message`), `title` (RFC 9457 problem documents put the specific
    /// explanation in `detail` and the general one in `title`); for short plain text,
    /// the text itself (never HTML or XML markup); else the ``reasonHeader`` field.
    static func extract(from body: Data, headers: HTTPHeaders) -> String? {
        fromBody(body, headers: headers) ?? headers[reasonHeader].flatMap(nonEmpty)
    }

    /// The header where a response whose body must stay as it is explains itself:
    /// `InMemoryBackend`'s 404 for a collection it does not hold keeps json-server's `{}` body
    /// and says here how to seed one. Read after the body's message, from any backend.
    package static let reasonHeader = "Depot-Reason"

    /// The message of the body alone, as ``extract(from:headers:)`` reads it.
    private static func fromBody(_ body: Data, headers: HTTPHeaders) -> String? {
        guard !body.isEmpty else { return nil }
        // A body nested past the parser's limit carries no message Depot will read.
        guard JSONNesting.firstOffsetPastLimit(in: body) == nil else { return nil }
        if let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
            guard let object = json as? [String: Any] else { return (json as? String).flatMap(nonEmpty) }
            for key in ["detail", "message", "error_description", "error", "title"] {
                if let text = object[key] as? String, !text.isEmpty { return text }
                if let nested = object[key] as? [String: Any], let text = nested["message"] as? String,
                    !text.isEmpty
                {
                    return text
                }
            }
            return nil
        }
        let type = headers["Content-Type"]?.lowercased() ?? "text/plain"
        // Without a Content-Type, an error page (`<!DOCTYPE html>…`) is markup, not a message.
        guard type.hasPrefix("text/plain"), body.count <= 512,
            let text = String(data: body, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty, !text.hasPrefix("<")
        else { return nil }
        return text
    }

    /// `text`, or `nil` when it is empty (an empty message is no message).
    private static func nonEmpty(_ text: String) -> String? {
        text.isEmpty ? nil : text
    }
}
