import Foundation

/// The header fields and query items that carry secrets: what ``LoggingMiddleware`` masks and
/// what DepotOffline never writes to disk. Names compare without regard to case; add your API's
/// own to ``default`` and give the one list to both (the article *Using Middleware*):
///
/// ```swift
/// let redaction = Redaction.default.adding(headers: ["X-Tenant-Key"], queryItems: ["sig"])
/// ```
public struct Redaction: Sendable, Hashable {
    /// The header field names that carry secrets, lowercased.
    public private(set) var headers: Set<String>
    /// The query item names that carry secrets, lowercased.
    public private(set) var queryItems: Set<String>

    /// What stands in for a masked value.
    public static let mask = "<redacted>"

    /// The usual secrets: the fields `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie`, `Set-Cookie2`, `X-Api-Key`, `Api-Key`, `X-Auth-Token`, `X-Access-Token`,
    /// `X-Amz-Security-Token`, and the query items `access_token`, `refresh_token`,
    /// `id_token`, `token`, `api_key`, `apikey`, `client_secret`, `password`, `sig`,
    /// `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`.
    public static let `default` = Redaction(
        headers: [
            "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Set-Cookie2", "X-Api-Key",
            "Api-Key", "X-Auth-Token", "X-Access-Token", "X-Amz-Security-Token",
        ],
        queryItems: [
            "access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "client_secret",
            "password", "sig", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
        ])

    /// The header fields every redaction names, whatever else it lists: they carry or set
    /// credentials.
    public static let credentialHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "set-cookie2",
    ]

    /// A redaction of these names and of ``credentialHeaders``, which every redaction names
    /// (see ``default`` for the usual secrets, and ``adding(headers:queryItems:)`` to extend
    /// it).
    public init(headers: Set<String> = [], queryItems: Set<String> = []) {
        self.headers = Self.credentialHeaders.union(headers.map { $0.lowercased() })
        self.queryItems = Set(queryItems.map { $0.lowercased() })
    }

    /// This redaction and these names too.
    public func adding(headers: Set<String> = [], queryItems: Set<String> = []) -> Redaction {
        var result = self
        result.headers.formUnion(headers.map { $0.lowercased() })
        result.queryItems.formUnion(queryItems.map { $0.lowercased() })
        return result
    }

    /// Whether the header field `name` carries a secret.
    public func redacts(header name: String) -> Bool {
        name.isCaseInsensitivelyIn(headers)
    }

    /// Whether the query item `name` carries a secret.
    public func redacts(queryItem name: String) -> Bool {
        name.isCaseInsensitivelyIn(queryItems)
    }

    /// `headers` without the fields that carry secrets: what may be written to disk.
    public func removingSecrets(from headers: HTTPHeaders) -> HTTPHeaders {
        guard headers.contains(where: { redacts(header: $0.name) }) else { return headers }
        return HTTPHeaders(headers.filter { !redacts(header: $0.name) })
    }

    /// `headers` with the values of the fields that carry secrets replaced by ``mask``: what
    /// may be logged.
    public func masking(_ headers: HTTPHeaders) -> HTTPHeaders {
        guard headers.contains(where: { redacts(header: $0.name) }) else { return headers }
        return HTTPHeaders(
            headers.fields.map { field in
                redacts(header: field.name) ? HTTPHeaders.Field(name: field.name, value: Self.mask) : field
            })
    }

    /// `item` with its value replaced by ``mask`` when its name carries a secret.
    public func masking(_ item: URLQueryItem) -> URLQueryItem {
        guard item.value != nil, redacts(queryItem: item.name) else { return item }
        return URLQueryItem(name: item.name, value: Self.mask)
    }

    /// Whether `request` carries a secret in its URL: a query item, or a query inside its
    /// path, whose name this redaction lists. (Header fields can be removed from a request;
    /// a URL with a secret in it cannot be kept without it.)
    public func carriesSecretInURL(_ request: BackendRequest) -> Bool {
        if request.query.contains(where: { redacts(queryItem: $0.name) }) { return true }
        guard request.path.utf8.contains(UInt8(ascii: "?")) else { return false }
        return QueryString.split(request.path).query.contains { redacts(queryItem: $0.name) }
    }
}
