import Foundation

/// An RFC 6454 origin: scheme, host and port, compared without regard to case and
/// with the scheme's default port filled in (`https://a` is `https://a:443`).
///
/// It is the one rule for which host may receive a request's credentials: every layer
/// that resolves a path or a link, or follows a redirect, compares origins with `==`.
package struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, lowercased.
    package let scheme: String
    /// The host, lowercased, without the brackets of an IPv6 literal.
    package let host: String
    /// The port, or the scheme's default; `nil` for a scheme with no known default and
    /// no port given.
    package let port: Int?

    /// The origin of `components`, or `nil` when they have no scheme or no host.
    package init?(_ components: URLComponents) {
        self.init(scheme: components.scheme, host: components.host, port: components.port)
    }

    /// The origin of `url`, or `nil` when it has no scheme or no host. Read from the URL's
    /// own parts, with no second parse: every request's redirects ask for it.
    package init?(_ url: URL) {
        self.init(scheme: url.scheme, host: url.host, port: url.port)
    }

    private init?(scheme: String?, host: String?, port: Int?) {
        guard let scheme = scheme?.lowercased(), !scheme.isEmpty, var host = host?.lowercased(), !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.scheme = scheme
        self.host = host
        self.port = port ?? Self.defaultPort(of: scheme)
    }

    /// Whether the scheme is `http` or `https`: the only ones a backend sends to.
    package var isHTTP: Bool { scheme == "http" || scheme == "https" }

    /// `https://host`, with the port only when it is not the scheme's default.
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let shownPort = port.flatMap { $0 == Self.defaultPort(of: scheme) ? nil : ":\($0)" } ?? ""
        return "\(scheme)://\(shownHost)\(shownPort)"
    }

    /// The port a URL of `scheme` means when it names none.
    package static func defaultPort(of scheme: String) -> Int? {
        switch scheme {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
    }

    /// Whether `reference` starts with an RFC 3986 scheme (`http:`, `https:`, …), so it
    /// is an absolute URL rather than a path. `a:b` is one; `posts/a:b` is not.
    package static func startsWithScheme(_ reference: Substring) -> Bool {
        // Read as bytes: every path a request is made from is asked, and a scheme is ASCII.
        func isLetter(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        }
        var bytes = reference.utf8.makeIterator()
        guard let first = bytes.next(), isLetter(first) else { return false }
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: ":"): return true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"),
                UInt8(ascii: "."):
                continue
            default: guard isLetter(byte) else { return false }
            }
        }
        return false
    }
}
