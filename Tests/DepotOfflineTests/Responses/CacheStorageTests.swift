import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

/// A server scripted per request, whose answers a test may hold back and release in any
/// order: what a test needs to make a late `304` arrive after a newer `200`.
final class HeldServer: Backend, @unchecked Sendable {
    private let lock = NSLock()
    private let answer: @Sendable (BackendRequest) -> BackendResponse
    private var log: [BackendRequest] = []
    private var holding = false
    private var held: [(BackendResponse, Future<BackendResponse, ServiceError>.Promise)] = []

    init(_ answer: @escaping @Sendable (BackendRequest) -> BackendResponse) {
        self.answer = answer
    }

    /// Every request the server received, in order.
    var requests: [BackendRequest] {
        lock.withLock { log }
    }

    /// The next answer waits for ``release(_:)``; later ones are sent at once.
    func holdNext() {
        lock.withLock { holding = true }
    }

    /// How many answers are waiting.
    var heldCount: Int {
        lock.withLock { held.count }
    }

    /// Sends the held answer at `index` (in the order they were held).
    func release(_ index: Int) {
        let (response, promise) = lock.withLock { held[index] }
        promise(.success(response))
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future { promise in
            let response = self.answer(request)
            let wait = self.lock.withLock {
                self.log.append(request)
                guard self.holding else { return false }
                self.holding = false
                self.held.append((response, promise))
                return true
            }
            if !wait { promise(.success(response)) }
            return CancellationToken()
        }
    }
}

/// A value shared by a test and the closures it hands out.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    var current: Value {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// ``CacheMiddleware`` on a ``ResponseStorage`` of the app's: the same behaviour in memory
/// and in an ``OfflineStore``'s file, and what only a file gives, revalidation after a
/// restart.
@Suite("CacheMiddleware on a ResponseStorage")
struct CacheStorageTests {
    typealias Kind = ResponseStorageTests.Kind

    let folder: TemporaryFolder
    let server: InMemoryBackend
    let network: SwitchableBackend

    init() throws {
        folder = try TemporaryFolder()
        server = try membersServer()
        network = SwitchableBackend(server: server)
    }

    private func storage(_ kind: Kind) throws -> any ResponseStorage {
        switch kind {
        case .memory: return InMemoryResponseStorage()
        case .sqlite: return OfflineResponseStorage(store: try OfflineStore(at: folder.file("depot.sqlite")))
        }
    }

    private static func get(_ path: String, token: String? = nil) -> BackendRequest {
        var request = BackendRequest(path: path)
        if let token { request.headers["Authorization"] = "Bearer \(token)" }
        return request
    }

    @Test("a stored answer is revalidated and a 304 is answered from the storage", arguments: Kind.allCases)
    func revalidates(kind: Kind) async throws {
        let storage = try storage(kind)
        let client = network.with(.cache(storage: storage, account: { "alice" }))

        let first = try await client.send(Self.get("members/1")).value
        let second = try await client.send(Self.get("members/1")).value

        let tag = try #require(first.headers["ETag"])
        #expect(network.attempts.map { $0.headers["If-None-Match"] } == [nil, tag])
        #expect(second.status == 200)
        #expect(second.body == first.body)
        #expect(try storage.count() == 1)
    }

    @Test("revalidation survives a restart: a new store on the same file sends the stored ETag")
    func survivesARestart() async throws {
        let url = folder.file("depot.sqlite")
        let first: BackendResponse
        do {
            let storage = OfflineResponseStorage(store: try OfflineStore(at: url))
            first = try await network.with(.cache(storage: storage, account: { "alice" }))
                .send(Self.get("members/1")).value
        }
        // The app restarts: a new store, a new cache, the same file.
        let storage = OfflineResponseStorage(store: try OfflineStore(at: url))
        let again = try await network.with(.cache(storage: storage, account: { "alice" }))
            .send(Self.get("members/1")).value

        #expect(network.attempts.count == 2)
        #expect(network.attempts[1].headers["If-None-Match"] == first.headers["ETag"])
        #expect(network.attempts[1].headers["If-None-Match"] != nil)
        #expect(again.body == first.body)
        #expect(again.status == 200)
    }

    @Test(
        "entries are per account: another account is never revalidated from them, a new token is",
        arguments: Kind.allCases)
    func accountsNeverShare(kind: Kind) async throws {
        let storage = try storage(kind)
        let account = Shared("alice")
        let client = network.with(.cache(storage: storage, account: { account.current }))

        _ = try await client.send(Self.get("members/1", token: "t1")).value
        // The same user after a token refresh: still revalidated.
        _ = try await client.send(Self.get("members/1", token: "t2")).value
        account.current = "bob"
        _ = try await client.send(Self.get("members/1", token: "t3")).value

        #expect(network.attempts.map { $0.headers["If-None-Match"] != nil } == [false, true, false])
        #expect(try storage.count() == 2)
    }

    @Test("no credential reaches the file: not the request's token, not the answer's cookie")
    func noCredentialInTheFile() async throws {
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let storage = OfflineResponseStorage(store: store)
        let origin = HeldServer { request in
            BackendResponse(
                status: 200,
                headers: [
                    "ETag": "\"v1\"", "Set-Cookie": "session=cookie-0xC0FFEE; HttpOnly",
                    "Content-Type": "application/json", "Vary": "Authorization, Accept",
                ],
                body: Data(#"{"id":1}"#.utf8))
        }
        let client = origin.with(.cache(storage: storage, account: { "alice" }))
        _ = try await client.send(Self.get("me", token: "token-0xDEADBEEF")).value
        // Another token of the same account (a refresh) still revalidates, Vary or not.
        let again = try await client.send(Self.get("me", token: "token-0xFEEDFACE")).value
        #expect(again.body == Data(#"{"id":1}"#.utf8))
        #expect(origin.requests.last?.headers["If-None-Match"] == "\"v1\"")

        let bytes = try [url, url.companion("-wal")].filter(\.exists).map { try Data(contentsOf: $0) }
        #expect(!bytes.isEmpty)
        for data in bytes {
            #expect(data.range(of: Data("0xDEADBEEF".utf8)) == nil)
            #expect(data.range(of: Data("0xFEEDFACE".utf8)) == nil)
            #expect(data.range(of: Data("0xC0FFEE".utf8)) == nil)
        }
        #expect(bytes.contains { $0.range(of: Data(#"{"id":1}"#.utf8)) != nil })
    }

    @Test(
        "a write drops its path and its collection for every query and account, and nothing else",
        arguments: Kind.allCases)
    func writesDropWhatTheyMakeStale(kind: Kind) async throws {
        let storage = try storage(kind)
        let account = Shared("alice")
        let client = network.with(.cache(storage: storage, account: { account.current }))
        for user in ["alice", "bob"] {
            account.current = user
            for path in ["members", "members?name=Ada", "members/1", "members/2"] {
                _ = try await client.send(BackendRequest(path: path)).value
            }
        }
        #expect(try storage.count() == 8)

        _ = try await client.send(
            BackendRequest(method: .patch, path: "members/1", body: Data(#"{"name":"Ada L."}"#.utf8))
        ).value

        #expect(try storage.count() == 2)
        for user in ["alice", "bob"] {
            #expect(try storage.response(for: StoredResponseKey(path: "members/2", account: user)) != nil)
            #expect(try storage.response(for: StoredResponseKey(path: "members/1", account: user)) == nil)
            #expect(try storage.response(for: StoredResponseKey(path: "members", account: user)) == nil)
        }
    }

    @Test("a late 304 never overwrites a newer answer stored meanwhile", arguments: Kind.allCases)
    func aLate304KeepsTheNewerAnswer(kind: Kind) async throws {
        let storage = try storage(kind)
        let version = Shared(1)
        let origin = HeldServer { request in
            let tag = "\"v\(version.current)\""
            if request.headers["If-None-Match"] == tag {
                return BackendResponse(status: 304, headers: ["ETag": tag])
            }
            return BackendResponse(status: 200, headers: ["ETag": tag], body: Data(tag.utf8))
        }
        let client = origin.with(.cache(storage: storage, account: { "" }))
        _ = try await client.send(Self.get("doc")).value  // v1 stored

        // A revalidation with v1 is answered 304, but its answer is held back...
        origin.holdNext()
        let late = Task { try await client.send(Self.get("doc")).value }
        while origin.heldCount == 0 { await Task.yield() }
        // ...while the document changes and another request stores v2.
        version.current = 2
        let newer = try await client.send(Self.get("doc")).value
        #expect(newer.body == Data("\"v2\"".utf8))
        origin.release(0)
        let lateAnswer = try await late.value

        #expect(lateAnswer.body == Data("\"v1\"".utf8))  // what the server validated for it
        let stored = try storage.response(for: StoredResponseKey(path: "doc"))
        #expect(stored?.response.headers["ETag"] == "\"v2\"")
        _ = try await client.send(Self.get("doc")).value
        #expect(origin.requests.last?.headers["If-None-Match"] == "\"v2\"")
    }

    @Test("an answer arriving after removeAll() (a sign-out) is not stored", arguments: Kind.allCases)
    func signOutWhileInFlight(kind: Kind) async throws {
        let storage = try storage(kind)
        let origin = HeldServer { _ in
            BackendResponse(status: 200, headers: ["ETag": "\"v1\""], body: Data("a".utf8))
        }
        let cache = CacheMiddleware(storage: storage, account: { "alice" })
        let client = origin.with(cache)

        origin.holdNext()
        let inFlight = Task { try await client.send(Self.get("me")).value }
        while origin.heldCount == 0 { await Task.yield() }
        cache.removeAll()
        origin.release(0)
        #expect(try await inFlight.value.status == 200)

        #expect(try storage.count() == 0)
        _ = try await client.send(Self.get("me")).value  // after it, answers are stored again
        #expect(try storage.count() == 1)
    }

    @Test("a field the response varies on that the request did not send survives the file")
    func anUnsentVaryingFieldSurvivesARestart() async throws {
        let url = folder.file("depot.sqlite")
        let origin = HeldServer { request in
            let tag = "\"v1\""
            if request.headers["If-None-Match"] == tag {
                return BackendResponse(status: 304, headers: ["ETag": tag])
            }
            let language = request.headers["Accept-Language"] ?? "en"
            return BackendResponse(
                status: 200, headers: ["ETag": tag, "Vary": "Accept-Language"], body: Data(language.utf8))
        }
        do {
            let storage = OfflineResponseStorage(store: try OfflineStore(at: url))
            _ = try await origin.with(.cache(storage: storage, account: { "" })).send(Self.get("greeting"))
                .value
        }
        let storage = OfflineResponseStorage(store: try OfflineStore(at: url))
        let stored = try storage.response(for: StoredResponseKey(path: "greeting"))
        #expect(stored?.varying == ["accept-language": []])

        // A request in another language is not revalidated from it.
        let client = origin.with(.cache(storage: storage, account: { "" }))
        var french = Self.get("greeting")
        french.headers["Accept-Language"] = "fr"
        #expect(try await client.send(french).value.body == Data("fr".utf8))
        #expect(origin.requests.last?.headers["If-None-Match"] == nil)
        // The French answer replaced the first: a request without the field is not revalidated
        // from it, and after it stored its own, one like it is.
        _ = try await client.send(Self.get("greeting")).value
        #expect(origin.requests.last?.headers["If-None-Match"] == nil)
        _ = try await client.send(Self.get("greeting")).value
        #expect(origin.requests.last?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test(
        "with .offline(store) on the same file and account, each answer is stored once, served offline and revalidated"
    )
    func sharesTheStoreWithOffline() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let cache = CacheMiddleware(storage: OfflineResponseStorage(store: store), account: { "" })
        let members = MemberRepository(backend: network.with(.offline(store), cache))

        let online = try await members.findByID(1).value
        store.flush()
        #expect(try store.integer("SELECT count(*) FROM answers") == 1)

        network.fail(with: .cannotConnect)
        let receipt = AnswerReceipt()
        let offline = try await receipt.collect { try await members.findByID(1).value }
        #expect(offline == online)
        guard case .stored = receipt.source else {
            Issue.record("the receipt says \(receipt.source)")
            return
        }

        network.fail(with: nil)
        let again = try await members.findByID(1).value
        #expect(again == online)
        #expect(network.attempts.last?.headers["If-None-Match"] != nil)
        store.flush()
        #expect(try store.integer("SELECT count(*) FROM answers") == 1)
    }

    @Test("a storage that fails costs the entry, never the answer")
    func aFailingStorageIsTransparent() async throws {
        let url = folder.file("depot.sqlite")
        let store = try OfflineStore(at: url)
        let storage = OfflineResponseStorage(store: store)
        let client = network.with(.cache(storage: storage, account: { "" }))
        _ = try await client.send(Self.get("members/1")).value
        try store.sql("DROP TABLE answers")  // every later storage call fails

        let answer = try await client.send(Self.get("members/1")).value
        #expect(answer.status == 200)
        #expect(network.attempts.last?.headers["If-None-Match"] == nil)
        #expect(cacheCount(storage) == nil)
    }

    private func cacheCount(_ storage: any ResponseStorage) -> Int? {
        try? storage.count()
    }
}
