import Depot
import Foundation

/// A strict RFC 8259 JSON parser into ``JSONValue`` that can also say where each
/// record of a db.json document lies, so that ``InMemoryBackend`` keeps a record's
/// bytes as they came instead of encoding them again.
///
/// Integers without fraction or exponent that fit in `Int` become `.int`; every other
/// number becomes `.double`. Objects keep the last value of a repeated key (and such a
/// record is written anew, since Foundation's decoder reads the first). Nesting deeper
/// than ``maximumDepth``, counted from the document's root plus the levels an answer
/// adds (``answerLevels``), is refused rather than risking the stack or answering what
/// clients cannot decode.
///
/// What JavaScript's `JSON.parse` reads differently from the bytes, as json-server
/// would read a db.json file, is *repaired*: invalid UTF-8 becomes U+FFFD (Node reads
/// the file as UTF-8), a number past `Double`'s range becomes `null` (JavaScript's
/// `Infinity`, which `JSON.stringify` writes as `null`), a number that underflows
/// becomes `0`, and a lone surrogate escape (`\ud800`) becomes U+FFFD (json-server
/// would answer the escape again, which Foundation's decoder refuses). A record that
/// needed repair is reported without its bytes, so it is written anew.
package struct JSONParser {
    /// Why a document is not JSON, and where.
    package struct SyntaxError: Error, Sendable {
        /// What was wrong.
        package var message: String
        /// The byte offset where the parser stopped.
        package var offset: Int

        /// `message at byte offset`.
        package var description: String { "\(message) at byte \(offset)" }
    }

    /// One top-level member of a db.json document.
    package enum DatabaseEntry {
        /// An array: the records (their members and their bytes in the document;
        /// `nil` for a record that was repaired, whose bytes must be written anew).
        case collection([(members: [String: JSONValue], bytes: Range<Int>?)])
        /// A plain object: a singular resource such as `/profile` (bytes as above).
        case object([String: JSONValue], bytes: Range<Int>?)
        /// Anything else, which json-server refuses to serve.
        case unsupported(kind: String)
        /// An array with an element that is not an object, at `position`.
        case invalidRecord(position: Int, kind: String)
    }

    /// The deepest nesting accepted: Foundation's limit, which every answer must keep.
    package static let maximumDepth = 512

    /// The levels an answer can put around a seeded record beyond those of the
    /// document (`_embed` nests children one level deeper than in db.json).
    package static let answerLevels = 1

    /// The levels a stored record sits under in the deepest answer: the database object,
    /// its collection, and ``answerLevels``. Pass it to ``parse(_:depth:)`` for bodies
    /// that become records.
    package static let recordDepth = 2 + answerLevels

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0
    /// The levels counted before the document's own (see ``answerLevels``).
    private var reserved = 0
    /// Whether a value parsed since this was last cleared needed repair (see above).
    private var repaired = false

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Parses `data` as one JSON value (any type at the top level).
    ///
    /// - Parameter depth: the levels `data` will sit under in an answer:
    ///   ``recordDepth`` for a record, so that a stored record nests no deeper than a
    ///   seeded one and every answer stays within the limit.
    package static func parse(_ data: Data, depth: Int = 0) -> Result<JSONValue, SyntaxError> {
        data.withUnsafeBytes { raw in
            var parser = JSONParser(raw)
            parser.depth = depth
            parser.reserved = depth
            do throws(SyntaxError) {
                let value = try parser.parseValue()
                try parser.expectEnd()
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Parses a db.json document: an object whose members are arrays of records or
    /// singular objects, in document order.
    package static func parseDatabase(_ data: Data) -> Result<
        [(name: String, entry: DatabaseEntry)], SyntaxError
    > {
        data.withUnsafeBytes { raw in
            var parser = JSONParser(raw)
            parser.depth = answerLevels
            parser.reserved = answerLevels
            do throws(SyntaxError) {
                let entries = try parser.parseDatabase()
                try parser.expectEnd()
                return .success(entries)
            } catch {
                return .failure(error)
            }
        }
    }

    /// The value of member `key` of the JSON object in `bytes`, parsing that value only
    /// (the others are skipped); `nil` when the object has no such member, or `bytes` is
    /// not an object.
    ///
    /// For stored records, which are valid JSON without repeated keys (a record with a
    /// repeated key is written anew when it is seeded), so the first match is the member.
    package static func member(_ key: String, in bytes: UnsafeRawBufferPointer) -> JSONValue? {
        member(key, in: bytes, toTheEnd: false)
    }

    /// ``member(_:in:)`` of bytes from outside: the value of member `key` when `bytes` is one
    /// JSON object that ``parse(_:depth:)`` accepts (every key and value is parsed by the same
    /// rules and dropped, and nothing may follow the object), without building the object's
    /// own dictionary; the last of repeated keys, as a full parse keeps it. `nil` otherwise, or
    /// when there is no such member.
    package static func member(_ key: String, inWhole bytes: UnsafeRawBufferPointer) -> JSONValue? {
        member(key, in: bytes, toTheEnd: true)
    }

    private static func member(_ key: String, in bytes: UnsafeRawBufferPointer, toTheEnd: Bool) -> JSONValue?
    {
        var parser = JSONParser(bytes)
        do throws(SyntaxError) {
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: "{") else { return nil }
            // The object is a level of nesting, as in a full parse.
            if toTheEnd { try parser.enter() }
            parser.index += 1
            parser.skipWhitespace()
            if parser.peek() == UInt8(ascii: "}") {
                parser.index += 1
                if toTheEnd { try parser.expectEnd() }
                return nil
            }
            var value: JSONValue?
            while true {
                parser.skipWhitespace()
                let found: Bool
                if toTheEnd {
                    guard parser.peek() == UInt8(ascii: "\"") else {
                        throw parser.failure("expected a string key")
                    }
                    found = try parser.parseString() == key
                } else {
                    // A stored record's keys are valid and never repeat: the first match is it.
                    found = try parser.keyEquals(key)
                }
                parser.skipWhitespace()
                try parser.expect(UInt8(ascii: ":"))
                if found {
                    value = try parser.parseValue()
                    if !toTheEnd { return value }
                } else if toTheEnd {
                    // Parsed as a full parse parses it, and dropped.
                    _ = try parser.parseValue()
                } else {
                    try parser.skipValue()
                }
                parser.skipWhitespace()
                if try !parser.continueContainer(closing: UInt8(ascii: "}")) { break }
            }
            try parser.expectEnd()
            return value
        } catch {
            return nil
        }
    }

    /// The elements of the JSON array in `bytes`, each with the range of the value of its
    /// member `key` when it is an object that has one: one pass, nothing built, keys compared
    /// as bytes (a key written with escapes is not recognized). `nil` when `bytes` is not an
    /// array.
    package static func elements(ofArray bytes: UnsafeRawBufferPointer, member key: String) -> [(
        element: Range<Int>, member: Range<Int>?
    )]? {
        let wanted = Array(key.utf8)
        var parser = JSONParser(bytes)
        do throws(SyntaxError) {
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: "[") else { return nil }
            parser.index += 1
            parser.skipWhitespace()
            var elements: [(element: Range<Int>, member: Range<Int>?)] = []
            if parser.peek() == UInt8(ascii: "]") {
                parser.index += 1
                try parser.expectEnd()
                return elements
            }
            while true {
                parser.skipWhitespace()
                let start = parser.index
                var member: Range<Int>?
                if parser.peek() == UInt8(ascii: "{") {
                    parser.index += 1
                    parser.skipWhitespace()
                    if parser.peek() == UInt8(ascii: "}") {
                        parser.index += 1
                    } else {
                        while true {
                            parser.skipWhitespace()
                            let keyStart = parser.index + 1
                            try parser.skipString()
                            let matches =
                                parser.index - 1 - keyStart == wanted.count
                                && wanted.indices.allSatisfy { bytes[keyStart + $0] == wanted[$0] }
                            parser.skipWhitespace()
                            try parser.expect(UInt8(ascii: ":"))
                            parser.skipWhitespace()
                            let valueStart = parser.index
                            try parser.skipValue()
                            if matches && member == nil { member = valueStart..<parser.index }
                            parser.skipWhitespace()
                            if try !parser.continueContainer(closing: UInt8(ascii: "}")) { break }
                        }
                    }
                } else {
                    try parser.skipValue()
                }
                elements.append((start..<parser.index, member))
                parser.skipWhitespace()
                if try !parser.continueContainer(closing: UInt8(ascii: "]")) { break }
            }
            try parser.expectEnd()
            return elements
        } catch {
            return nil
        }
    }

    // MARK: - Database

    private mutating func parseDatabase() throws(SyntaxError) -> [(name: String, entry: DatabaseEntry)] {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else { throw failure("a database must be a JSON object") }
        try enter()
        index += 1
        var entries: [(name: String, entry: DatabaseEntry)] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return entries
        }
        while true {
            skipWhitespace()
            let name = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            entries.append((name, try parseDatabaseEntry()))
            skipWhitespace()
            if try !continueContainer(closing: UInt8(ascii: "}")) { return entries }
        }
    }

    private mutating func parseDatabaseEntry() throws(SyntaxError) -> DatabaseEntry {
        switch peek() {
        case UInt8(ascii: "["):
            try enter()
            index += 1
            var records: [(members: [String: JSONValue], bytes: Range<Int>?)] = []
            var invalid: DatabaseEntry?
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .collection(records)
            }
            while true {
                skipWhitespace()
                let start = index
                repaired = false
                let value = try parseValue()
                if case .object(let members) = value {
                    records.append((members, repaired ? nil : start..<index))
                } else if invalid == nil {
                    invalid = .invalidRecord(position: records.count, kind: Self.kind(of: value))
                }
                skipWhitespace()
                if try !continueContainer(closing: UInt8(ascii: "]")) { break }
            }
            depth -= 1
            return invalid ?? .collection(records)
        case UInt8(ascii: "{"):
            let start = index
            repaired = false
            let value = try parseValue()
            return .object(value.objectValue ?? [:], bytes: repaired ? nil : start..<index)
        default:
            return .unsupported(kind: Self.kind(of: try parseValue()))
        }
    }

    /// The JSON type name of `value`, for messages.
    package static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    // MARK: - Values

    private mutating func parseValue() throws(SyntaxError) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw failure("unexpected character \(Self.describe(byte))")
        }
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONValue {
        try enter()
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            let value = try parseValue()
            // json-server keeps the last value of a repeated key, Foundation's decoder the
            // first: the record is written anew so both read the same.
            if members.updateValue(value, forKey: key) != nil { repaired = true }
            skipWhitespace()
            if try !continueContainer(closing: UInt8(ascii: "}")) { break }
        }
        depth -= 1
        return .object(members)
    }

    private mutating func parseArray() throws(SyntaxError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            if try !continueContainer(closing: UInt8(ascii: "]")) { break }
        }
        depth -= 1
        return .array(elements)
    }

    /// After a member or element: consumes `,` (true: another follows) or the
    /// closing bracket (false).
    private mutating func continueContainer(closing: UInt8) throws(SyntaxError) -> Bool {
        guard let byte = peek() else { throw failure("unexpected end of input") }
        index += 1
        if byte == UInt8(ascii: ",") { return true }
        if byte == closing { return false }
        index -= 1
        throw failure("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        guard depth > Self.maximumDepth else { return }
        if reserved == 0 { throw failure("nesting deeper than \(Self.maximumDepth)") }
        throw failure(
            "nesting deeper than \(Self.maximumDepth) (counting the \(reserved) levels an answer puts around it)"
        )
    }

    // MARK: - Strings

    private mutating func parseString() throws(SyntaxError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw failure("expected a string") }
        index += 1
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                let text = String(decoding: raw, as: UTF8.self)
                // Decoding replaced invalid UTF-8 with U+FFFD exactly when the bytes changed.
                if !ascii && !text.utf8.elementsEqual(raw) { repaired = true }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        var buffer = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                let text = String(decoding: buffer, as: UTF8.self)
                if !text.utf8.elementsEqual(buffer) { repaired = true }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw failure("unescaped control character in a string")
            default:
                buffer.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(SyntaxError) {
        guard let byte = peek() else { throw failure("unterminated string") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar: Unicode.Scalar = "\u{FFFD}"
            let unit = try parseHex4()
            if (0xD800..<0xDC00).contains(unit) {
                if peek() == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") {
                    let save = index
                    index += 2
                    let low = try parseHex4()
                    if (0xDC00..<0xE000).contains(low) {
                        let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                        scalar = Unicode.Scalar(value) ?? scalar
                    } else {
                        index = save
                    }
                }
            } else if let decoded = Unicode.Scalar(UInt32(unit)) {
                scalar = decoded
            }
            // A surrogate without its other half stays U+FFFD.
            if scalar == "\u{FFFD}" && unit != 0xFFFD { repaired = true }
            buffer.append(contentsOf: String(Character(scalar)).utf8)
        default:
            index -= 1
            throw failure("invalid escape \\\(Self.describe(byte))")
        }
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw failure("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Consumes a key and says whether it reads `key`: compared byte for byte unless it
    /// has an escape.
    private mutating func keyEquals(_ key: String) throws(SyntaxError) -> Bool {
        guard peek() == UInt8(ascii: "\"") else { throw failure("expected a string key") }
        let start = index
        var end = index + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            let raw = UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<end])
            var key = key
            return key.withUTF8 { wanted in
                guard wanted.count == raw.count else { return false }
                guard let lhs = wanted.baseAddress, let rhs = raw.baseAddress else { return true }
                return memcmp(lhs, rhs, wanted.count) == 0
            }
        }
        index = start
        return try parseString() == key
    }

    /// Moves past one value without building it.
    private mutating func skipValue() throws(SyntaxError) {
        skipWhitespace()
        guard let byte = peek() else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var nesting = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    try skipString()
                    continue
                }
                index += 1
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    nesting += 1
                } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    nesting -= 1
                    if nesting == 0 { return }
                }
            }
            throw failure("unexpected end of input")
        default:
            // A number or a literal: up to the next delimiter.
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return
                default: index += 1
                }
            }
        }
    }

    private mutating func skipString() throws(SyntaxError) {
        index += 1
        guard let base = bytes.baseAddress else { throw failure("unterminated string") }
        while index < bytes.count {
            // The next quote, found by `memchr`; it ends the string unless an odd number of
            // backslashes escapes it.
            guard let found = memchr(base + index, Int32(UInt8(ascii: "\"")), bytes.count - index) else {
                break
            }
            let quote = base.distance(to: UnsafeRawPointer(found))
            var backslashes = 0
            while quote - backslashes - 1 >= index && bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            index = quote + 1
            if backslashes % 2 == 0 { return }
        }
        index = bytes.count
        throw failure("unterminated string")
    }

    // MARK: - Numbers and literals

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = index
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        var integer = 0
        var overflow = false
        guard let first = peek(), Self.isDigit(first) else { throw failure("expected a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let byte = peek(), Self.isDigit(byte) {
                let digit = Int(byte - UInt8(ascii: "0"))
                let (times, overflowA) = integer.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) =
                    negative
                    ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                overflow = overflow || overflowA || overflowB
                integer = sum
                index += 1
            }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            try digits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            try digits()
        }
        if isInteger && !overflow { return .int(integer) }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        guard let value = Double(String(decoding: raw, as: UTF8.self)) else {
            throw failure("invalid number")
        }
        if !value.isFinite {
            // JavaScript reads Infinity, which JSON.stringify writes as null.
            repaired = true
            return .null
        }
        if value == 0, Self.hasNonzeroMantissa(raw) {
            // Underflow: JavaScript reads 0; Foundation refuses such a number.
            repaired = true
        }
        return .double(value)
    }

    private mutating func digits() throws(SyntaxError) {
        guard let first = peek(), Self.isDigit(first) else { throw failure("expected a digit") }
        while let byte = peek(), Self.isDigit(byte) { index += 1 }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(SyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw failure("invalid literal")
        }
        index += count
    }

    // MARK: - Scanning

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    private mutating func expect(_ byte: UInt8) throws(SyntaxError) {
        guard peek() == byte else { throw failure("expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func expectEnd() throws(SyntaxError) {
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected data after the JSON value") }
    }

    private func failure(_ message: String) -> SyntaxError {
        SyntaxError(message: message, offset: index)
    }

    /// Whether a number's digits before its exponent are not all zero.
    private static func hasNonzeroMantissa(_ number: UnsafeRawBufferPointer) -> Bool {
        for byte in number {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return false }
            if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return true }
        }
        return false
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }
}
