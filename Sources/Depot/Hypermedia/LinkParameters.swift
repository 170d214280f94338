import Foundation

/// Fills the templates in a link's `parameters` with the caller's values.
///
/// A string that is exactly one variable (`"{rating}"`) becomes the caller's value
/// with its JSON type (`5` stays a number, `["a"]` an array); a string with variables
/// inside text (`"Rated {rating} by {user}"`) gets their text substituted. Other
/// values, and braces that do not enclose a variable name, are kept as they are.
enum LinkParameters {
    /// `parameters` with every `{name}` replaced.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` naming the variables the caller
    ///   did not give (a body with `"{rating}"` left in it would mislead the server).
    static func fill(
        _ parameters: [String: JSONValue], with values: [String: JSONValue], rel: String
    ) throws(ServiceError) -> [String: JSONValue] {
        var missing: [String] = []
        let filled = parameters.mapValues { fill($0, values, &missing) }
        if !missing.isEmpty {
            let names = Array(Set(missing)).sorted().map { "{\($0)}" }.joined(separator: ", ")
            throw .invalidRequest("the \"\(rel)\" link needs a value for \(names)")
        }
        return filled
    }

    private static func fill(_ value: JSONValue, _ values: [String: JSONValue], _ missing: inout [String])
        -> JSONValue
    {
        switch value {
        case .string(let text):
            return fill(text, values, &missing)
        case .array(let elements):
            return .array(elements.map { fill($0, values, &missing) })
        case .object(let members):
            return .object(members.mapValues { fill($0, values, &missing) })
        case .null, .bool, .int, .double:
            return value
        }
    }

    private static func fill(_ text: String, _ values: [String: JSONValue], _ missing: inout [String])
        -> JSONValue
    {
        let pieces = split(text)
        if pieces.count == 1, case .variable(let name) = pieces[0] {
            guard let value = values[name] else {
                missing.append(name)
                return .string(text)
            }
            return value
        }
        guard pieces.contains(where: \.isVariable) else { return .string(text) }
        var result = ""
        for piece in pieces {
            switch piece {
            case .text(let literal): result += literal
            case .variable(let name):
                if let text = values[name]?.templateText {
                    result += text
                } else {
                    missing.append(name)
                }
            }
        }
        return .string(result)
    }

    private enum Piece {
        case text(String)
        case variable(String)

        var isVariable: Bool {
            if case .variable = self { return true }
            return false
        }
    }

    /// Splits text into literal runs and `{name}` variables, in one pass: a name has no
    /// braces, so a `{` whose name characters are not closed by `}` is literal and the
    /// scan goes on after it (each character is read at most twice, whatever the braces).
    private static func split(_ text: String) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(text)
        var literal = ""
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            let afterOpen = rest.index(after: open)
            let name = rest[afterOpen...].prefix(while: isNameCharacter)
            guard !name.isEmpty, name.endIndex < rest.endIndex, rest[name.endIndex] == "}" else {
                literal.append("{")
                rest = rest[afterOpen...]
                continue
            }
            if !literal.isEmpty { pieces.append(.text(literal)) }
            literal = ""
            pieces.append(.variable(String(name)))
            rest = rest[rest.index(after: name.endIndex)...]
        }
        literal += rest
        if !literal.isEmpty { pieces.append(.text(literal)) }
        return pieces
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isASCII
            && (character.isLetter || character.isNumber || character == "_" || character == ".")
    }
}
