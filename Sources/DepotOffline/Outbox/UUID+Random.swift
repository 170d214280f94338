import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension UUID {
    /// A random (version 4) UUID drawn from the system's generator.
    ///
    /// The same kind of value as `UUID()`, made without a file: on Linux `UUID()` opens, reads
    /// and closes `/dev/urandom` each time; this takes its 16 bytes from the system's generator
    /// in one call (`getentropy` on Linux, one `getrandom`; `arc4random_buf` on Apple
    /// platforms), or, where that fails, as two 64-bit values of `SystemRandomNumberGenerator`.
    static func random() -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            if !Self.fillFromSystem(bytes) {
                var generator = SystemRandomNumberGenerator()
                bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            }
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // variant 1 (RFC 9562)
        }
        return UUID(uuid: uuid)
    }

    /// Fills `bytes` (at most 256) from the system's generator in one call; `false` when it
    /// could not.
    private static func fillFromSystem(_ bytes: UnsafeMutableRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count <= 256 else { return false }
        #if canImport(Darwin)
            arc4random_buf(base, bytes.count)
            return true
        #elseif canImport(Glibc) || canImport(Musl)
            return getentropy(base, bytes.count) == 0
        #else
            return false
        #endif
    }

    /// ``random()`` as lowercase text, as the store writes ids and `Idempotency-Key`s.
    static func randomText() -> String {
        random().lowercasedText
    }

    /// The UUID as 36 characters of lowercase text (`8-4-4-4-12` hexadecimal digits), written
    /// directly: `uuidString` formats through `snprintf` on Linux, and lowercasing copies it.
    var lowercasedText: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 48 + nibble : 87 + nibble }
                var count = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[count] = UInt8(ascii: "-")
                        count += 1
                    }
                    text[count] = digit(byte >> 4)
                    text[count + 1] = digit(byte & 0x0F)
                    count += 2
                }
                return count
            }
        }
    }
}
