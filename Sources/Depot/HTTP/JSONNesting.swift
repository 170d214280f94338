import Foundation

/// The one guard every decode of bytes from outside goes through before Foundation
/// sees them.
///
/// Foundation's JSON parser refuses documents nested deeper than 512 arrays or
/// objects, but on Linux (Swift 6.3) it traps, killing the process, when the 513th
/// opening bracket is the document's last byte (`[[[…[`). Depot promises
/// ``ServiceError/decoding(_:)`` for any body that is not the expected type, so it
/// refuses such nesting itself: the scan costs one pass over the bytes and refuses
/// nothing Foundation would accept.
enum JSONNesting {
    /// The deepest nesting Foundation accepts, and so the deepest Depot accepts.
    static let limit = 512

    /// The byte offset of the first `[` or `{` (outside strings) that opens a level
    /// past ``limit``, or `nil` when `data` nests no deeper than that.
    static func firstOffsetPastLimit(in data: Data) -> Int? {
        // Going past the limit takes more opening brackets than that many bytes hold.
        guard data.count > limit else { return nil }
        return data.withUnsafeBytes { raw -> Int? in
            let count = raw.count
            var depth = 0
            var index = 0
            while index < count {
                switch raw[index] {
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    if depth > limit { return index }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                case UInt8(ascii: "\""):
                    // Skip the string: brackets inside it open nothing.
                    index += 1
                    while index < count {
                        let byte = raw[index]
                        if byte == UInt8(ascii: "\"") { break }
                        index += byte == UInt8(ascii: "\\") ? 2 : 1
                    }
                default:
                    break
                }
                index += 1
            }
            return nil
        }
    }

    /// The error for nesting that starts past the limit at `offset`, in the shape
    /// `JSONDecoder` reports corrupt data, so every caller maps it as it maps those.
    static func error(at offset: Int) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: [],
                debugDescription:
                    "The JSON nests deeper than \(limit) arrays or objects (at byte \(offset)); "
                    + "refused before decoding."))
    }
}

extension JSONDecoder {
    /// Decodes `type` from bytes that came from outside (a server, a file, a test
    /// stub), refusing nesting past ``JSONNesting/limit`` before Foundation reads
    /// them. Every decode of such bytes in Depot goes through here.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for such nesting; otherwise what
    ///   `decode(_:from:)` throws.
    func decodeChecked<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let offset = JSONNesting.firstOffsetPastLimit(in: data) { throw JSONNesting.error(at: offset) }
        return try decode(type, from: data)
    }
}
