import Foundation

/// Parsing of RFC 8288 `Link` header values.
public enum LinkHeader {
    /// The links in a `Link` header value, one ``Link`` per relation type.
    ///
    /// `<https://api.example.com/posts?page=2>; rel="next", <…?page=5>; rel="last"`
    /// gives a `next` and a `last` link; `rel="next last"` gives both for one target.
    /// Parameters other than `rel`, `type` and `title` are ignored.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the `Link` header when the value
    ///   is not a list of `<target>; param=value` entries.
    public static func parse(_ value: String) throws(ServiceError) -> [Link] {
        var scanner = LinkScanner(Array(value.unicodeScalars))
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

/// A minimal scanner over the characters of a header value.
private struct LinkScanner {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    var isAtEnd: Bool { index >= scalars.count }

    mutating func skipSpace() {
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
    }

    mutating func take(_ scalar: Unicode.Scalar) -> Bool {
        guard index < scalars.count, scalars[index] == scalar else { return false }
        index += 1
        return true
    }

    mutating func take(until end: Unicode.Scalar) -> String? {
        guard let stop = scalars[index...].firstIndex(of: end) else { return nil }
        defer { index = stop }
        return String(String.UnicodeScalarView(scalars[index..<stop]))
    }

    /// An RFC 9110 token (letters, digits and `!#$%&'*+-.^_`|~`).
    mutating func token() -> String? {
        let start = index
        while index < scalars.count, Self.isTokenCharacter(scalars[index]) { index += 1 }
        return index > start ? String(String.UnicodeScalarView(scalars[start..<index])) : nil
    }

    mutating func quotedString() -> String? {
        guard take("\"") else { return nil }
        var result = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\"" { return String(result) }
            if scalar == "\\", index < scalars.count {
                result.append(scalars[index])
                index += 1
            } else {
                result.append(scalar)
            }
        }
        return nil
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII
            && (CharacterSet.alphanumerics.contains(scalar)
                || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
    }
}
