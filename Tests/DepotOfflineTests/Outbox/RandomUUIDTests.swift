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

    @Test func drawsADifferentValueEachTime() {
        let drawn = Set((0..<1000).map { _ in UUID.random() })
        #expect(drawn.count == 1000)
    }
}
