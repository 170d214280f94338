import Testing

@testable import Depot

/// The one registry behind subscribers, listeners and waiters.
@Suite struct RegistryTests {
    @Test func givesElementsBackInTheOrderTheyWereAdded() {
        var registry = Registry<String>()
        let ids = (0..<40).map { registry.add("e\($0)") }
        registry.remove(ids[3])
        registry.remove(ids[17])
        let expected = (0..<40).filter { $0 != 3 && $0 != 17 }.map { "e\($0)" }
        #expect(registry.elements == expected)
        #expect(registry.count == 38)
        #expect(registry.removeAll() == expected)
        #expect(registry.isEmpty)
    }

    @Test func neverReusesANumber() {
        var registry = Registry<Int>()
        let first = registry.add(1)
        registry.remove(first)
        let reserved = registry.reserveID()
        let second = registry.add(2)
        #expect(Set([first, reserved, second]).count == 3)
        #expect(registry[reserved] == nil)
        registry[reserved] = 3
        #expect(registry.ids == [reserved, second])
        #expect(registry.remove(first) == nil)
    }
}
