import Foundation

/// An RFC 6570 URI template, such as `/movies/{id}` or `/movies{?page,size}`, and its
/// expansion, at every level of the RFC (the article *Following Hypermedia Links* lists them).
///
/// ```swift
/// let search = try URITemplate("/movies{?title,genre*}")
/// search.expand(["title": "Alien", "genre": ["horror", "sci-fi"]])
/// // "/movies?title=Alien&genre=horror&genre=sci-fi"
/// ```
public struct URITemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    public let template: String
    private let parts: [Part]

    /// Parses `template`.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a brace is not closed, an
    ///   expression is empty, uses an operator the RFC reserves (`=`, `,`, `!`, `@`,
    ///   `|`), or names a variable with characters other than letters, digits, `_`,
    ///   `.` and percent-encoded triplets.
    public init(_ template: String) throws(ServiceError) {
        self.template = template
        self.parts = try URITemplateParser.parse(template)
    }

    /// The template as written.
    public var description: String { template }

    /// The names of the variables the template uses, in order of first use.
    public var variableNames: [String] {
        var seen = Set<String>()
        var names: [String] = []
        for case .expression(let expression) in parts {
            for variable in expression.variables where seen.insert(variable.name).inserted {
                names.append(variable.name)
            }
        }
        return names
    }

    /// The URI reference the template describes with `variables` substituted.
    ///
    /// Values are percent-encoded as the operator requires; variables absent from
    /// `variables` are undefined and left out.
    public func expand(_ variables: [String: Value]) -> String {
        var result = ""
        for part in parts {
            switch part {
            case .literal(let text): result += text
            case .expression(let expression): result += expression.expand(variables)
            }
        }
        return result
    }

    /// The value of a template variable: a string, a list, or an ordered list of
    /// name-value pairs (an RFC 6570 "associative array").
    ///
    /// Write them as literals: `"Alien"`, `42`, `["red", "green"]`,
    /// `["semi": ";", "dot": "."]` (pairs keep the literal's order).
    public enum Value: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
        ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
    {
        /// A single string.
        case string(String)
        /// A list of strings; an empty list is undefined.
        case list([String])
        /// Name-value pairs, in order; an empty list of pairs is undefined.
        case pairs([(name: String, value: String)])

        /// A string value.
        public init(stringLiteral value: String) {
            self = .string(value)
        }

        /// A number, expanded in decimal.
        public init(integerLiteral value: Int) {
            self = .string(String(value))
        }

        /// A list value.
        public init(arrayLiteral elements: String...) {
            self = .list(elements)
        }

        /// Pairs, in the literal's order.
        public init(dictionaryLiteral elements: (String, String)...) {
            self = .pairs(elements.map { (name: $0.0, value: $0.1) })
        }

        /// The template value for a JSON value, or `nil` (undefined) for `null`.
        ///
        /// Numbers and booleans become their JSON text, arrays become lists, and
        /// objects become pairs sorted by name (JSON objects have no order).
        public init?(_ json: JSONValue) {
            switch json {
            case .null: return nil
            case .array(let elements): self = .list(elements.compactMap(\.templateText))
            case .object(let members):
                self = .pairs(
                    members.sorted { $0.key < $1.key }.compactMap { name, value in
                        value.templateText.map { (name: name, value: $0) }
                    })
            default:
                guard let text = json.templateText else { return nil }
                self = .string(text)
            }
        }
    }

    /// A piece of a parsed template.
    fileprivate enum Part: Sendable, Hashable {
        case literal(String)
        case expression(Expression)
    }

    /// The structure is determined by the template text, which is what equality compares.
    public static func == (lhs: URITemplate, rhs: URITemplate) -> Bool {
        lhs.template == rhs.template
    }

    /// Hashes the template text.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(template)
    }
}

extension JSONValue {
    /// The text a scalar stands for in a template or a parameter: strings as they
    /// are, numbers and booleans as JSON writes them; `nil` for `null` and containers.
    var templateText: String? {
        switch self {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .double(let value):
            return value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
        case .bool(let value): return value ? "true" : "false"
        case .null, .array, .object: return nil
        }
    }
}

// MARK: - Expressions

/// One `{…}` expression: an operator and its variables.
private struct Expression: Sendable, Hashable {
    var operation: Operation
    var variables: [VariableSpec]

    func expand(_ values: [String: URITemplate.Value]) -> String {
        var result = ""
        var isFirst = true
        for variable in variables {
            guard let value = values[variable.name], let expanded = expand(variable, value) else { continue }
            result += isFirst ? operation.first : operation.separator
            isFirst = false
            result += expanded
        }
        return result
    }

    /// The expansion of one variable, or `nil` when it is undefined (RFC 6570 §3.2.1).
    private func expand(_ variable: VariableSpec, _ value: URITemplate.Value) -> String? {
        let op = operation
        switch value {
        case .string(let text):
            let prefixed = variable.prefix.map { String(text.prefix($0)) } ?? text
            guard op.isNamed else { return op.encode(prefixed) }
            return variable.name + (text.isEmpty ? op.ifEmpty : "=" + op.encode(prefixed))
        case .list(let items):
            guard !items.isEmpty else { return nil }
            if !variable.explode {
                let joined = items.map(op.encode).joined(separator: ",")
                return op.isNamed ? variable.name + "=" + joined : joined
            }
            return items.map { item in
                guard op.isNamed else { return op.encode(item) }
                return variable.name + (item.isEmpty ? op.ifEmpty : "=" + op.encode(item))
            }.joined(separator: op.separator)
        case .pairs(let pairs):
            guard !pairs.isEmpty else { return nil }
            if !variable.explode {
                let joined = pairs.map { op.encode($0.name) + "," + op.encode($0.value) }.joined(
                    separator: ",")
                return op.isNamed ? variable.name + "=" + joined : joined
            }
            return pairs.map { pair in
                let name = op.encode(pair.name)
                if op.isNamed, pair.value.isEmpty { return name + op.ifEmpty }
                return name + "=" + op.encode(pair.value)
            }.joined(separator: op.separator)
        }
    }
}

/// A variable in an expression, with its modifiers.
private struct VariableSpec: Sendable, Hashable {
    var name: String
    /// `{var:3}`: at most this many characters of a string value.
    var prefix: Int?
    /// `{list*}`: one item (or pair) per separator.
    var explode: Bool
}

/// The eight expression types of RFC 6570 §3.2 (Appendix A's table).
private enum Operation: Character, Sendable, Hashable {
    case simple = "\0"
    case reserved = "+"
    case fragment = "#"
    case label = "."
    case pathSegment = "/"
    case pathParameter = ";"
    case query = "?"
    case queryContinuation = "&"

    var first: String {
        switch self {
        case .simple, .reserved: return ""
        default: return String(rawValue)
        }
    }

    var separator: String {
        switch self {
        case .simple, .reserved, .fragment: return ","
        case .query, .queryContinuation: return "&"
        default: return String(rawValue)
        }
    }

    var isNamed: Bool {
        self == .pathParameter || self == .query || self == .queryContinuation
    }

    var ifEmpty: String {
        self == .query || self == .queryContinuation ? "=" : ""
    }

    /// Percent-encodes `text`: only unreserved characters stay, or, for `+` and `#`,
    /// reserved characters and existing percent-encoded triplets too.
    func encode(_ text: String) -> String {
        let allowsReserved = self == .reserved || self == .fragment
        return URIEncoding.encode(text, allowsReserved: allowsReserved)
    }
}

/// Percent-encoding as RFC 6570 §1.6 describes it: UTF-8, then `%XX` per byte.
enum URIEncoding {
    static func encode(_ text: String, allowsReserved: Bool) -> String {
        let bytes = Array(text.utf8)
        var result = ""
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if isUnreserved(byte) || (allowsReserved && isReserved(byte)) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else if allowsReserved, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2])
            {
                result += String(decoding: bytes[index...(index + 2)], as: UTF8.self)
                index += 2
            } else {
                result += String(format: "%%%02X", byte)
            }
            index += 1
        }
        return result
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~".utf8.contains(byte)
        }
    }

    static func isReserved(_ byte: UInt8) -> Bool {
        ":/?#[]@!$&'()*+,;=".utf8.contains(byte)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "a")...UInt8(ascii: "f"):
            return true
        default:
            return false
        }
    }
}

// MARK: - Parsing

/// Splits a template into literals and expressions (RFC 6570 §2).
private enum URITemplateParser {
    static func parse(_ template: String) throws(ServiceError) -> [URITemplate.Part] {
        var parts: [URITemplate.Part] = []
        var rest = Substring(template)
        while !rest.isEmpty {
            guard let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) else {
                parts.append(.literal(literal(rest)))
                break
            }
            if open > rest.startIndex { parts.append(.literal(literal(rest[..<open]))) }
            guard rest[open] == "{", let close = rest[open...].firstIndex(of: "}") else {
                throw malformed(template, "unbalanced braces")
            }
            parts.append(.expression(try expression(rest[rest.index(after: open)..<close], in: template)))
            rest = rest[rest.index(after: close)...]
        }
        return parts
    }

    /// Literal text, with characters a URI cannot hold percent-encoded.
    private static func literal(_ text: Substring) -> String {
        URIEncoding.encode(String(text), allowsReserved: true)
    }

    private static func expression(_ body: Substring, in template: String) throws(ServiceError) -> Expression
    {
        var body = body
        var operation = Operation.simple
        if let first = body.first, let op = Operation(rawValue: first), op != .simple {
            operation = op
            body = body.dropFirst()
        } else if let first = body.first, "=,!@|".contains(first) {
            throw malformed(template, "the operator \"\(first)\" is reserved")
        }
        guard !body.isEmpty else { throw malformed(template, "an expression is empty") }
        var variables: [VariableSpec] = []
        for spec in body.split(separator: ",", omittingEmptySubsequences: false) {
            variables.append(try variable(spec, in: template))
        }
        return Expression(operation: operation, variables: variables)
    }

    private static func variable(_ spec: Substring, in template: String) throws(ServiceError) -> VariableSpec
    {
        var name = spec
        var prefix: Int?
        var explode = false
        if name.hasSuffix("*") {
            explode = true
            name = name.dropLast()
        } else if let colon = name.firstIndex(of: ":") {
            let digits = name[name.index(after: colon)...]
            guard (1...4).contains(digits.count), digits.allSatisfy(\.isASCIIDigit), let length = Int(digits),
                length > 0
            else {
                throw malformed(template, "the prefix in \"\(spec)\" must be 1 to 9999")
            }
            prefix = length
            name = name[..<colon]
        }
        guard isVariableName(name) else { throw malformed(template, "\"\(spec)\" is not a variable name") }
        return VariableSpec(name: String(name), prefix: prefix, explode: explode)
    }

    /// `varname = varchar *( ["."] varchar )`, `varchar = ALPHA / DIGIT / "_" / pct-encoded`.
    private static func isVariableName(_ name: Substring) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.last != UInt8(ascii: ".") else {
            return false
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, URIEncoding.isHexDigit(bytes[index + 1]),
                    URIEncoding.isHexDigit(bytes[index + 2])
                else { return false }
                index += 3
                continue
            }
            if byte == UInt8(ascii: "."), bytes[index - 1] == UInt8(ascii: ".") { return false }
            let isVarChar =
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            guard isVarChar else { return false }
            index += 1
        }
        return true
    }

    private static func malformed(_ template: String, _ reason: String) -> ServiceError {
        .invalidRequest("malformed URI template \"\(template.prefix(200))\": \(reason)")
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
