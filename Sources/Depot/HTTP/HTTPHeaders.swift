/// HTTP header fields: ordered, case-insensitive by name, and multi-valued.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add("Set-Cookie", "a=1")
/// headers.add("Set-Cookie", "b=2")
/// headers["accept"]                 // "application/json"
/// headers.values(for: "set-cookie") // ["a=1", "b=2"]
/// ```
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// One header line.
    public struct Field: Sendable, Hashable {
        /// The name as it was given; compared without regard to case.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, in the order they were added.
    public private(set) var fields: [Field]

    /// Creates headers from fields, keeping their order and repeats.
    public init(_ fields: [Field] = []) {
        self.fields = fields
    }

    /// Creates headers from a literal such as `["Accept": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value for `name` (any case); setting replaces every value for it,
    /// and setting `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            guard let newValue else {
                remove(name)
                return
            }
            guard let first = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) else {
                fields.append(Field(name: name, value: newValue))
                return
            }
            fields[first].value = newValue
            fields = fields.enumerated()
                .filter { $0.offset <= first || !$0.element.name.caseInsensitiveEquals(name) }
                .map(\.element)
        }
    }

    /// Every value for `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Whether a field named `name` (any case) is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveEquals(name) }
    }

    /// Appends a value, keeping those already there (for `Set-Cookie`, `Link`, …).
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every value for `name` (any case).
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// Sets each of `other`'s fields here, replacing values with the same name.
    public mutating func merge(_ other: HTTPHeaders) {
        for name in other.names { remove(name) }
        fields.append(contentsOf: other.fields)
    }

    /// The distinct names, in order of first appearance (as first spelled).
    var names: [String] {
        var seen = Set<String>()
        return fields.compactMap { seen.insert($0.name.lowercased()).inserted ? $0.name : nil }
    }

    /// The first field a backend must refuse to send: a name that is not an RFC 9110
    /// token (empty, or with a space, colon, control or non-ASCII character), or a value
    /// that could split the header line (CR, LF or NUL).
    public var firstUnsafeField: Field? {
        fields.first { field in
            field.name.isEmpty
                || field.name.utf8.contains { !Self.isTokenByte($0) }
                || field.value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
        }
    }

    /// RFC 9110 `tchar`: letters, digits and ``!#$%&'*+-.^_`|~``.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// `Name: value` lines.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Headers are equal when they hold the same values for the same names (any
    /// case), in the same order per name.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.normalized == rhs.normalized
    }

    /// Hashes the headers consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(normalized)
    }

    private var normalized: [String: [String]] {
        Dictionary(grouping: fields, by: { $0.name.lowercased() }).mapValues { $0.map(\.value) }
    }
}

extension String {
    /// Whether `self` sorts before `other` when ASCII letters are compared without regard
    /// to case (other bytes as they are); it allocates nothing, unlike comparing
    /// `lowercased()` copies.
    func caseInsensitiveLess(_ other: String) -> Bool {
        // Through the bytes' buffers, as ``caseInsensitiveEquals(_:)``.
        let compared = utf8.withContiguousStorageIfAvailable { lhs in
            other.utf8.withContiguousStorageIfAvailable { rhs in
                for index in 0..<min(lhs.count, rhs.count) {
                    let (x, y) = (Self.asciiLowercase(lhs[index]), Self.asciiLowercase(rhs[index]))
                    if x != y { return x < y }
                }
                return lhs.count < rhs.count
            }
        }
        if let compared, let less = compared { return less }
        return caseInsensitiveLessThroughViews(other)
    }

    /// ``caseInsensitiveLess(_:)`` through the `utf8` views, for a string without a buffer of
    /// bytes (one bridged from Objective-C, on Apple platforms), which `withUTF8` would copy.
    func caseInsensitiveLessThroughViews(_ other: String) -> Bool {
        utf8.lazy.map(Self.asciiLowercase).lexicographicallyPrecedes(other.utf8.lazy.map(Self.asciiLowercase))
    }

    /// `byte` with ASCII `A`…`Z` folded to `a`…`z`.
    private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (65...90).contains(byte) ? byte | 0x20 : byte
    }

    /// Whether `names`, which are lowercased, hold this name lowercased: compared in place,
    /// ASCII letters folded, where the name is ASCII (as field names are) and the set small (as
    /// the sets of secret and credential names are), since every field of every stored answer
    /// is looked up; otherwise through a lowercased copy.
    package func isCaseInsensitivelyIn(_ names: Set<String>) -> Bool {
        guard names.count <= 16, utf8.allSatisfy({ $0 < 0x80 }) else { return names.contains(lowercased()) }
        return names.contains { caseInsensitiveEquals($0) }
    }

    /// ASCII case-insensitive comparison, as HTTP field names need: byte for byte, ASCII
    /// letters folded.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        // Through the bytes' buffers: iterating two `utf8` views in step costs several times
        // more, and every header lookup compares names.
        let compared = utf8.withContiguousStorageIfAvailable { lhs in
            other.utf8.withContiguousStorageIfAvailable { rhs in
                for index in lhs.indices where !Self.equalIgnoringASCIICase(lhs[index], rhs[index]) {
                    return false
                }
                return true
            }
        }
        if let compared, let equal = compared { return equal }
        return caseInsensitiveEqualsThroughViews(other)
    }

    /// ``caseInsensitiveEquals(_:)`` through the `utf8` views, for a string without a buffer of
    /// bytes (one bridged from Objective-C, on Apple platforms), which `withUTF8` would copy.
    func caseInsensitiveEqualsThroughViews(_ other: String) -> Bool {
        utf8.elementsEqual(other.utf8, by: Self.equalIgnoringASCIICase)
    }

    /// Whether two bytes are the same, or the same ASCII letter in either case.
    @inline(__always)
    private static func equalIgnoringASCIICase(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 97 && (a | 0x20) <= 122)
    }
}

extension StringProtocol {
    /// `self` without the spaces and tabs around it: the optional whitespace around a field
    /// value or a list element (RFC 9110 §5.6.3). Byte by byte, where Foundation's
    /// `trimmingCharacters(in:)` copies through `NSString` on Linux, which every request with a
    /// body paid for its `Content-Type`.
    package func trimmingHTTPWhitespace() -> Substring {
        trimmingASCII { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    /// `self` without the ASCII bytes `isTrimmed` picks at either end.
    package func trimmingASCII(_ isTrimmed: (UInt8) -> Bool) -> Substring {
        let text = Substring(self)
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isTrimmed(bytes[start]) { start = bytes.index(after: start) }
        while start < end {
            let last = bytes.index(before: end)
            guard isTrimmed(bytes[last]) else { break }
            end = last
        }
        return text[start..<end]
    }
}
