import Depot
import Foundation

/// The rules of stored answers: what is kept, when it replaces a failure, and how it is
/// served.
enum StoredAnswer {
    /// Header fields never stored: they set or carry credentials.
    static let unstoredHeaders: Set<String> = [
        "set-cookie", "set-cookie2", "authorization", "proxy-authorization",
    ]

    /// `response` as it is stored for `request`, or `nil` when it must not be: not a
    /// `2xx` (or a partial `206`), or marked `no-store` by either side.
    static func keepable(_ response: BackendResponse, for request: BackendRequest) -> BackendResponse? {
        guard (200..<300).contains(response.status), response.status != 206,
            !CacheControl(response.headers).noStore, !CacheControl(request.headers).noStore
        else { return nil }
        var kept = response
        kept.headers = HTTPHeaders(
            response.headers.filter { !unstoredHeaders.contains($0.name.lowercased()) })
        return kept
    }

    /// Whether `error` is one a stored answer may replace at all.
    static func mayReplace(_ error: ServiceError) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut: return true
        case .serverError, .serviceUnavailable: return (error.statusCode ?? 0) >= 500
        default: return false
        }
    }

    /// Whether `stored` is served instead of `error`: always for a failure to connect; for
    /// a `5xx` when the policy says so or the answer's `stale-if-error` still allows it. Asked
    /// only for the errors ``mayReplace(_:)`` accepts.
    static func serves(
        _ stored: StoredResponse, instead error: ServiceError, policy: OfflinePolicy, now: Date
    )
        -> Bool
    {
        switch error {
        case .cannotConnect, .noConnection, .timedOut: return true
        case .serverError, .serviceUnavailable:
            if policy.servesStoredAnswersOnServerError { return true }
            let control = CacheControl(stored.response.headers)
            guard let allowance = control.staleIfError else { return false }
            let age = Double(storedAge(stored.response)) + now.timeIntervalSince(stored.storedAt)
            return age <= Double(control.maxAge ?? 0) + Double(allowance)
        default: return false
        }
    }

    /// The stored response as it is served: with an `Age` header (RFC 9111 §5.1) counting
    /// the seconds since it was stored, plus the age it already had.
    static func served(_ stored: StoredResponse, now: Date) -> BackendResponse {
        var response = stored.response
        let elapsed = Int64(min(max(0, now.timeIntervalSince(stored.storedAt)), Double(Int32.max)))
        let age = min(Int64(storedAge(response)) + elapsed, Int64(Int32.max))
        response.headers["Age"] = String(age)
        return response
    }

    /// The `Age` a response had when it was stored: RFC 9111 delta-seconds, 0 when absent
    /// or not a non-negative number.
    static func storedAge(_ response: BackendResponse) -> Int {
        guard let text = response.headers["Age"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return 0 }
        return CacheControl.saturated(text)
    }
}

/// The `Cache-Control` directives stored answers care about.
struct CacheControl {
    var noStore = false
    var maxAge: Int?
    var staleIfError: Int?

    /// RFC 9111 §1.2.2 delta-seconds (digits, perhaps quoted), saturating at `Int32.max`;
    /// `nil` for anything else, which leaves the directive unread.
    static func deltaSeconds(_ text: Substring) -> Int? {
        let digits = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t\""))
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return saturated(digits)
    }

    /// A string of ASCII digits as a number, saturating at `Int32.max` (on every platform,
    /// 32-bit ones included).
    static func saturated(_ digits: String) -> Int {
        let significant = digits.drop { $0 == "0" }
        guard significant.count <= 10, let value = Int64(significant.isEmpty ? "0" : String(significant))
        else {
            return Int(Int32.max)
        }
        return Int(min(value, Int64(Int32.max)))
    }

    init(_ headers: HTTPHeaders) {
        for value in headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let first = parts.first else { continue }
                let name = first.trimmingCharacters(in: .whitespaces).lowercased()
                let argument = parts.count > 1 ? Self.deltaSeconds(parts[1]) : nil
                switch name {
                case "no-store": noStore = true
                case "max-age": maxAge = argument ?? maxAge
                case "stale-if-error": staleIfError = argument ?? staleIfError
                default: break
                }
            }
        }
    }
}
