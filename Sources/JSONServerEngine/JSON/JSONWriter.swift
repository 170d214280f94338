import Depot
import Foundation

/// Writes ``JSONValue``s as compact JSON with sorted keys, the same bytes for the
/// same value on every run; faster than `JSONEncoder` for values already in memory.
///
/// Numbers are written as JavaScript's `JSON.stringify` writes them as far as it
/// matters: integral doubles without a fraction, non-finite ones as `null`.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []

    /// An empty writer.
    package init() {}

    /// The JSON text of `value`.
    package static func encode(_ value: JSONValue) -> Data {
        var writer = JSONWriter()
        writer.write(value)
        return Data(writer.bytes)
    }

    /// The JSON text of an object with `members`.
    package static func encode(object members: [String: JSONValue]) -> Data {
        var writer = JSONWriter()
        writer.writeObject(members)
        return Data(writer.bytes)
    }

    /// Appends `value`.
    package mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .double(let number): writeDouble(number)
        case .string(let text): writeString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members): writeObject(members)
        }
    }

    /// Appends an object with `members`, keys in ascending order.
    package mutating func writeObject(_ members: [String: JSONValue]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for key in members.keys.sorted() {
            guard let member = members[key] else { continue }
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            writeString(key)
            bytes.append(UInt8(ascii: ":"))
            write(member)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `text` as a JSON string, escaping quotes, backslashes and controls.
    package mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0..<0x20:
                append("\\u00")
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends raw, already valid JSON bytes.
    package mutating func writeRaw(_ data: Data) {
        bytes.append(contentsOf: data)
    }

    private mutating func writeDouble(_ number: Double) {
        guard number.isFinite else {
            append("null")
            return
        }
        bytes.append(contentsOf: JSText.number(number).utf8)
    }

    private mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private static let hex = Array("0123456789abcdef".utf8)
}
