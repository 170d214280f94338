import Depot
import Foundation
import Testing

@_spi(Testing) @testable import DepotOffline

/// The same behaviour from both ``ResponseStorage`` implementations: Depot's in memory and
/// DepotOffline's SQLite one.
@Suite("ResponseStorage: in memory and in SQLite alike")
struct ResponseStorageTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case memory
        case sqlite
        var testDescription: String { rawValue }
    }

    /// A storage of `kind` with the bounds given; the folder (for SQLite) lives as long as the
    /// returned value.
    private func makeStorage(
        _ kind: Kind, maxEntries: Int = 100, maxBytes: Int = 1 << 20
    ) throws -> (any ResponseStorage, TemporaryFolder) {
        let folder = try TemporaryFolder()
        switch kind {
        case .memory:
            return (InMemoryResponseStorage(maxEntries: maxEntries, maxBytes: maxBytes), folder)
        case .sqlite:
            let store = try OfflineStore(at: folder.file("depot.sqlite"))
            return (OfflineResponseStorage(store: store, maxEntries: maxEntries, maxBytes: maxBytes), folder)
        }
    }

    private static func answer(_ body: String, bytes: Int? = nil) -> StoredResponse {
        let data = bytes.map { Data(repeating: 65, count: $0) } ?? Data(body.utf8)
        return StoredResponse(
            BackendResponse(status: 200, body: data), storedAt: Date(timeIntervalSince1970: 1_000))
    }

    private static func key(_ path: String, account: String = "") -> StoredResponseKey {
        StoredResponseKey(path: path, account: account)
    }

    @Test(
        "a stored response comes back whole: status, header fields in order, body, date, varying",
        arguments: Kind.allCases)
    func roundTrip(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        let headers: HTTPHeaders = HTTPHeaders([
            .init(name: "Content-Type", value: "application/json"), .init(name: "Set-Cookie", value: "a=1"),
            .init(name: "Set-Cookie", value: "b=2"), .init(name: "ETag", value: "\"v1\""),
        ])
        let stored = StoredResponse(
            BackendResponse(status: 203, headers: headers, body: Data("{\"id\":1} é".utf8)),
            storedAt: Date(timeIntervalSince1970: 1_700_000_000.25),
            varying: ["accept-language": ["fr", "en"], "accept": ["application/json"]]
        )
        let key = StoredResponseKey(
            method: .get, path: "/posts/1",
            query: [URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "flag", value: nil)],
            account: "alice"
        )
        try storage.store(stored, for: key)
        #expect(try storage.response(for: key) == stored)
        #expect(try storage.count() == 1)
        #expect(try storage.totalBytes() == stored.byteCount + key.byteCount)
        // An empty body and no header fields come back as such.
        let empty = StoredResponse(BackendResponse(status: 204), storedAt: Date(timeIntervalSince1970: 5))
        try storage.store(empty, for: Self.key("/empty"))
        #expect(try storage.response(for: Self.key("/empty")) == empty)
    }

    @Test("method, path, query (order included) and account each tell keys apart", arguments: Kind.allCases)
    func keysAreDistinct(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        let a = URLQueryItem(name: "a", value: "1")
        let b = URLQueryItem(name: "b", value: "2")
        try storage.store(
            Self.answer("alice's"), for: StoredResponseKey(path: "/me", query: [a, b], account: "alice"))
        #expect(
            try storage.response(for: StoredResponseKey(path: "/me", query: [a, b], account: "bob")) == nil)
        #expect(try storage.response(for: StoredResponseKey(path: "/me", query: [a, b])) == nil)
        #expect(
            try storage.response(for: StoredResponseKey(path: "/me", query: [b, a], account: "alice")) == nil)
        #expect(
            try storage.response(for: StoredResponseKey(path: "/me", query: [a], account: "alice")) == nil)
        #expect(
            try storage.response(
                for: StoredResponseKey(method: .head, path: "/me", query: [a, b], account: "alice"))
                == nil)
        #expect(
            try storage.response(for: StoredResponseKey(path: "/me", query: [a, b], account: "alice"))?
                .response.body
                == Data("alice's".utf8))
        // A missing value and an empty one differ.
        try storage.store(
            Self.answer("nil"), for: StoredResponseKey(path: "/q", query: [.init(name: "x", value: nil)]))
        #expect(
            try storage.response(for: StoredResponseKey(path: "/q", query: [.init(name: "x", value: "")]))
                == nil)
    }

    @Test("storing again replaces the response and its bytes", arguments: Kind.allCases)
    func replace(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        try storage.store(Self.answer("", bytes: 1_000), for: Self.key("/a"))
        try storage.store(Self.answer("", bytes: 10), for: Self.key("/a"))
        #expect(try storage.count() == 1)
        #expect(try storage.totalBytes() == 10 + "/a".utf8.count)
        #expect(try storage.response(for: Self.key("/a"))?.response.body.count == 10)
    }

    @Test(
        "the least recently used go first when the bytes run over; a read counts as a use",
        arguments: Kind.allCases)
    func evictsByBytes(kind: Kind) throws {
        // Each answer costs 1_000 body bytes + 2 path bytes; four fit, five do not.
        let (storage, _) = try makeStorage(kind, maxBytes: 4_100)
        for path in ["/a", "/b", "/c", "/d"] {
            try storage.store(Self.answer("", bytes: 1_000), for: Self.key(path))
        }
        #expect(try storage.count() == 4)
        #expect(try storage.response(for: Self.key("/a")) != nil)  // /a is now the most recent
        #expect(try storage.store(Self.answer("", bytes: 1_000), for: Self.key("/e")) == 1)
        #expect(try storage.response(for: Self.key("/b")) == nil)  // the least recently used
        for path in ["/a", "/c", "/d", "/e"] { #expect(try storage.response(for: Self.key(path)) != nil) }
        // One big answer pushes out as many as it needs.
        #expect(try storage.store(Self.answer("", bytes: 2_500), for: Self.key("/big")) == 3)
        #expect(try storage.totalBytes() <= 4_100)
        #expect(try storage.response(for: Self.key("/e")) != nil)
        #expect(try storage.response(for: Self.key("/big")) != nil)
    }

    @Test(
        "a response larger than the bound alone is not kept, and removes the old one",
        arguments: Kind.allCases)
    func tooLarge(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind, maxBytes: 1_000)
        try storage.store(Self.answer("small"), for: Self.key("/a"))
        try storage.store(Self.answer("kept"), for: Self.key("/b"))
        #expect(try storage.store(Self.answer("", bytes: 5_000), for: Self.key("/a")) == 0)
        #expect(try storage.response(for: Self.key("/a")) == nil)
        #expect(try storage.response(for: Self.key("/b")) != nil)
    }

    @Test("the entry bound evicts the least recently used too", arguments: Kind.allCases)
    func evictsByCount(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind, maxEntries: 2)
        try storage.store(Self.answer("1"), for: Self.key("/1"))
        try storage.store(Self.answer("2"), for: Self.key("/2"))
        _ = try storage.response(for: Self.key("/1"))
        try storage.store(Self.answer("3"), for: Self.key("/3"))
        #expect(try storage.count() == 2)
        #expect(try storage.response(for: Self.key("/2")) == nil)
    }

    @Test("remove one, then all", arguments: Kind.allCases)
    func removal(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        try storage.store(Self.answer("1"), for: Self.key("/1"))
        try storage.store(Self.answer("2"), for: Self.key("/2"))
        #expect(try storage.removeResponse(for: Self.key("/1")))
        #expect(try !storage.removeResponse(for: Self.key("/1")))
        #expect(try storage.count() == 1)
        try storage.removeAllResponses()
        #expect(try storage.count() == 0)
        #expect(try storage.totalBytes() == 0)
    }

    /// A store whose waiting answers are written only by `flush()` (the writer's own timer
    /// never fires during a test), its storage, and the folder that holds it.
    private static func storeWrittenOnFlush() throws -> (
        OfflineStore, OfflineResponseStorage, TemporaryFolder
    ) {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"), writeDelay: .seconds(600))
        return (store, OfflineResponseStorage(store: store), folder)
    }

    @Test(
        "an answer still waiting to be written is replaced like a stored one, and is then never written; a newer one waiting is kept"
    )
    func replaceWaitingAnswer() throws {
        let (store, storage, folder) = try Self.storeWrittenOnFlush()
        defer { withExtendedLifetime(folder) {} }
        let writer = store.responseWriter
        let key = Self.key("/posts/1")
        let waiting = Self.answer("waiting")
        let refreshed = StoredResponse(
            BackendResponse(status: 200, body: Data("refreshed".utf8)),
            storedAt: Date(timeIntervalSince1970: 3_000))
        writer.store(waiting, for: key, in: storage, generation: writer.generation)
        #expect(try storage.response(for: key) == waiting)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
        #expect(try storage.replaceResponse(waiting, with: refreshed, for: key))
        #expect(writer.waitingResponse(for: key) == nil)
        store.flush()
        #expect(try storage.response(for: key) == refreshed)

        // A replace made on what is no longer the answer (the one waiting is newer) changes
        // nothing: the waiting one is kept and written.
        writer.store(waiting, for: key, in: storage, generation: writer.generation)
        #expect(try !storage.replaceResponse(refreshed, with: Self.answer("stale"), for: key))
        #expect(writer.waitingResponse(for: key) == waiting)
        store.flush()
        #expect(try storage.response(for: key) == waiting)
    }

    @Test("an equal answer stored again is a newer one: a discard of the earlier one keeps it")
    func equalAnswerStoredAgainIsKept() throws {
        let (store, storage, folder) = try Self.storeWrittenOnFlush()
        defer { withExtendedLifetime(folder) {} }
        let writer = store.responseWriter
        let key = Self.key("/posts/1")
        let answer = Self.answer("same")
        writer.store(answer, for: key, in: storage, generation: writer.generation)
        let first = try #require(writer.waitingEntry(for: key))
        writer.store(answer, for: key, in: storage, generation: writer.generation)
        let second = try #require(writer.waitingEntry(for: key))
        #expect(second.response == first.response && second.number != first.number)
        #expect(!writer.discard(key, ifNumber: first.number))
        #expect(writer.waitingEntry(for: key)?.number == second.number)
        #expect(writer.discard(key, ifNumber: second.number))
        #expect(writer.waitingEntry(for: key) == nil)
    }

    @Test("replacing is a compare-and-swap: only what is still stored is replaced", arguments: Kind.allCases)
    func replaceIsCompareAndSwap(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        let key = Self.key("/posts/1")
        let old = Self.answer("old")
        let newer = StoredResponse(
            BackendResponse(status: 200, body: Data("newer".utf8)),
            storedAt: Date(timeIntervalSince1970: 2_000))
        let refreshed = StoredResponse(
            BackendResponse(status: 200, body: Data("old".utf8)), storedAt: Date(timeIntervalSince1970: 3_000)
        )

        #expect(try !storage.replaceResponse(old, with: refreshed, for: key))  // nothing stored
        #expect(try storage.response(for: key) == nil)

        try storage.store(old, for: key)
        try storage.store(newer, for: key)  // a newer answer arrived meanwhile
        #expect(try !storage.replaceResponse(old, with: refreshed, for: key))
        #expect(try storage.response(for: key) == newer)

        #expect(try storage.replaceResponse(newer, with: refreshed, for: key))
        #expect(try storage.response(for: key) == refreshed)
        #expect(try storage.totalBytes() == refreshed.byteCount + key.byteCount)

        #expect(try storage.replaceResponse(refreshed, with: nil, for: key))
        #expect(try storage.count() == 0)
    }

    @Test(
        "a write's resource drops its answers for every query and account, and no other",
        arguments: Kind.allCases)
    func removalByResource(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        let stale = [
            StoredResponseKey(path: "posts/1"),
            StoredResponseKey(path: "/posts/1/", account: "bob"),
            StoredResponseKey(path: "posts/1", query: [.init(name: "_embed", value: "comments")]),
            StoredResponseKey(path: "posts/1?_expand=user", account: "alice"),
            StoredResponseKey(method: .head, path: "posts/1"),
        ]
        let kept = [
            StoredResponseKey(path: "posts"),
            StoredResponseKey(path: "posts/10"),
            StoredResponseKey(path: "posts/1/comments"),
            StoredResponseKey(path: "users/1/posts/1"),
            StoredResponseKey(path: "xposts/1"),
        ]
        for key in stale + kept { try storage.store(Self.answer(key.path), for: key) }

        #expect(try storage.removeResponses(forResource: "posts/1") == stale.count)
        for key in stale { #expect(try storage.response(for: key) == nil, "\(key.path) is stale") }
        for key in kept { #expect(try storage.response(for: key) != nil, "\(key.path) is kept") }
        #expect(try storage.removeResponses(forResource: "posts/1") == 0)
        #expect(try storage.count() == kept.count)
        #expect(StoredResponseKey(path: "//posts/1/?a=1#top").resource == "posts/1")
    }

    @Test("a stored response never holds a field that sets or carries a credential", arguments: Kind.allCases)
    func credentialFieldsAreNeverStored(kind: Kind) throws {
        let (storage, _) = try makeStorage(kind)
        let response = BackendResponse(
            status: 200,
            headers: [
                "Set-Cookie": "session=s3cr3t", "set-cookie2": "b=2", "Authorization": "Bearer t0ken",
                "Proxy-Authorization": "Basic eA==", "ETag": "\"v1\"",
            ])
        try storage.store(StoredResponse(response), for: Self.key("/me"))
        let stored = try storage.response(for: Self.key("/me"))
        #expect(stored?.response.headers.map(\.name) == ["ETag"])
    }

    @Test("8 tasks storing and reading at once", arguments: Kind.allCases)
    func concurrentUse(kind: Kind) async throws {
        let (storage, folder) = try makeStorage(kind, maxEntries: 1_000, maxBytes: 10 << 20)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        let key = Self.key("/t\(task)/\(index)")
                        try storage.store(Self.answer("\(task)-\(index)"), for: key)
                        #expect(
                            try storage.response(for: key)?.response.body == Data("\(task)-\(index)".utf8))
                        _ = try storage.response(for: Self.key("/t\((task + 1) % 8)/\(index)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try storage.count() == 400)
        withExtendedLifetime(folder) {}
    }
}

@Suite("OfflineResponseStorage: on disk")
struct OfflineResponseStorageTests {
    @Test("answers survive a restart: a new store on the same file serves them with their date")
    func survivesReopen() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let key = StoredResponseKey(
            path: "/photos", query: [.init(name: "albumId", value: "1")], account: "alice")
        let stored = StoredResponse(
            BackendResponse(status: 200, headers: ["ETag": "\"x\""], body: Data("[1,2,3]".utf8)),
            storedAt: Date(timeIntervalSince1970: 1_750_000_000)
        )
        do {
            let storage = OfflineResponseStorage(store: try OfflineStore(at: url))
            try storage.store(stored, for: key)
        }
        let storage = OfflineResponseStorage(store: try OfflineStore(at: url))
        #expect(try storage.response(for: key) == stored)
        #expect(try storage.response(for: key)?.storedAt == Date(timeIntervalSince1970: 1_750_000_000))
    }

    @Test("a look-up only reads the file; its recency is written with the next write, before eviction")
    func lookUpsWriteRecencyLater() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url, writeDelay: .seconds(60))
        let storage = OfflineResponseStorage(store: store, maxEntries: 2)
        /// The store's file and log, byte for byte: a write shows even where it leaves their sizes.
        func fileBytes() throws -> [Data] {
            try ["", "-wal"].map { try Data(contentsOf: url.companion($0)) }
        }
        func byRecency() throws -> [String] {
            try store.database.withConnection { connection throws(OfflineStoreError) in
                try connection.texts("SELECT path FROM answers ORDER BY last_used")
            }
        }
        let answer = StoredResponse(BackendResponse(status: 200, body: Data("x".utf8)))
        try storage.store(answer, for: StoredResponseKey(path: "/a"))
        try storage.store(answer, for: StoredResponseKey(path: "/b"))
        let written = try fileBytes()

        #expect(try storage.response(for: StoredResponseKey(path: "/a")) != nil)
        #expect(try byRecency() == ["/a", "/b"])  // nothing written yet
        #expect(try fileBytes() == written)  // the look-up wrote nothing to the files
        store.flush()
        #expect(try byRecency() == ["/b", "/a"])

        // Without a flush, the next store writes the recency before it evicts.
        #expect(try storage.response(for: StoredResponseKey(path: "/b")) != nil)
        try storage.store(answer, for: StoredResponseKey(path: "/c"))
        #expect(try byRecency() == ["/b", "/c"])
    }

    @Test("the running totals the bounds read stay equal to counting the answers")
    func totalsStayExact() throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let storage = OfflineResponseStorage(store: store, maxEntries: 5, maxBytes: 600)
        for round in 0..<40 {
            let body = Data(repeating: 65, count: 10 + round * 7 % 90)
            try storage.store(
                StoredResponse(BackendResponse(status: 200, body: body)),
                for: StoredResponseKey(path: "/\(round % 9)"))
            if round % 6 == 5 { try storage.removeResponse(for: StoredResponseKey(path: "/\(round % 4)")) }
            #expect(try store.integer("SELECT count FROM answer_totals") == Int64(try storage.count()))
            #expect(try store.integer("SELECT bytes FROM answer_totals") == Int64(try storage.totalBytes()))
            #expect(try storage.count() <= 5 && storage.totalBytes() <= 600)
        }
        try store.removeAll()
        #expect(try store.integer("SELECT count FROM answer_totals") == 0)
    }

    @Test("the store's removeAll() empties the answers")
    func storeRemoveAll() throws {
        let folder = try TemporaryFolder()
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let storage = OfflineResponseStorage(store: store)
        try storage.store(StoredResponse(BackendResponse(status: 200)), for: StoredResponseKey(path: "/a"))
        try store.removeAll()
        #expect(try storage.count() == 0)
    }

    @Test("a stored row whose bytes do not parse is a corrupt error naming the file, not a crash")
    func unreadableRow() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let storage = OfflineResponseStorage(store: store)
        let key = StoredResponseKey(path: "/a")
        try storage.store(StoredResponse(BackendResponse(status: 200, headers: ["A": "b"])), for: key)
        try store.sql("UPDATE answers SET headers = x'00000009ff'")
        let error = offlineStoreError { _ = try storage.response(for: key) }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains(url.filePath) == true)
    }

    @Test("field coding round-trips and refuses bytes cut short")
    func fieldCoding() {
        let pairs: [(name: String, value: String?)] = [("a", "1"), ("", ""), ("é", nil), ("k", "v\u{0}w")]
        let data = FieldCoding.encode(pairs)
        let decoded = FieldCoding.decode(data)
        #expect(decoded?.map(\.name) == pairs.map(\.name))
        #expect(decoded?.map(\.value) == pairs.map(\.value))
        for cut in 1..<data.count where FieldCoding.decode(data.prefix(cut)) != nil {
            // A prefix may end exactly between pairs; then it is the first pairs.
            #expect(FieldCoding.decode(data.prefix(cut))?.count ?? 0 < pairs.count)
        }
        #expect(FieldCoding.decode(Data([0xFF, 0xFF, 0xFF, 0xFF])) == nil)  // a missing name
    }
}
