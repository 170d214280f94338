import Foundation

/// How Depot follows HTTP redirects, for a backend whose client does not follow them
/// itself (or follows them with other rules): ask it after each answer for the request to
/// send next.
///
/// ```swift
/// var redirects = HTTPRedirectRule(first: prepared)
/// var current = prepared
/// while true {
///     let answer = try await send(current)
///     guard let next = try redirects.next(after: current, status: answer.status, headers: answer.headers)
///     else { return answer }      // not a redirect: the outcome, through ServiceError.check
///     current = next
/// }
/// ```
///
/// What it follows, how, and when it gives up: the article *Writing a Backend*.
@_spi(BackendSupport)
public struct HTTPRedirectRule: Sendable {
    /// The header fields that carry credentials and stay with their origin:
    /// `Authorization`, `Proxy-Authorization` and `Cookie`.
    public static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]
    /// The most redirects one request follows.
    public static let maximumRedirects = 10
    /// The code of the failure after too many redirects or a loop:
    /// `URLError.Code.httpTooManyRedirects` (-1007).
    public static let tooManyRedirectsCode = -1007

    /// The origin of the first request.
    private let origin: Origin?
    /// Whether a hop left the first origin.
    private var crossedOrigin = false
    /// The method and URL of every request sent so far.
    private var visited: Set<String>
    /// The redirects followed so far.
    public private(set) var count = 0

    /// The rule for a request first sent as `first`.
    public init(first: PreparedHTTPRequest) {
        origin = Origin(first.url)
        visited = [Self.key(first)]
    }

    /// Whether `status` is one of the redirects this rule follows (`301`, `302`, `303`,
    /// `307`, `308`).
    public static func isRedirect(_ status: Int) -> Bool {
        status == 301 || status == 302 || status == 303 || status == 307 || status == 308
    }

    /// The request to send next after `request` was answered with `status` and
    /// `headers`, or `nil` when the answer is the outcome (not a redirect, or no usable
    /// `Location`).
    ///
    /// - Throws: ``ServiceError/transport(code:description:)`` with
    ///   ``tooManyRedirectsCode`` past ``maximumRedirects`` hops or on a loop.
    public mutating func next(after request: PreparedHTTPRequest, status: Int, headers: HTTPHeaders)
        throws(ServiceError) -> PreparedHTTPRequest?
    {
        guard Self.isRedirect(status), let location = headers["Location"], !location.isEmpty,
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let targetOrigin = Origin(target), targetOrigin.isHTTP
        else { return nil }
        var next = request
        next.url = target
        let becomesGET =
            (status == 303 && request.method != .head)
            || ((status == 301 || status == 302) && request.method == .post)
        if becomesGET {
            next.method = .get
            next.body = Data()
            next.bodyFile = nil
            next.headers.remove("Content-Type")
            next.headers.remove("Content-Length")
        }
        if origin == nil || targetOrigin != origin { crossedOrigin = true }
        if crossedOrigin {
            for name in Self.credentialHeaders { next.headers.remove(name) }
        }
        count += 1
        guard count <= Self.maximumRedirects, visited.insert(Self.key(next)).inserted else {
            throw .transport(
                code: Self.tooManyRedirectsCode,
                description:
                    "The request was redirected too many times (a loop, or more than \(Self.maximumRedirects) redirects)."
            )
        }
        return next
    }

    private static func key(_ request: PreparedHTTPRequest) -> String {
        request.method.rawValue + " " + request.url.absoluteString
    }
}
