import Foundation

/// Query strings read the way a server reads them, shared by everything in Depot that
/// takes a URL apart (page links, the in-memory backend, logging), so that they agree.
enum QueryString {
    /// `reference` without its fragment, split into the part before `?` and the query
    /// items after it. The query never stays in the path, decodable or not: see
    /// ``parse(_:)``.
    static func split(_ reference: String) -> (path: String, query: [URLQueryItem]) {
        var text = Substring(reference)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        guard let mark = text.firstIndex(of: "?") else { return (String(text), []) }
        return (String(text[..<mark]), parse(text[text.index(after: mark)...]))
    }

    /// Parses `name=value&…`: `+` is a space, then percent-decoding. A malformed escape
    /// (`%ZZ`, a lone `%`) is kept as it is and bytes that are not UTF-8 become U+FFFD,
    /// as browsers' URL parsers read them, so no query is ever refused or lost.
    static func parse(_ text: Substring) -> [URLQueryItem] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return URLQueryItem(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : nil)
        }
    }

    /// One query component, decoded leniently (see ``parse(_:)``).
    static func decode(_ text: Substring) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index != utf8.endIndex,
                let high = hexValue(utf8[index]), utf8.index(after: index) != utf8.endIndex,
                let low = hexValue(utf8[utf8.index(after: index)])
            {
                bytes.append(high << 4 | low)
                index = utf8.index(index, offsetBy: 2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
