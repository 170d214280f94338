import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// One validation, every backend: the same bad request fails the same way.
@Suite("Request validation")
struct RequestValidationTests {
    /// Requests no backend may send or answer, and what each carries.
    static let refused: [(label: String, request: BackendRequest)] = [
        ("CR LF in a value", BackendRequest(path: "posts", headers: ["X-A": "a\r\nX-Injected: 1"])),
        ("LF in a value", BackendRequest(path: "posts", headers: ["X-A": "a\nb"])),
        ("NUL in a value", BackendRequest(path: "posts", headers: ["X-A": "a\u{0}b"])),
        ("CR in a name", BackendRequest(path: "posts", headers: ["X-\rA": "a"])),
        ("colon in a name", BackendRequest(path: "posts", headers: ["X-A:": "a"])),
        ("space in a name", BackendRequest(path: "posts", headers: ["X A": "a"])),
        ("empty name", BackendRequest(path: "posts", headers: HTTPHeaders([.init(name: "", value: "a")]))),
        ("GET with a body", BackendRequest(method: .get, path: "posts", body: Data("{}".utf8))),
        ("HEAD with a body", BackendRequest(method: .head, path: "posts", body: Data("{}".utf8))),
        ("GET with a body file", transfer(.get, bodyFile: Self.readableFile)),
        ("a body and a body file", transfer(.post, body: Data("{}".utf8), bodyFile: Self.readableFile)),
        (
            "a body file that does not exist",
            transfer(.post, bodyFile: URL(fileURLWithPath: "/nonexistent/depot.bin"))
        ),
        ("a folder as the body file", transfer(.post, bodyFile: FileManager.default.temporaryDirectory)),
        (
            "a body file that is not a file URL",
            transfer(.post, bodyFile: URL(string: "https://example.com/a.bin"))
        ),
        (
            "a destination that is not a file URL",
            transfer(.get, destination: URL(string: "https://example.com/a.bin"))
        ),
        (
            "a destination that is a folder",
            transfer(.get, destination: FileManager.default.temporaryDirectory)
        ),
        ("a HEAD with a destination", transfer(.head, destination: Self.readableFile)),
    ]

    /// A small file every test run can read, written once, atomically: two runs at once (in two
    /// checkouts) never see it half written.
    static let readableFile: URL = {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("depot-validation-body.json")
        try? Data("{}".utf8).write(to: file, options: .atomic)
        return file
    }()

    private static func transfer(
        _ method: HTTPMethod, body: Data? = nil, bodyFile: URL? = nil, destination: URL? = nil
    ) -> BackendRequest {
        var request = BackendRequest(method: method, path: "posts", body: body)
        request.bodyFile = bodyFile
        request.destination = destination.map { DownloadDestination($0) }
        return request
    }

    /// The backends, each answering `GET /posts` with 200 when nothing is refused.
    private func backends() throws -> [(name: String, backend: any Backend)] {
        let memory = try InMemoryBackend(database: Data(#"{"posts": [{"id": 1}]}"#.utf8))
        // Nothing listens there: a request that got past validation could not succeed
        // either, but it would fail with `.cannotConnect`, not `.invalidRequest`.
        let network = URLSessionBackend(baseURL: try #require(URL(string: "http://127.0.0.1:9")))
        return [("InMemoryBackend", memory), ("URLSessionBackend", network)]
    }

    @Test(arguments: refused.indices)
    func everyBackendRefusesTheSameRequest(index: Int) async throws {
        let (label, request) = Self.refused[index]
        for (name, backend) in try backends() {
            let outcome = await awaitBounded { await backend.send(request).result }
            guard case .failure(.invalidRequest(let message))? = outcome else {
                Issue.record("\(name), \(label): \(String(describing: outcome))")
                continue
            }
            #expect(!message.isEmpty)
        }
    }

    @Test func validateIsThePublicRuleForBackendsOfYourOwn() throws {
        for (label, request) in Self.refused {
            #expect(throws: ServiceError.self, "\(label)") { try request.validate() }
        }
        try BackendRequest(method: .post, path: "posts", headers: ["X-A": "tab\tok"], body: Data()).validate()
        try BackendRequest(method: .get, path: "posts", body: Data()).validate()
    }

    @Test func inMemoryRefusesBeforeFaultsRoutesAndLatency() async throws {
        let backend = try InMemoryBackend(database: Data(#"{"posts": [{"id": 1}]}"#.utf8))
        backend.failNext(1, status: 503)
        backend.latency = 2 * hangBound
        let bad = BackendRequest(path: "posts", headers: ["X-A": "a\r\nb"])

        // Bounded below the latency: a refusal that waited for it would come too late.
        let outcome = await awaitBounded { await backend.send(bad).result }

        #expect(outcome?.failure?.caseName == "invalidRequest")
        #expect(backend.requests == [bad])
        backend.latency = 0
        // The pending fault was not used up by the refused request.
        #expect(await backend.send(BackendRequest(path: "posts")).result.failure?.statusCode == 503)
    }

    @Test func aBackendsBadDefaultHeaderFailsEveryRequest() async throws {
        let backend = URLSessionBackend(
            baseURL: try #require(URL(string: "http://127.0.0.1:9")), headers: ["X-Key": "a\nb"])

        let outcome = await backend.send(BackendRequest(path: "posts")).result

        #expect(outcome.failure?.caseName == "invalidRequest")
    }
}
