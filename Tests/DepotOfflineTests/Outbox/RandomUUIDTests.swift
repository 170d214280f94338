import Foundation
import Testing

@testable import DepotOffline

/// The ids and `Idempotency-Key`s the outbox makes without `UUID()`.
@Suite struct RandomUUIDTests {
    @Test func isAVersion4UUIDOfTheRFCVariant() {
        for _ in 0..<64 {
            let text = UUID.randomText()
            let characters = Array(text)
            #expect(text.count == 36)
            #expect(text == text.lowercased())
            #expect(characters[14] == "4", "version nibble of \(text)")
            #expect("89ab".contains(characters[19]), "variant of \(text)")
            #expect(UUID(uuidString: text) != nil)
        }
    }

    @Test func writesTheTextFoundationWritesLowercased() {
        for _ in 0..<256 {
            let uuid = UUID.random()
            #expect(uuid.lowercasedText == uuid.uuidString.lowercased())
            #expect(UUID(uuidString: uuid.lowercasedText) == uuid)
        }
        // Every digit, both ends of the range.
        let edges = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(
                uuid: (
                    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32,
                    0x10
                )),
        ]
        #expect(
            edges.map(\.lowercasedText) == [
                "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                "01234567-89ab-cdef-fedc-ba9876543210",
            ])
    }

    @Test func drawsADifferentValueEachTime() {
        let drawn = Set((0..<1000).map { _ in UUID.random() })
        #expect(drawn.count == 1000)
        // Both halves are drawn: a fill that left either one as it was would repeat it.
        let halves = drawn.map { uuid in
            withUnsafeBytes(of: uuid.uuid) {
                ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
        }
        #expect(Set(halves.map(\.0)).count == 1000)
        #expect(Set(halves.map(\.1)).count == 1000)
    }
}
