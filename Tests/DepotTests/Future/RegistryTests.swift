import DepotInMemory
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

    /// Random adds, reservations filled later, removals and replacements, against a dictionary
    /// as the model: the same elements, in the order of their numbers.
    @Test func agreesWithADictionaryUnderRandomOperations() {
        var generator = SplitMix64(seed: 0x5EED)
        var registry = Registry<Int>()
        var model: [Int: Int] = [:]
        var reserved: [Int] = []
        var issued: [Int] = []
        for step in 0..<4000 {
            switch generator.next() % 6 {
            case 0, 1:
                let id = registry.add(step)
                model[id] = step
                issued.append(id)
            case 2:
                reserved.append(registry.reserveID())
            case 3 where !reserved.isEmpty:
                let id = reserved.remove(at: Int(generator.next() % UInt64(reserved.count)))
                registry[id] = step
                model[id] = step
                issued.append(id)
            case 4 where !issued.isEmpty:
                let id = issued[Int(generator.next() % UInt64(issued.count))]
                #expect(registry.remove(id) == model.removeValue(forKey: id))
            case 5 where !issued.isEmpty:
                let id = issued[Int(generator.next() % UInt64(issued.count))]
                let value = generator.next() % 2 == 0 ? nil : step
                #expect(registry[id] == model[id])
                registry[id] = value
                model[id] = value
            default:
                break
            }
            #expect(registry.count == model.count)
            #expect(registry.isEmpty == model.isEmpty)
            if step % 97 == 0 { #expect(registry.ids == model.keys.sorted()) }
        }
        let expected = model.sorted { $0.key < $1.key }
        #expect(registry.ids == expected.map(\.key))
        #expect(registry.elements == expected.map(\.value))
        #expect(registry.count == model.count)
        #expect(registry.removeAll() == expected.map(\.value))
        #expect(registry.isEmpty)
    }

    /// Thousands held, all but one taken back in a scattered order (holes, compactions), then
    /// taken back and added again: the one left is found, and the order holds.
    @Test func takesBackFromThousands() {
        var registry = Registry<Int>()
        let ids = (0..<1000).map { registry.add($0) }
        var generator = SplitMix64(seed: 7)
        let kept = ids[617]
        for id in ids.shuffled(using: &generator) where id != kept {
            #expect(registry.remove(id) != nil)
            #expect(registry.remove(id) == nil)
        }
        #expect(registry.count == 1)
        #expect(registry.ids == [kept])
        #expect(registry[kept] == 617)
        registry[kept] = nil
        #expect(registry.isEmpty)
        registry[kept] = 618
        let later = registry.add(1000)
        #expect(registry.ids == [kept, later])
        #expect(registry.elements == [618, 1000])
    }
}
