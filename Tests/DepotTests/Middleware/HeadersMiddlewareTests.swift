import Foundation
import Testing

@testable import Depot

@Suite("HeadersMiddleware")
struct HeadersMiddlewareTests {
    @Test func addsDefaultsTheRequestLacks() async throws {
        let backend = ScriptedBackend([])
        let client = backend.with(HeadersMiddleware(["Accept": "application/json", "X-Client": "ios/2.3"]))

        _ = try await client.send(BackendRequest(path: "users", headers: ["X-Trace": "abc"])).value

        let sent = try #require(backend.requests.first)
        #expect(sent.headers["Accept"] == "application/json")
        #expect(sent.headers["X-Client"] == "ios/2.3")
        #expect(sent.headers["X-Trace"] == "abc")
        #expect(sent.path == "users")
    }

    @Test func theRequestsOwnValueWinsWhateverTheCase() async throws {
        let backend = ScriptedBackend([])
        let client = backend.with(.headers(["Accept": "application/json", "X-Client": "ios"]))

        _ = try await client.send(BackendRequest(path: "files/1", headers: ["accept": "image/png"])).value

        let sent = try #require(backend.requests.first)
        #expect(sent.headers.values(for: "Accept") == ["image/png"])
        #expect(sent.headers["X-Client"] == "ios")
    }

    @Test func addsEveryValueOfAMultiValuedDefault() async throws {
        var defaults = HTTPHeaders()
        defaults.add("Accept", "application/json")
        defaults.add("Accept", "text/plain")
        let backend = ScriptedBackend([])

        _ = try await backend.with(.headers(defaults)).send(BackendRequest(path: "users")).value

        #expect(backend.requests.first?.headers.values(for: "Accept") == ["application/json", "text/plain"])
    }

    @Test func passesTheOutcomeThroughUnchanged() async throws {
        let backend = ScriptedBackend([
            .status(201, headers: ["Location": "/users/7"], body: #"{"id":7}"#),
            .status(404, body: #"{"detail":"Not found."}"#),
        ])
        let client = backend.with(.headers(["X-Client": "ios"]))

        let created = try await client.send(BackendRequest(method: .post, path: "users")).value
        let missing = await client.send(BackendRequest(path: "users/9")).result

        #expect(created.status == 201)
        #expect(created.headers["Location"] == "/users/7")
        #expect(created.body == Data(#"{"id":7}"#.utf8))
        #expect(
            throws: ServiceError.notFound(
                FailureResponse(status: 404, body: Data(#"{"detail":"Not found."}"#.utf8)))
        ) {
            try missing.get()
        }
    }
}
