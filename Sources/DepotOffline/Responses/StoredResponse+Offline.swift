import Depot
import Foundation

/// The offline rules of stored responses: what is stored, when it replaces a failure, and how
/// it is served.
extension StoredResponse {
    /// `response` as it is stored for `request`, dated `requestedAt`, when the request was
    /// sent (without the fields that set or carry credentials: ``Depot/StoredResponse`` never
    /// keeps them; with the request's values of the fields it varies on), or `nil` when it
    /// must not be: not a `2xx` (or a partial `206`), or marked `no-store` by either side.
    /// Neither does it store a header field `redaction` names, nor a request's value of one;
    /// and a request whose URL carries one of its query items is not stored at all.
    static func storable(
        _ response: BackendResponse, for request: BackendRequest, requestedAt: Date, redaction: Redaction
    ) -> StoredResponse? {
        guard (200..<300).contains(response.status), response.status != 206,
            !CacheControl(response.headers).noStore, !CacheControl(request.headers).noStore,
            !redaction.carriesSecretInURL(request)
        else { return nil }
        var response = response
        response.headers = redaction.removingSecrets(from: response.headers)
        // The same record of the fields it varies on as a cache keeps (`Vary: *` records
        // none: the response still serves offline, and no cache reuses it).
        var varying = CachePolicy.varying(of: response, for: request) ?? [:]
        if !varying.isEmpty { varying = varying.filter { !redaction.redacts(header: $0.key) } }
        return StoredResponse(response, storedAt: requestedAt, varying: varying)
    }

    /// Whether `error` is one a stored response may replace at all.
    static func mayReplace(_ error: ServiceError) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut: return true
        case .serverError, .serviceUnavailable: return (error.statusCode ?? 0) >= 500
        default: return false
        }
    }

    /// Whether this stored response is served instead of `error`: always for a failure to
    /// connect; for a `5xx` when the policy says so or the response's `stale-if-error` still
    /// allows it. Asked only for the errors ``mayReplace(_:)`` accepts.
    func serves(instead error: ServiceError, policy: OfflinePolicy, now: Date) -> Bool {
        switch error {
        case .cannotConnect, .noConnection, .timedOut: return true
        case .serverError, .serviceUnavailable:
            if policy.servesStoredResponsesOnServerError { return true }
            let control = CacheControl(response.headers)
            guard let allowance = control.staleIfError else { return false }
            let age = Double(Self.storedAge(response)) + now.timeIntervalSince(storedAt)
            return age <= Double(control.maxAge ?? 0) + Double(allowance)
        default: return false
        }
    }

    /// The stored response as it is served: with an `Age` header (RFC 9111 §5.1) counting
    /// the seconds since ``Depot/StoredResponse/storedAt`` (when its request was sent), plus
    /// the age it already had.
    func served(now: Date) -> BackendResponse {
        var response = response
        let elapsed = Int64(min(max(0, now.timeIntervalSince(storedAt)), Double(Int32.max)))
        let age = min(Int64(Self.storedAge(response)) + elapsed, Int64(Int32.max))
        response.headers["Age"] = String(age)
        return response
    }

    /// The `Age` a response had when it was stored: RFC 9111 delta-seconds, 0 when absent
    /// or not a non-negative number.
    static func storedAge(_ response: BackendResponse) -> Int {
        guard let text = response.headers["Age"]?.trimmingHTTPWhitespace(), !text.isEmpty,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return 0 }
        return CacheControl.saturated(String(text))
    }
}
