import Foundation

/// The `Cache-Control` directives Depot's stores read (RFC 9111 §5.2, RFC 5861): one reading
/// for ``CacheMiddleware`` and DepotOffline's stored responses.
package struct CacheControl: Sendable, Equatable {
    /// `no-store`: the answer must not be kept.
    package var noStore = false
    /// `no-cache`: a stored answer must not be used without the server's word (in a request:
    /// the caller wants the server's answer itself).
    package var noCache = false
    /// `max-age`, in seconds.
    package var maxAge: Int?
    /// `stale-if-error` (RFC 5861), in seconds.
    package var staleIfError: Int?

    /// The directives of every `Cache-Control` field in `headers`; a directive named twice
    /// keeps its last readable argument, and one whose argument is not delta-seconds is unread.
    package init(_ headers: HTTPHeaders) {
        for value in headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let first = parts.first else { continue }
                let name = first.trimmingHTTPWhitespace().lowercased()
                let argument = parts.count > 1 ? Self.deltaSeconds(parts[1]) : nil
                switch name {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "max-age": maxAge = argument ?? maxAge
                case "stale-if-error": staleIfError = argument ?? staleIfError
                default: break
                }
            }
        }
    }

    /// RFC 9111 §1.2.2 delta-seconds (digits, perhaps quoted), saturating at `Int32.max`;
    /// `nil` for anything else.
    package static func deltaSeconds(_ text: Substring) -> Int? {
        let digits = String(
            text.trimmingASCII {
                $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\"")
            })
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return saturated(digits)
    }

    /// A string of ASCII digits as a number, saturating at `Int32.max` (on every platform,
    /// 32-bit ones included).
    package static func saturated(_ digits: String) -> Int {
        let significant = digits.drop { $0 == "0" }
        guard significant.count <= 10, let value = Int64(significant.isEmpty ? "0" : String(significant))
        else {
            return Int(Int32.max)
        }
        return Int(min(value, Int64(Int32.max)))
    }
}
