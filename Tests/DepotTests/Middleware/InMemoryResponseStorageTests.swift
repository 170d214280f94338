import Foundation
import Testing

@testable import Depot

@Suite("InMemoryResponseStorage")
struct InMemoryResponseStorageTests {
    private static func response(bytes: Int) -> StoredResponse {
        StoredResponse(BackendResponse(status: 200, body: Data(repeating: 1, count: bytes)))
    }

    @Test("keeps a response per key, counts its bytes with the key's, and never throws")
    func storeAndRead() {
        let storage = InMemoryResponseStorage(maxEntries: 10, maxBytes: 10_000)
        let key = StoredResponseKey(
            path: "/posts", query: [URLQueryItem(name: "page", value: "2")], account: "a")
        let stored = StoredResponse(
            BackendResponse(status: 200, headers: ["ETag": "\"1\""], body: Data("[]".utf8)),
            storedAt: Date(timeIntervalSince1970: 42)
        )
        storage.store(stored, for: key)
        #expect(storage.response(for: key) == stored)
        #expect(
            storage.response(for: StoredResponseKey(path: "/posts", query: key.query, account: "b")) == nil)
        #expect(storage.totalBytes() == stored.byteCount + key.byteCount)
        #expect(stored.byteCount == 2 + "ETag".utf8.count + "\"1\"".utf8.count + 4)
        #expect(key.byteCount == "/posts".utf8.count + "a".utf8.count + "page".utf8.count + 1 + 2)
    }

    @Test("evicts the least recently used past the byte bound; reads count as use")
    func evictsLeastRecentlyUsed() {
        let storage = InMemoryResponseStorage(maxEntries: 10, maxBytes: 250)
        for path in ["/1", "/2"] {
            storage.store(Self.response(bytes: 100), for: StoredResponseKey(path: path))
        }
        _ = storage.response(for: StoredResponseKey(path: "/1"))
        #expect(storage.store(Self.response(bytes: 100), for: StoredResponseKey(path: "/3")) == 1)
        #expect(storage.response(for: StoredResponseKey(path: "/2")) == nil)
        #expect(storage.count() == 2)
        #expect(storage.removeResponse(for: StoredResponseKey(path: "/1")))
        storage.removeAllResponses()
        #expect(storage.count() == 0)
    }

    @Test("negative bounds keep nothing")
    func negativeBounds() {
        let storage = InMemoryResponseStorage(maxEntries: -1, maxBytes: -5)
        #expect(storage.maxEntries == 0)
        #expect(storage.maxBytes == 0)
        storage.store(Self.response(bytes: 0), for: StoredResponseKey(path: "/"))
        #expect(storage.count() == 0)
    }
}
