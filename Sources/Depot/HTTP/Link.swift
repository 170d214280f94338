import Foundation

/// A typed link to a related resource, from an RFC 8288 `Link` header, a paging
/// envelope, or a hypermedia document's `_links`.
public struct Link: Sendable, Hashable {
    /// The relation, such as `next`, `self` or `rent`.
    public var rel: String
    /// The target: an absolute URL, or a path relative to the API's base. May be a
    /// URI template when ``templated`` is `true`.
    public var href: String
    /// The method to follow it with; `GET` unless the server says otherwise.
    public var method: HTTPMethod
    /// The media type the target answers with, when the server names one.
    public var type: String?
    /// Whether ``href`` is an RFC 6570 URI template (`/movies{?page}`).
    public var templated: Bool
    /// The body the server expects when following the link; string values may be
    /// templates such as `"{rating}"`.
    public var parameters: [String: JSONValue]?
    /// A human-readable label.
    public var title: String?
    /// A URL that explains the link's deprecation, when it is deprecated.
    public var deprecation: String?

    /// Creates a link.
    public init(
        rel: String,
        href: String,
        method: HTTPMethod = .get,
        type: String? = nil,
        templated: Bool = false,
        parameters: [String: JSONValue]? = nil,
        title: String? = nil,
        deprecation: String? = nil
    ) {
        self.rel = rel
        self.href = href
        self.method = method
        self.type = type
        self.templated = templated
        self.parameters = parameters
        self.title = title
        self.deprecation = deprecation
    }
}

extension Collection where Element == Link {
    /// The first link with relation `rel` (compared without regard to case).
    public subscript(rel rel: String) -> Link? {
        first { $0.rel.caseInsensitiveEquals(rel) }
    }
}
