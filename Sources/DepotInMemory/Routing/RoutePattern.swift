import Depot
import JSONServerEngine

/// A route's path pattern: literal segments and `:name` parameters, such as
/// `movies/:id/rentals`. A leading or trailing `/` is ignored.
struct RoutePattern: Sendable {
    private enum Segment: Sendable {
        case literal(String)
        case parameter(String)
    }

    private let segments: [Segment]

    /// Parses `pattern`; literal segments are percent-decoded, like request paths.
    init(_ pattern: String) {
        var trimmed = Substring(pattern)
        while trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        segments =
            trimmed.isEmpty
            ? []
            : trimmed.split(separator: "/", omittingEmptySubsequences: false).map { part in
                part.hasPrefix(":") && part.count > 1
                    ? .parameter(String(part.dropFirst())) : .literal(PathSegment.decode(String(part)))
            }
    }

    /// The parameters when `path` (decoded segments) matches, `nil` otherwise.
    func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, value) in zip(segments, path) {
            switch segment {
            case .literal(let literal):
                guard literal == value else { return nil }
            case .parameter(let name):
                parameters[name] = value
            }
        }
        return parameters
    }
}

/// A handler registered with ``InMemoryBackend/route(_:_:handler:)``.
struct Route: Sendable {
    let method: HTTPMethod
    let pattern: RoutePattern
    let handler: @Sendable (RouteContext) throws(ServiceError) -> BackendResponse

    /// Whether the route answers `method` (a `GET` route answers `HEAD` too).
    func answers(_ method: HTTPMethod) -> Bool {
        self.method == method || (self.method == .get && method == .head)
    }
}
