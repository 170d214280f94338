/// Property paths in query parameters (`author.name`, `tags.0`), read as lodash's
/// `_.get` and `_.has` read them: a member named exactly `path` first, then the
/// dotted path through objects and array indexes.
enum QueryPath {
    /// The value at `path` in `members`, `nil` when there is none.
    static func value(_ members: [String: JSONValue], _ path: String) -> JSONValue? {
        if let direct = members[path] { return direct }
        guard path.contains(".") else { return nil }
        var current = JSONValue.object(members)
        for component in path.split(separator: ".", omittingEmptySubsequences: false) {
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

    /// Whether `path` leads to a value (even `null`) in `members`.
    static func has(_ members: [String: JSONValue], _ path: String) -> Bool {
        value(members, path) != nil
    }
}
