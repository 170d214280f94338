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
            guard let base = raw.baseAddress else { return nil }
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
                    // Skip the string (brackets inside it open nothing): find its closing
                    // quote with memchr, which is vectorized, and pass over escaped quotes.
                    guard let end = closingQuote(in: raw, base: base, after: index) else { return nil }
                    index = end
                default:
                    break
                }
                index += 1
            }
            return nil
        }
    }

    /// The offset of the quote that closes the string opened at `open`, or `nil` when
    /// the string runs to the end.
    private static func closingQuote(in raw: UnsafeRawBufferPointer, base: UnsafeRawPointer, after open: Int)
        -> Int?
    {
        let start = open + 1
        var from = start
        while from < raw.count {
            guard let found = memchr(base + from, Int32(UInt8(ascii: "\"")), raw.count - from) else {
                return nil
            }
            let quote = base.distance(to: UnsafeRawPointer(found))
            // The quote is escaped when an odd number of backslashes stands before it.
            var backslashes = 0
            while quote - backslashes - 1 >= start, raw[quote - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            if backslashes % 2 == 0 { return quote }
            from = quote + 1
        }
        return nil
    }

    /// The encoding of a body that is UTF-16 or UTF-32 rather than UTF-8, told the way
    /// Foundation's decoder tells it: by a byte order mark, or by NUL bytes where the
    /// first ASCII character of a JSON text would stand; `nil` for UTF-8.
    static func wideEncoding(of data: Data) -> String.Encoding? {
        // The first bytes read through one pointer: every decode asks, and each subscript of
        // `Data` is a call of its own.
        data.withUnsafeBytes { raw in
            // UTF-8 unless the first two bytes hold a NUL or a byte order mark: the usual
            // answer, `{` or `[` then anything but NUL, is told from two bytes.
            if raw.count >= 2, raw[0] != 0, raw[0] < 0xFE, raw[1] != 0 { return nil }
            let count = min(raw.count, 4)
            func byte(_ offset: Int) -> UInt8 { offset < count ? raw[offset] : 1 }
            let (b0, b1, b2, b3) = (byte(0), byte(1), byte(2), byte(3))
            switch count {
            case 4...:
                if b0 == 0, b1 == 0, b2 == 0xFE, b3 == 0xFF { return .utf32 }
                if b0 == 0xFF, b1 == 0xFE, b2 == 0, b3 == 0 { return .utf32 }
                if b0 == 0, b1 == 0, b2 == 0 { return .utf32BigEndian }
                if b1 == 0, b2 == 0, b3 == 0 { return .utf32LittleEndian }
                fallthrough
            case 2...:
                if (b0 == 0xFE && b1 == 0xFF) || (b0 == 0xFF && b1 == 0xFE) { return .utf16 }
                if b0 == 0 { return .utf16BigEndian }
                if b1 == 0 { return .utf16LittleEndian }
                return nil
            default:
                return nil
            }
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
    /// A UTF-16 or UTF-32 body, which Foundation accepts, is turned into UTF-8 first, so
    /// that the scan sees its brackets and quotes as Foundation will.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for such nesting or a wide body that is
    ///   not valid text; otherwise what `decode(_:from:)` throws.
    @usableFromInline
    package func decodeChecked<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        var input = data
        if let encoding = JSONNesting.wideEncoding(of: data) {
            guard let text = String(data: data, encoding: encoding) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: [], debugDescription: "The body is not valid \(encoding) text."))
            }
            input = Data(text.utf8)
        }
        if let offset = JSONNesting.firstOffsetPastLimit(in: input) { throw JSONNesting.error(at: offset) }
        return try decode(type, from: input)
    }
}
