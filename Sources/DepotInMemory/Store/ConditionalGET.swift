import Depot
import Foundation
import JSONServerEngine

/// The entity tags and `304 Not Modified` answers json-server 0.17 gets from Express:
/// a successful `GET` carries a weak `ETag` computed from its body, and a `GET` whose
/// `If-None-Match` (or `If-Modified-Since`, against a route's `Last-Modified`) still
/// holds is answered `304` without a body (Express's `req.fresh`, from the `fresh`
/// package).
///
/// Unlike Express, only `GET` answers get a tag: `HEAD` answers carry none, and neither
/// do writes or errors. `If-Match` is not checked, as json-server does not.
enum ConditionalGET {
    /// `response` as json-server would answer `request`, before it is classified: a
    /// successful `GET` answer with an `ETag`, or `304` (which the classifier counts as a
    /// success for a conditional request); any other answer as it is.
    static func apply(to response: BackendResponse, for request: BackendRequest) -> BackendResponse {
        guard request.method == .get, (200..<300).contains(response.status), response.status != 204 else {
            return response
        }
        var response = response
        if !response.headers.contains("ETag") {
            response.headers["ETag"] = entityTag(for: response.body)
        }
        guard isFresh(request, response) else { return response }
        var headers = response.headers
        for name in ["Content-Type", "Content-Length", "Transfer-Encoding"] { headers.remove(name) }
        return BackendResponse(status: 304, headers: headers)
    }

    /// A weak tag of the body's bytes: `W/"` + its 64-bit hash in 11 characters of
    /// `0-9A-Za-z-_` + `"`. Fifteen bytes, so the string lives inline, with no allocation
    /// on a path that every `GET` takes (Express's tags also hold the length; a tag is
    /// opaque to clients).
    static func entityTag(for body: Data) -> String {
        body.withUnsafeBytes { entityTag(for: $0) }
    }

    /// The tag of the bytes `body` points to, as for a `Data` body.
    static func entityTag(for body: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 15) { buffer in
            var count = 0
            for byte in "W/\"".utf8 {
                buffer[count] = byte
                count += 1
            }
            var rest = hash(body)
            for _ in 0..<11 {
                buffer[count] = tagAlphabet[Int(rest & 63)]
                rest >>= 6
                count += 1
            }
            buffer[count] = UInt8(ascii: "\"")
            return count + 1
        }
    }

    private static let tagAlphabet = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_".utf8)

    /// Whether the client's copy is still current (the `fresh` package's rules): with
    /// `If-None-Match`, one of its tags equals the response's under weak comparison
    /// (or it is `*`); with `If-Modified-Since`, the response has a `Last-Modified` no
    /// later than it; never when the request says `Cache-Control: no-cache`.
    static func isFresh(_ request: BackendRequest, _ response: BackendResponse) -> Bool {
        let noneMatch = request.headers["If-None-Match"]
        let modifiedSince = request.headers["If-Modified-Since"]
        guard noneMatch != nil || modifiedSince != nil else { return false }
        if let control = request.headers["Cache-Control"], control.lowercased().contains("no-cache") {
            return false
        }
        if let noneMatch, noneMatch.trimmingHTTPWhitespace() != "*" {
            guard let tag = response.headers["ETag"] else { return false }
            let current = opaque(tag)
            let matched = noneMatch.split(separator: ",").contains { opaque(Substring($0)) == current }
            guard matched else { return false }
        }
        if let modifiedSince {
            guard let lastModified = response.headers["Last-Modified"].flatMap(HTTPDate.parse),
                let since = HTTPDate.parse(modifiedSince), lastModified <= since
            else { return false }
        }
        return true
    }

    /// The tag without its weak prefix, for weak comparison (RFC 9110 §8.8.3.2).
    private static func opaque<Text: StringProtocol>(_ tag: Text) -> Substring {
        var tag = Substring(tag).trimmingHTTPWhitespace()
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        return tag
    }

    /// A 64-bit hash of `body` (FNV-1a's constants, eight bytes at a time, in four
    /// independent lanes over each 32 bytes so that the multiplications overlap): cheap next
    /// to encoding the body, and the same for the same bytes in every process.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let prime: UInt64 = 0x0000_0100_0000_01b3
        func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
            let mixed = (hash ^ word) &* prime
            return mixed ^ (mixed >> 29)
        }
        func word(_ offset: Int) -> UInt64 {
            bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var offset = 0
        if bytes.count >= 32 {
            var lanes: (UInt64, UInt64, UInt64, UInt64) = (
                hash, hash ^ 0x9e37_79b9_7f4a_7c15, hash ^ 0xc2b2_ae3d_27d4_eb4f,
                hash ^ 0x1656_67b1_9e37_79f9
            )
            while offset + 32 <= bytes.count {
                lanes.0 = mix(lanes.0, word(offset))
                lanes.1 = mix(lanes.1, word(offset + 8))
                lanes.2 = mix(lanes.2, word(offset + 16))
                lanes.3 = mix(lanes.3, word(offset + 24))
                offset += 32
            }
            hash = mix(mix(mix(lanes.0, lanes.1), lanes.2), lanes.3)
        }
        while offset + 8 <= bytes.count {
            hash = mix(hash, word(offset))
            offset += 8
        }
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* prime
            offset += 1
        }
        return hash ^ (hash >> 32)
    }
}
