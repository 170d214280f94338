import Foundation
import Testing

@testable import Depot
@testable import DepotInMemory

@Suite("InMemoryBackend id index")
struct InMemoryIDIndexTests {
    @Test("canonical numbers only: no sign, no leading zero, at most nine digits")
    func numbers() {
        #expect(IDIndex.number("0") == 0)
        #expect(IDIndex.number("42") == 42)
        #expect(IDIndex.number("999999999") == 999_999_999)
        for text in ["", "01", "00", "-1", "+1", "1.0", "1e3", "abc", "1a", "1234567890", "４２", " 1"] {
            #expect(IDIndex.number(text) == nil, "\(text)")
        }
    }

    @Test("numbers, texts and sparse numbers are found, replaced and removed alike")
    func setGetRemove() {
        var index = IDIndex()
        for number in 1...3000 { index["\(number)"] = number - 1 }
        index["abc"] = 3000
        index["01"] = 3001
        index["5000000"] = 3002
        #expect(index["1"] == 0)
        #expect(index["3000"] == 2999)
        #expect(index["abc"] == 3000)
        #expect(index["01"] == 3001)
        #expect(index["5000000"] == 3002)
        #expect(index["0"] == nil)
        #expect(index["3001"] == nil)
        #expect(index["4999999"] == nil)

        index["7"] = 42
        #expect(index["7"] == 42)
        #expect(index.removeValue(forKey: "7") == 42)
        #expect(index["7"] == nil)
        #expect(index.removeValue(forKey: "7") == nil)
        #expect(index.removeValue(forKey: "5000000") == 3002)
        #expect(index["5000000"] == nil)

        index.removeAll(keepingCapacity: true)
        #expect(index["1"] == nil)
        #expect(index["abc"] == nil)
        index["2"] = 0
        #expect(index["2"] == 0)
    }

    @Test("an id kept as text while the array was short is still found, then moved, once it grows")
    func textThenArray() {
        var index = IDIndex()
        index["2000"] = 0
        #expect(index["2000"] == 0)
        for number in 1...1500 { index["\(number)"] = number }
        #expect(index["2000"] == 0)
        index["2000"] = 9
        #expect(index["2000"] == 9)
        index["2000"] = nil
        #expect(index["2000"] == nil)
    }

    @Test("a backend with sparse, string and leading-zero ids answers each by its own text")
    func backendLookups() async throws {
        let database = #"{"rows": [{"id": 1}, {"id": 100000000}, {"id": "01"}, {"id": "x"}, {"id": 0}]}"#
        let backend = try InMemoryBackend(database: Data(database.utf8))
        for id in ["1", "100000000", "01", "x", "0"] {
            #expect(await memorySend(backend, .get, "rows/\(id)").memoryJSON != nil, "\(id)")
        }
        for id in ["001", "2", "1.0", "X"] {
            #expect(await memorySend(backend, .get, "rows/\(id)").memoryJSON == nil, "\(id)")
        }
        _ = await memorySend(backend, .delete, "rows/1")
        #expect(await memorySend(backend, .get, "rows/1").memoryJSON == nil)
        #expect(await memorySend(backend, .get, "rows/01").memoryJSON != nil)
    }
}
