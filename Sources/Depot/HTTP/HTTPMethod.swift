/// An HTTP request method.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable, Codable {
    /// `GET`: read a resource.
    case get = "GET"
    /// `POST`: create a resource or run an action.
    case post = "POST"
    /// `PUT`: replace a resource.
    case put = "PUT"
    /// `PATCH`: change part of a resource.
    case patch = "PATCH"
    /// `DELETE`: remove a resource.
    case delete = "DELETE"
    /// `HEAD`: like `GET`, without the body.
    case head = "HEAD"
    /// `OPTIONS`: ask what a resource allows.
    case options = "OPTIONS"

    /// Whether sending the request twice has the same effect as sending it once
    /// (RFC 9110 §9.2.2); only these are retried by default.
    public var isIdempotent: Bool {
        self != .post && self != .patch
    }

    /// Creates a method from its name, in any letter case (`"get"`, `"PATCH"`).
    public init?(name: String) {
        self.init(rawValue: name.uppercased())
    }
}
