import Depot
import Foundation
import Testing

@testable import DepotOffline

/// A user as the in-memory server stores it.
struct Member: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
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
        server = try InMemoryBackend(
            database: Data(#"{"members": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]}"#.utf8))
        network = SwitchableBackend(server: server)
    }

    /// Waits until every stored answer `store` was given is written.
    private func settle(_ store: OfflineStore) {
        store.answerQueue.sync {}
    }

    @Test(arguments: [ServiceError.cannotConnect, .noConnection, .timedOut])
    func aReadThatCannotReachTheServerGetsTheStoredAnswerWithItsAge(failure: ServiceError) async throws {
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

    @Test func anAnswerFromTheNetworkSaysSo() async throws {
        let store = try OfflineStore(at: folder.file("depot.sqlite"))
        let members = MemberRepository(backend: network.with(.offline(store)))

        let receipt = AnswerReceipt()
        _ = try await receipt.collect { try await members.findByID(1).value }

        #expect(receipt.source == .network)
    }

    @Test func storedAnswersSurviveARestart() async throws {
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

    @Test func anotherAccountNeverSeesAnAnswer() async throws {
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

    @Test func anAnswerMarkedNoStoreIsNeverKept() async throws {
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
            .offline(store, policy: OfflinePolicy(servesStoredAnswersOnServerError: true)))
        _ = try await plain.send(BackendRequest(path: "members/1")).value
        settle(store)

        server.failNext(2, status: 503)

        #expect(await plain.send(BackendRequest(path: "members/1")).result.failure?.statusCode == 503)
        #expect(await lenient.send(BackendRequest(path: "members/1")).result.value?.status == 200)
    }

    @Test func staleIfErrorAllowsTheStoredAnswerOnAServerError() async throws {
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
