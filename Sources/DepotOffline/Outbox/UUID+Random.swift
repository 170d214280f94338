import Foundation

extension UUID {
    /// A random (version 4) UUID drawn from the system's generator.
    ///
    /// The same kind of value as `UUID()`, made without a file: on Linux `UUID()` opens, reads
    /// and closes `/dev/urandom` each time; this draws two 64-bit values from the system's
    /// generator (`getrandom`) instead.
    static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // variant 1 (RFC 9562)
        }
        return UUID(uuid: uuid)
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
