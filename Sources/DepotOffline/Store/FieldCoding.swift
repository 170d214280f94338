import Depot
import Foundation

/// The byte form of lists of name/value pairs (query items, header fields, varying values)
/// in the store's BLOB columns: for each pair, the name's length (4 bytes, big-endian) and
/// UTF-8 bytes, then the value's, with length `0xFFFFFFFF` for a missing value.
///
/// Deterministic (the same pairs give the same bytes, so query items can be part of a
/// unique key) and checked when read: bytes that do not parse give `nil`, which the store
/// reports as a corrupt file, never a crash.
enum FieldCoding {
    private static let missing: UInt32 = 0xFFFF_FFFF

    /// The bytes of `pairs`, in order.
    static func encode(_ pairs: [(name: String, value: String?)]) -> Data {
        var data = Data()
        for pair in pairs {
            append(pair.name, to: &data)
            if let value = pair.value { append(value, to: &data) } else { appendLength(missing, to: &data) }
        }
        return data
    }

    /// The pairs in `data`, or `nil` when the bytes are not in this form.
    static func decode(_ data: Data) -> [(name: String, value: String?)]? {
        let bytes = [UInt8](data)
        var offset = 0
        var pairs: [(name: String, value: String?)] = []
        while offset < bytes.count {
            guard let name = read(bytes, at: &offset), let name, let value = read(bytes, at: &offset) else {
                return nil
            }
            pairs.append((name, value))
        }
        return pairs
    }

    /// The bytes of query items, in order.
    static func encode(_ query: [URLQueryItem]) -> Data {
        encode(query.map { ($0.name, $0.value) })
    }

    /// Query items from their bytes.
    static func decodeQuery(_ data: Data) -> [URLQueryItem]? {
        decode(data)?.map { URLQueryItem(name: $0.name, value: $0.value) }
    }

    /// The bytes of header fields, in order.
    static func encode(_ headers: HTTPHeaders) -> Data {
        encode(headers.map { ($0.name, Optional($0.value)) })
    }

    /// Header fields from their bytes.
    static func decodeHeaders(_ data: Data) -> HTTPHeaders? {
        guard let pairs = decode(data) else { return nil }
        var fields: [HTTPHeaders.Field] = []
        for pair in pairs {
            guard let value = pair.value else { return nil }
            fields.append(HTTPHeaders.Field(name: pair.name, value: value))
        }
        return HTTPHeaders(fields)
    }

    /// The bytes of varying values: names sorted, each name's values in order; a name the
    /// request did not send (no values) as one pair without a value.
    static func encode(_ varying: [String: [String]]) -> Data {
        encode(
            varying.keys.sorted().flatMap { name -> [(name: String, value: String?)] in
                let values = varying[name] ?? []
                return values.isEmpty ? [(name, nil)] : values.map { (name, Optional($0)) }
            })
    }

    /// Varying values from their bytes.
    static func decodeVarying(_ data: Data) -> [String: [String]]? {
        guard let pairs = decode(data) else { return nil }
        var varying: [String: [String]] = [:]
        for pair in pairs {
            if let value = pair.value {
                varying[pair.name, default: []].append(value)
            } else {
                varying[pair.name] = varying[pair.name] ?? []
            }
        }
        return varying
    }

    private static func append(_ text: String, to data: inout Data) {
        let utf8 = Array(text.utf8)
        appendLength(UInt32(truncatingIfNeeded: utf8.count), to: &data)
        data.append(contentsOf: utf8)
    }

    private static func appendLength(_ length: UInt32, to data: inout Data) {
        withUnsafeBytes(of: length.bigEndian) { data.append(contentsOf: $0) }
    }

    /// The string at `offset` (`.some(nil)` for a missing value), or `nil` for bad bytes.
    private static func read(_ bytes: [UInt8], at offset: inout Int) -> String?? {
        guard bytes.count - offset >= 4 else { return nil }
        var length: UInt32 = 0
        for byte in bytes[offset..<offset + 4] { length = length << 8 | UInt32(byte) }
        offset += 4
        if length == missing { return .some(nil) }
        let count = Int(length)
        guard bytes.count - offset >= count else { return nil }
        let text = String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        offset += count
        return .some(text)
    }
}
