import Foundation

/// Reading of RFC 8288 `Link` headers: every one of a response's (``links(in:)``) or one value
/// (``parse(_:)``).
public enum LinkHeader {
    /// The links of every `Link` header, in order; empty when there is none.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the `Link` header when one is malformed.
    public static func links(in headers: HTTPHeaders) throws(ServiceError) -> [Link] {
        var links: [Link] = []
        for value in headers.values(for: "Link") { links += try parse(value) }
        return links
    }

    /// The links in a `Link` header value, one ``Link`` per relation type.
    ///
    /// `<https://api.example.com/posts?page=2>; rel="next", <…?page=5>; rel="last"`
    /// gives a `next` and a `last` link; `rel="next last"` gives both for one target.
    /// Parameters other than `rel`, `type` and `title` are ignored.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the `Link` header when the value
    ///   is not a list of `<target>; param=value` entries.
    public static func parse(_ value: String) throws(ServiceError) -> [Link] {
        var scanner = LinkScanner(value)
        var links: [Link] = []
        scanner.skipSpace()
        while !scanner.isAtEnd {
            guard scanner.take("<"), let target = scanner.take(until: ">"), scanner.take(">") else {
                throw malformed(value)
            }
            var rels: [String] = []
            var type: String?
            var title: String?
            scanner.skipSpace()
            while scanner.take(";") {
                scanner.skipSpace()
                guard let name = scanner.token(), !name.isEmpty else { throw malformed(value) }
                scanner.skipSpace()
                var parameter = ""
                if scanner.take("=") {
                    scanner.skipSpace()
                    guard let parsed = scanner.quotedString() ?? scanner.token() else {
                        throw malformed(value)
                    }
                    parameter = parsed
                }
                switch name.lowercased() {
                case "rel" where rels.isEmpty:
                    rels = parameter.split(separator: " ").map(String.init)
                case "type": type = parameter
                case "title": title = parameter
                default: break
                }
                scanner.skipSpace()
            }
            for rel in rels {
                links.append(Link(rel: rel, href: target, type: type, title: title))
            }
            guard scanner.isAtEnd || scanner.take(",") else { throw malformed(value) }
            scanner.skipSpace()
        }
        return links
    }

    private static func malformed(_ value: String) -> ServiceError {
        .decoding(
            DecodingFailure(
                type: "Link", codingPath: "header Link",
                description: "malformed Link header: \(value.prefix(200))"))
    }
}

/// A minimal scanner over the UTF-8 bytes of a header value. Every delimiter is ASCII, so
/// the pieces between delimiters are whole UTF-8 and read back as the text they were.
private struct LinkScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ value: String) {
        bytes = Array(value.utf8)
    }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
            index += 1
        }
    }

    /// Consumes `delimiter` (an ASCII character) when it is next.
    mutating func take(_ delimiter: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: delimiter) else { return false }
        index += 1
        return true
    }

    mutating func take(until end: Unicode.Scalar) -> String? {
        guard let stop = bytes[index...].firstIndex(of: UInt8(ascii: end)) else { return nil }
        defer { index = stop }
        return String(decoding: bytes[index..<stop], as: UTF8.self)
    }

    /// An RFC 9110 token (letters, digits and `!#$%&'*+-.^_`|~`).
    mutating func token() -> String? {
        let start = index
        while index < bytes.count, HTTPHeaders.isTokenByte(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    mutating func quotedString() -> String? {
        guard take("\"") else { return nil }
        var result: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return String(decoding: result, as: UTF8.self) }
            if byte == UInt8(ascii: "\\"), index < bytes.count {
                result.append(bytes[index])
                index += 1
            } else {
                result.append(byte)
            }
        }
        return nil
    }
}
