import Depot
import DepotInMemory
import Foundation
import Testing

@_spi(Testing) @testable import DepotOffline

/// A user as the in-memory server stores it.
struct Member: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// An in-memory server with two members (ids 1 and 2).
func membersServer() throws -> InMemoryBackend {
    try InMemoryBackend(
        database: Data(#"{"members": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]}"#.utf8))
}

/// The repository an app would write.
struct MemberRepository: Readable {
    typealias Entity = Member
    let backend: any Backend
    let name = "members"
}

@Suite("Stored reads")
struct OfflineReadTests {
    let folder: TemporaryFolder
    let server: InMemoryBackend
    let network: SwitchableBackend

    init() throws {
        folder = try TemporaryFolder()
        server = try membersServer()
        network = SwitchableBackend(server: server)
    }

    /// Writes every answer `store` is waiting to write.
    private func settle(_ store: OfflineStore) {
        store.flush()
    }

    @Test(arguments: [ServiceError.cannotConnect, .noConnection, .timedOut])
    func aReadThatCannotReachTheServerGetsTheStoredResponseWithItsAge(failure: ServiceError) async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let members = MemberRepository(backend: network.with(.offline(store)))
        let before = Date()
        let online = try await members.findAll().value
        settle(store)

        network.fail(with: failure)
        let receipt = AnswerReceipt()
        let offline = try await receipt.collect { try await members.findAll().value }

        #expect(offline == online)
        guard case .stored(let savedAt) = receipt.source else {
            Issue.record("the receipt says \(receipt.source)")
            return
        }
        #expect(savedAt >= before.addingTimeInterval(-1) && savedAt <= Date())
        let raw = try await network.with(.offline(store)).send(BackendRequest(path: "members")).value
        #expect(raw.headers["Age"].flatMap { Int($0) } ?? -1 >= 0)
    }

    /// A store whose answers wait a long time to be written, so a test sees them waiting.
    private func slowStore() throws -> OfflineStore {
        try OfflineStore(
            at: folder.file("depot.sqlite"), writeDelay: .seconds(60))
    }

    @Test func aResponseNotYetWrittenIsServedAtOnce() async throws {
        let store = try slowStore()
        let members = MemberRepository(backend: network.with(.offline(store)))
        let online = try await members.findByID(1).value

        // No flush: the answer is still waiting to be written with others.
        network.fail(with: .cannotConnect)
        let offline = try await members.findByID(1).value

        #expect(offline == online)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
        store.flush()
        #expect(try store.integer("SELECT count(*) FROM answers") == 1)
    }

    @Test func aBurstOfReadsIsWrittenTogether() async throws {
        let store = try slowStore()
        let members = MemberRepository(backend: network.with(.offline(store)))
        for round in 0..<20 { _ = try await members.findByID(1 + round % 2).value }

        store.flush()

        // Written one by one, each answer would have taken a newer use number (up to 20);
        // written as one batch, each key is written once, with the latest answer.
        #expect(try store.integer("SELECT count(*) FROM answers") == 2)
        #expect(try store.integer("SELECT max(last_used) FROM answers") == 2)
    }

    @Test func flushWritesEveryWaitingResponsePastOneBatch() async throws {
        let store = try slowStore()
        let backend = network.with(.offline(store))
        server.route(.get, "item/:id") { _ throws(ServiceError) in
            BackendResponse(status: 200, body: Data("{}".utf8))
        }
        for id in 0..<(ResponseWriter.batchLimit + 44) {
            _ = try await backend.send(BackendRequest(path: "item/\(id)")).value
        }

        store.flush()

        #expect(try store.integer("SELECT count(*) FROM answers") == Int64(ResponseWriter.batchLimit + 44))
    }

    @Test func signingOutForgetsResponsesWaitingToBeWritten() async throws {
        let store = try slowStore()
        let members = MemberRepository(backend: network.with(.offline(store)))
        _ = try await members.findByID(1).value

        try store.removeAll()
        store.flush()
        network.fail(with: .cannotConnect)

        #expect(await members.findByID(1).result.failure == .cannotConnect)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
    }

    @Test func aResponseArrivingAfterSignOutIsNotStored() async throws {
        let store = try slowStore()
        let gate = Gate()
        server.route(.get, "slow") { _ throws(ServiceError) in
            gate.wait()
            return BackendResponse(status: 200, body: Data("{}".utf8))
        }
        let backend = network.with(.offline(store))
        async let answer = backend.send(BackendRequest(path: "slow")).result
        #expect(await gate.arrived())

        try store.removeAll()
        gate.open()
        _ = await answer
        store.flush()

        #expect(!gate.gaveUp)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
    }

    @Test(arguments: [
        "=", "max-age=5,=", " , ,=", "max-age=\"9\", stale-if-error=-5", "max-age=99999999999999999999",
    ])
    func anyCacheControlIsReadWithoutTrapping(value: String) async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        server.route(.get, "odd") { _ throws(ServiceError) in
            BackendResponse(
                status: 200, headers: ["Cache-Control": value, "Age": "-50"], body: Data("{}".utf8))
        }
        let backend = network.with(.offline(store))
        _ = try await backend.send(BackendRequest(path: "odd", headers: ["Cache-Control": value])).value
        network.fail(with: .cannotConnect)

        let served = try await backend.send(BackendRequest(path: "odd")).value

        // The server's negative Age is ignored: only the seconds since it was stored count.
        let age = served.headers["Age"].flatMap { Int($0) }
        #expect(age.map { (0..<60).contains($0) } == true)
    }

    @Test func removingAResponseWaitingToBeWrittenRemovesIt() async throws {
        let store = try slowStore()
        let members = MemberRepository(backend: network.with(.offline(store)))
        _ = try await members.findAll().value

        let removed = try OfflineResponseStorage(store: store).removeResponse(
            for: StoredResponseKey(method: .get, path: "members"))
        store.flush()
        network.fail(with: .cannotConnect)

        #expect(removed)
        #expect(await members.findAll().result.failure == .cannotConnect)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
    }

    @Test(arguments: [("0000000000003600", 3600), ("99999999999999999999", Int(Int32.max)), ("0", 0)])
    func deltaSecondsSaturateAndIgnoreLeadingZeros(text: String, seconds: Int) {
        #expect(CacheControl.deltaSeconds(Substring(text)) == seconds)
    }

    @Test func aWriteThePolicyExcludesIsNeverQueued() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let policy = OfflinePolicy(queuesWrite: { !$0.path.hasPrefix("auth/") })
        let backend = network.with(.offline(store, policy: policy))
        network.fail(with: .cannotConnect)

        let login = await backend.send(
            BackendRequest(method: .post, path: "auth/login", body: Data(#"{"password": "hunter2"}"#.utf8))
        ).result

        #expect(login.failure == .cannotConnect)
        #expect(try store.outbox.entries().isEmpty)
    }

    @Test func aTooManyRequestsAnswerIsNotReplacedEvenWhenServerErrorsAre() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let lenient = network.with(
            .offline(store, policy: OfflinePolicy(servesStoredResponsesOnServerError: true)))
        _ = try await lenient.send(BackendRequest(path: "members/1")).value
        server.failNext(1, status: 429)

        #expect(await lenient.send(BackendRequest(path: "members/1")).result.failure?.statusCode == 429)
    }

    @Test func anAnswerFromTheNetworkSaysSo() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let members = MemberRepository(backend: network.with(.offline(store)))

        let receipt = AnswerReceipt()
        _ = try await receipt.collect { try await members.findByID(1).value }

        #expect(receipt.source == .network)
    }

    @Test func storedResponsesSurviveARestart() async throws {
        let file = folder.file("depot.sqlite")
        do {
            let store = try OfflineStore(at: file)
            _ = try await MemberRepository(backend: network.with(.offline(store))).findByID(2).value
            settle(store)
        }
        network.fail(with: .cannotConnect)

        let reopened = try OfflineStore(at: file)
        let member = try await MemberRepository(backend: network.with(.offline(reopened))).findByID(2).value

        #expect(member == Member(id: 2, name: "Grace"))
    }

    @Test func anotherAccountNeverSeesAStoredResponse() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let account = Account("ada")
        let policy = OfflinePolicy(account: { account.name })
        let members = MemberRepository(backend: network.with(.offline(store, policy: policy)))
        _ = try await members.findAll().value
        settle(store)

        network.fail(with: .cannotConnect)
        account.name = "grace"
        let other = await members.findAll().result
        account.name = "ada"
        let same = await members.findAll().result

        #expect(other.failure == .cannotConnect)
        #expect(same.value?.count == 2)
    }

    @Test func aResponseMarkedNoStoreIsNeverStored() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        server.route(.get, "secret") { _ throws(ServiceError) in
            BackendResponse(
                status: 200, headers: ["Cache-Control": "private, no-store"], body: Data("{}".utf8))
        }
        let backend = network.with(.offline(store))
        _ = try await backend.send(BackendRequest(path: "secret")).value
        settle(store)

        network.fail(with: .cannotConnect)

        #expect(await backend.send(BackendRequest(path: "secret")).result.failure == .cannotConnect)
        #expect(try store.integer("SELECT count(*) FROM answers") == 0)
    }

    @Test func cookiesAreNotStored() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        server.route(.get, "me") { _ throws(ServiceError) in
            BackendResponse(
                status: 200, headers: ["Set-Cookie": "session=s3cret", "ETag": "\"1\""], body: Data("{}".utf8)
            )
        }
        let backend = network.with(.offline(store))
        _ = try await backend.send(BackendRequest(path: "me")).value
        settle(store)
        network.fail(with: .cannotConnect)

        let served = try await backend.send(BackendRequest(path: "me")).value

        #expect(served.headers["Set-Cookie"] == nil)
        #expect(served.headers["ETag"] == "\"1\"")
    }

    @Test func theByteBoundEvictsTheLeastRecentlyUsed() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        server.route(.get, "blob/:id") { context throws(ServiceError) in
            BackendResponse(status: 200, body: Data(repeating: UInt8(ascii: "a"), count: 400))
        }
        let backend = network.with(.offline(store, policy: OfflinePolicy(maxBytes: 1000)))
        for id in 1...3 { _ = try await backend.send(BackendRequest(path: "blob/\(id)")).value }
        settle(store)
        network.fail(with: .cannotConnect)

        #expect(await backend.send(BackendRequest(path: "blob/1")).result.failure == .cannotConnect)
        #expect(await backend.send(BackendRequest(path: "blob/3")).result.value?.body.count == 400)
    }

    @Test func aServerErrorIsServedFromTheStoreOnlyWhenAllowed() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let plain = network.with(.offline(store))
        let lenient = network.with(
            .offline(store, policy: OfflinePolicy(servesStoredResponsesOnServerError: true)))
        _ = try await plain.send(BackendRequest(path: "members/1")).value
        settle(store)

        server.failNext(2, status: 503)

        #expect(await plain.send(BackendRequest(path: "members/1")).result.failure?.statusCode == 503)
        #expect(await lenient.send(BackendRequest(path: "members/1")).result.value?.status == 200)
    }

    @Test func staleIfErrorAllowsTheStoredResponseOnAServerError() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        server.route(.get, "feed") { _ throws(ServiceError) in
            BackendResponse(
                status: 200, headers: ["Cache-Control": "max-age=0, stale-if-error=600"],
                body: Data("[]".utf8))
        }
        server.route(.get, "news") { _ throws(ServiceError) in
            BackendResponse(status: 200, headers: ["Cache-Control": "max-age=0"], body: Data("[]".utf8))
        }
        let backend = network.with(.offline(store))
        _ = try await backend.send(BackendRequest(path: "feed")).value
        _ = try await backend.send(BackendRequest(path: "news")).value
        settle(store)

        server.failNext(2, status: 500)

        #expect(await backend.send(BackendRequest(path: "feed")).result.value?.status == 200)
        #expect(await backend.send(BackendRequest(path: "news")).result.failure?.statusCode == 500)
    }

    @Test func aFailureThatIsTheServersAnswerIsNotReplaced() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let members = MemberRepository(backend: network.with(.offline(store)))
        _ = try await members.findByID(1).value
        settle(store)

        server.failNext(1, status: 404)

        #expect(await members.findByID(1).result.failure?.statusCode == 404)
    }
}

/// The signed-in account, switchable by a test.
final class Account: @unchecked Sendable {
    private let lock = NSLock()
    private var value: String

    init(_ name: String) { value = name }

    var name: String {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// Holds a route's answer until the test opens it.
final class Gate: @unchecked Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    private let lock = NSLock()
    private var timedOut = false

    /// Called by the route: says it arrived, then waits (at most `hangBound`) to be let through.
    func wait() {
        entered.signal()
        if released.wait(timeout: .now() + hangBound) == .timedOut { lock.withLock { timedOut = true } }
    }

    /// Whether the route gave up waiting (the test then tested nothing).
    var gaveUp: Bool { lock.withLock { timedOut } }

    /// Whether the route arrived within `hangBound` (the suite shares the machine's threads:
    /// under load the request may start a minute late).
    func arrived() async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: self.entered.wait(timeout: .now() + hangBound) == .success)
            }
        }
    }

    /// Lets the route answer.
    func open() { released.signal() }
}
