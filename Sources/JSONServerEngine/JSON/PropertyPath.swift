import Depot

/// Property paths in query parameters (`author.name`, `tags.0`), read as lodash's
/// `_.get` and `_.has` read them: a member named exactly `path` first, then the
/// dotted path through objects and array indexes.
package enum PropertyPath {
    /// The value at `path` in `members`, `nil` when there is none.
    package static func value(_ members: [String: JSONValue], _ path: String) -> JSONValue? {
        if let direct = members[path] { return direct }
        guard let dot = path.firstIndex(of: ".") else { return nil }
        return members[String(path[..<dot])].flatMap { descend($0, path[path.index(after: dot)...]) }
    }

    /// The value at `path` in the JSON object `bytes` (a stored record), parsing only
    /// the member the path starts with.
    package static func value(in bytes: UnsafeRawBufferPointer, _ path: String) -> JSONValue? {
        if let direct = JSONParser.member(path, in: bytes) { return direct }
        guard let dot = path.firstIndex(of: ".") else { return nil }
        return JSONParser.member(String(path[..<dot]), in: bytes).flatMap {
            descend($0, path[path.index(after: dot)...])
        }
    }

    /// The value at the dotted `rest` of a path inside `value`.
    private static func descend(_ value: JSONValue, _ rest: Substring) -> JSONValue? {
        var current = value
        for component in rest.split(separator: ".", omittingEmptySubsequences: false) {
            switch current {
            case .object(let object):
                guard let next = object[String(component)] else { return nil }
                current = next
            case .array(let elements):
                guard let position = Int(component), elements.indices.contains(position) else { return nil }
                current = elements[position]
            default:
                return nil
            }
        }
        return current
    }
}
