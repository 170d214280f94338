import Foundation

/// Query strings on the wire: written per RFC 3986 by every backend and read the way a
/// server reads them by everything in Depot that takes a URL apart (page links, the
/// in-memory backend, logging), so that they agree.
package enum QueryString {
    /// `name=value` pairs joined with `&`; a `nil` value gives a bare `name`. Names and
    /// values keep only unreserved characters (and `,` when `keepingCommas`, as the
    /// in-memory backend's links keep `_sort=a,b`), so `+`, `&`, `=`, `/`, `?` and spaces
    /// are all percent-encoded and reach the server as they were.
    package static func encode(keepingCommas: Bool = false, _ items: [URLQueryItem]) -> String {
        items.map { item in
            let name = component(item.name, keepingCommas: keepingCommas)
            guard let value = item.value else { return name }
            return name + "=" + component(value, keepingCommas: keepingCommas)
        }
        .joined(separator: "&")
    }

    /// `text` percent-encoded but for RFC 3986 unreserved characters (and `,`).
    package static func component(_ text: String, keepingCommas: Bool = false) -> String {
        // Fast path: `_page`, `20` and most values need no encoding, and Foundation's
        // percent-encoding costs about a microsecond per call on Linux.
        let plain = text.utf8.allSatisfy {
            PathSegment.isUnreserved($0) || (keepingCommas && $0 == UInt8(ascii: ","))
        }
        if plain { return text }
        return text.addingPercentEncoding(
            withAllowedCharacters: keepingCommas ? unreservedAndComma : unreserved)
            ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    private static let unreservedAndComma = unreserved.union(CharacterSet(charactersIn: ","))

    /// `reference` without its fragment, split into the part before `?` and the query
    /// items after it. The query never stays in the path, decodable or not: see
    /// ``parse(_:)``.
    package static func split(_ reference: String) -> (path: String, query: [URLQueryItem]) {
        // Searched as bytes, as ``PathReference`` reads a path: `#` and `?` are ASCII.
        var text = Substring(reference)
        if let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { text = text[..<hash] }
        guard let mark = text.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (String(text), []) }
        return (String(text[..<mark]), parse(text[text.utf8.index(after: mark)...]))
    }

    /// Parses `name=value&…`: `+` is a space, then percent-decoding. A component that
    /// does not decode (a malformed escape such as `%ZZ`, or escapes that are not UTF-8
    /// such as `%FF`) is kept as it was sent, spaces for `+` aside, as json-server's
    /// query parser (Express's `qs`) reads it: no query is ever refused or dropped.
    package static func parse(_ text: Substring) -> [URLQueryItem] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return URLQueryItem(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : nil)
        }
    }

    /// One query component, decoded leniently (see ``parse(_:)``).
    package static func decode(_ text: Substring) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(text)
        }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// `reference` without its query and fragment: for messages, which must not
    /// repeat a token a query may carry.
    package static func withoutQuery(_ reference: String) -> String {
        guard let end = reference.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return reference }
        return String(reference[..<end])
    }
}
