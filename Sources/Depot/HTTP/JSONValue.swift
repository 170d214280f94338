import Foundation

/// Any JSON value, for bodies whose shape is not a Swift type: link parameters,
/// records in `InMemoryBackend`, ad-hoc patches.
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value.
    ///
    /// Containers are tried before scalars: each failed try costs the decoder an error
    /// that carries the coding path, so trying four scalar types at every level of a
    /// deeply nested document made decoding it cubic in its depth (a 2 KB body nested
    /// 500 deep took over a second); now a nested array or object is found at the
    /// first or second try.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object; `nil` for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when this is one (or a double with no fraction).
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value): return value.rounded() == value ? Int(exactly: value) : nil
        default: return nil
        }
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }
}

// Literals, so that values read as JSON: `["rating": 5, "title": "Alien", "tags": ["a"]]`.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A number with a fraction.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// An object of `members`, `nil` ones written as `null`: the body of a `PATCH` spelled
    /// as a dictionary literal (`["title": "a", "summary": nil]`).
    init(_ members: [String: JSONValue?]) {
        self = .object(members.mapValues { $0 ?? .null })
    }
}

extension JSONValue {
    /// This value decoded as `type` by `coding`'s decoder: a local id as the entity's id type
    /// (`localID.decoded(as: Post.ID.self)`), a local record as the entity, with the same key
    /// and date strategies the repository decodes answers with.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` when the value does not decode as `type`.
    public func decoded<T: Decodable>(as type: T.Type = T.self, coding: JSONCoding = .default)
        throws(ServiceError) -> T
    {
        // The usual ids, without a round trip through bytes.
        switch self {
        case .int(let value): if let id = value as? T { return id }
        case .string(let value): if let id = value as? T { return id }
        default: break
        }
        do {
            // Written as stored (keys as the app's encoder wrote them), read as the app reads.
            return try coding.decoder.decode(T.self, from: JSONEncoder().encode(self))
        } catch {
            throw JSONCoding.failure(error, decoding: T.self)
        }
    }
}
