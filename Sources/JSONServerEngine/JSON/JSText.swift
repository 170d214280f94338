import Depot
import Foundation

/// The JavaScript conversions json-server's rules rely on (`String(value)`,
/// `Number(text)`, `parseInt`, relational `<` and `>`), so that filters, sorting and
/// ids behave as they do behind JSONPlaceholder.
package enum JSText {
    /// `String(value)` in JavaScript: `1`, `1.5`, `true`, the string itself, arrays
    /// joined with `,`, objects as `[object Object]`; `null` as `null`.
    package static func string(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .double(let number): return self.number(number)
        case .string(let text): return text
        case .array(let elements):
            return elements.map { element -> String in
                if case .null = element { return "" }
                return string(element)
            }
            .joined(separator: ",")
        case .object: return "[object Object]"
        }
    }

    /// The text of an id as json-server compares ids (`id.toString()`): `nil` for a
    /// missing or `null` id.
    package static func idText(_ value: JSONValue?) -> String? {
        guard let value else { return nil }
        if case .null = value { return nil }
        return string(value)
    }

    /// A number as JavaScript prints it: integral values without a fraction.
    package static func number(_ number: Double) -> String {
        guard number.isFinite else { return number.isNaN ? "NaN" : (number < 0 ? "-Infinity" : "Infinity") }
        if number == number.rounded(), abs(number) < 1e21 {
            if let exact = Int(exactly: number) { return String(exact) }
            return String(format: "%.0f", number)
        }
        var text = "\(number)"
        // Swift writes `1e-07`; JavaScript writes `1e-7`.
        if let exponent = text.firstIndex(of: "e") {
            var digits = text[text.index(after: exponent)...]
            var sign = "+"
            if let first = digits.first, first == "+" || first == "-" {
                sign = String(first)
                digits = digits.dropFirst()
            }
            let trimmed = digits.drop { $0 == "0" }
            text = text[..<exponent] + "e" + sign + (trimmed.isEmpty ? "0" : trimmed)
        }
        return text
    }

    /// `Number(text)` in JavaScript: blank is 0, anything not a decimal number is NaN.
    package static func toNumber(_ text: String) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return 0 }
        guard trimmed.utf8.allSatisfy({ Self.isNumberByte($0) }), let value = Double(trimmed) else {
            return trimmed == "Infinity" || trimmed == "+Infinity"
                ? .infinity : trimmed == "-Infinity" ? -.infinity : .nan
        }
        return value
    }

    /// `parseInt(text, 10)` in JavaScript: leading whitespace, a sign, then as many
    /// digits as there are; `nil` (NaN) when there are none.
    package static func parseInt(_ text: String?) -> Int? {
        guard let text else { return nil }
        var scalars = Substring(text).drop { $0.isWhitespace }
        var negative = false
        if let first = scalars.first, first == "-" || first == "+" {
            negative = first == "-"
            scalars = scalars.dropFirst()
        }
        let digits = scalars.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return nil }
        let magnitude = Int(digits) ?? Int.max
        return negative ? -magnitude : magnitude
    }

    /// A value reduced to a JavaScript primitive for `<` and `>`: a number, or a
    /// string; `nil` for `null`.
    package enum Primitive {
        case number(Double)
        case string(String)
    }

    /// The primitive JavaScript compares `value` as.
    package static func primitive(_ value: JSONValue) -> Primitive? {
        switch value {
        case .null: return nil
        case .bool(let flag): return .number(flag ? 1 : 0)
        case .int(let number): return .number(Double(number))
        case .double(let number): return .number(number)
        case .string(let text): return .string(text)
        case .array, .object: return .string(string(value))
        }
    }

    /// JavaScript's `lhs < rhs` for two primitives: strings compare by UTF-16 code
    /// units, anything else as numbers (NaN compares false both ways).
    package static func less(_ lhs: Primitive, _ rhs: Primitive) -> Bool {
        switch (lhs, rhs) {
        case (.string(let left), .string(let right)):
            return utf16Order(left, right) < 0
        default:
            return numeric(lhs) < numeric(rhs)
        }
    }

    /// JavaScript's `lhs <= rhs` for two primitives: false when either is NaN.
    package static func lessOrEqual(_ lhs: Primitive, _ rhs: Primitive) -> Bool {
        switch (lhs, rhs) {
        case (.string(let left), .string(let right)):
            return utf16Order(left, right) <= 0
        default:
            return numeric(lhs) <= numeric(rhs)
        }
    }

    /// The order of two primitives as lodash's `orderBy` sees it: negative, zero
    /// (equal, or not comparable such as NaN), or positive.
    package static func compare(_ lhs: Primitive, _ rhs: Primitive) -> Int {
        if case .string(let left) = lhs, case .string(let right) = rhs { return utf16Order(left, right) }
        if less(lhs, rhs) { return -1 }
        if less(rhs, lhs) { return 1 }
        return 0
    }

    /// The order of two strings by UTF-16 code units (JavaScript's): negative, zero or
    /// positive. Read from the UTF-8 bytes, whose order is the code points' order: the two
    /// differ only where the first differing scalars are one above U+FFFF and one in
    /// U+E000...U+FFFF, so those two scalars' UTF-16 units decide.
    package static func utf16Order(_ lhs: String, _ rhs: String) -> Int {
        let order = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in utf16Order(left, right) }
        }
        if let order = order ?? nil { return order }
        if lhs.utf16.elementsEqual(rhs.utf16) { return 0 }
        return lhs.utf16.lexicographicallyPrecedes(rhs.utf16) ? -1 : 1
    }

    private static func utf16Order(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>)
        -> Int
    {
        let shorter = min(left.count, right.count)
        var index = 0
        while index < shorter, left[index] == right[index] { index += 1 }
        if index == shorter { return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1) }
        // Back to the start of the scalar the first differing byte belongs to.
        var start = index
        while start > 0, left[start] & 0xC0 == 0x80 { start -= 1 }
        let (one, other) = (utf16Units(scalar(left, at: start)), utf16Units(scalar(right, at: start)))
        if one.first != other.first { return one.first < other.first ? -1 : 1 }
        return one.second == other.second ? 0 : (one.second < other.second ? -1 : 1)
    }

    /// The scalar whose UTF-8 encoding starts at `start` (valid UTF-8: a Swift string's).
    private static func scalar(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32 {
        let lead = UInt32(bytes[start])
        let length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        var value = length == 1 ? lead : lead & (0xFF >> (length + 1))
        var index = start + 1
        while index < start + length, index < bytes.count {
            value = value << 6 | (UInt32(bytes[index]) & 0x3F)
            index += 1
        }
        return value
    }

    /// A scalar's UTF-16 code units (the second 0 for one unit).
    private static func utf16Units(_ scalar: UInt32) -> (first: UInt32, second: UInt32) {
        guard scalar >= 0x10000 else { return (scalar, 0) }
        let offset = scalar - 0x10000
        return (0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF))
    }

    /// Whether `lhs` and `rhs` are the same JSON value, numbers compared by value
    /// (`1` and `1.0` are equal), as lodash's `isEqual` compares them.
    package static func equal(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.int(let left), .double(let right)): return Double(left) == right
        case (.double(let left), .int(let right)): return left == Double(right)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { equal($0, $1) }
        case (.object(let left), .object(let right)):
            return left.count == right.count
                && left.allSatisfy { key, value in right[key].map { equal(value, $0) } ?? false }
        default: return lhs == rhs
        }
    }

    /// A key under which values that ``equal(_:_:)`` holds equal meet, for grouping.
    package static func equalityKey(_ value: JSONValue) -> String {
        switch value {
        case .int, .double: return "n" + string(value)
        case .string(let text): return "s" + text
        case .bool(let flag): return flag ? "t" : "f"
        case .null: return "0"
        case .array, .object: return "j" + String(decoding: JSONWriter.encode(value), as: UTF8.self)
        }
    }

    private static func numeric(_ primitive: Primitive) -> Double {
        switch primitive {
        case .number(let value): return value
        case .string(let text): return toNumber(text)
        }
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "-")
    }

    /// Whether JavaScript holds `value` false (`doc.id || createId()`).
    package static func isFalsy(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?: return true
        case .bool(let flag)?: return !flag
        case .int(let number)?: return number == 0
        case .double(let number)?: return number == 0 || number.isNaN
        case .string(let text)?: return text.isEmpty
        case .array?, .object?: return false
        }
    }
}
