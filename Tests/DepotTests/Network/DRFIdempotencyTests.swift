import Depot
import DepotBackendConformance
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The DRF app's `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) over real
/// HTTP: a write is applied once per (space, key), a later request with the same key and
/// payload gets the stored answer with `Idempotent-Replayed: true`, another payload is a
/// 422, and `X-Test-Drop-Response: 1` applies a write and closes the connection unanswered.
///
/// Every test writes in a private space (`LiveServer.drfSpace()`), which starts with 100
/// posts, so the first post created is 101.
@Suite(.liveServers) struct DRFIdempotencyTests {
    private func post(
        title: String, key: String?, headers: HTTPHeaders = [:]
    ) throws -> BackendRequest {
        var request = BackendRequest(
            method: .post, path: "posts", headers: headers,
            body: Data(#"{"userId": 1, "title": "\#(title)", "body": "text"}"#.utf8))
        request.headers["Content-Type"] = "application/json"
        if let key { request.headers["Idempotency-Key"] = key }
        return request
    }

    private func freshKey() -> String {
        UUID().uuidString.lowercased()
    }

    /// The ids of the space's posts titled `title` (a plain GET of the collection).
    private func ids(titled title: String, in backend: URLSessionBackend) async throws -> [Int] {
        let request = BackendRequest(path: "posts", query: [URLQueryItem(name: "title", value: title)])
        let body = try await backend.send(request).value.body
        let posts = try JSONDecoder().decode([[String: JSONValue]].self, from: body)
        return posts.compactMap { post in
            if case .int(let id) = post["id"] { id } else { nil }
        }
    }

    @Test func theSameKeyTwiceCreatesOneRecordAndReplaysTheAnswer() async throws {
        let backend = URLSessionBackend(baseURL: try LiveServer.drfSpace())
        let key = freshKey()
        let first = try await backend.send(post(title: "once", key: key)).value
        #expect(first.status == 201)
        #expect(first.headers["Idempotent-Replayed"] == nil)
        #expect(try first.json()["id"] == .int(101))
        let location = try #require(first.headers["Location"])
        #expect(location.hasSuffix("/posts/101"))

        let second = try await backend.send(post(title: "once", key: key)).value
        #expect(second.status == 201)
        #expect(second.headers["Idempotent-Replayed"] == "true")
        #expect(second.body == first.body)
        #expect(second.headers["Location"] == location)
        #expect(second.headers["Content-Type"] == first.headers["Content-Type"])

        #expect(try await ids(titled: "once", in: backend) == [101])
        // A write without a key is applied as usual: the next id is 102, not 103.
        #expect(try await backend.send(post(title: "plain", key: nil)).value.json()["id"] == .int(102))
    }

    @Test func theSameKeyWithAnotherPayloadIsRefusedWith422() async throws {
        let backend = URLSessionBackend(baseURL: try LiveServer.drfSpace())
        let key = freshKey()
        _ = try await backend.send(post(title: "first", key: key)).value
        let error = try #require(await backend.send(post(title: "second", key: key)).result.failure)
        guard case .clientError(let response) = error else {
            Issue.record("expected .clientError, got \(error)")
            return
        }
        #expect(response.status == 422)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let problem = try JSONDecoder().decode([String: JSONValue].self, from: response.body)
        #expect(problem["title"] == .string("Idempotency-Key is already used"))
        #expect(problem["status"] == .int(422))
        #expect(try await ids(titled: "first", in: backend) == [101])
        #expect(try await ids(titled: "second", in: backend).isEmpty)
    }

    @Test func theSameKeyWhileTheFirstIsInFlightIsAConflict() async throws {
        let base = try LiveServer.drfSpace()
        let key = freshKey()
        // The first answer is held for 2 s after the write (`X-Test-Delay`), its key in flight.
        let slow = try post(title: "slow", key: key, headers: ["X-Test-Delay": "2"])
        let first = Task { await URLSessionBackend(baseURL: base).send(slow).result }
        try await Task.sleep(for: .milliseconds(700))
        let backend = URLSessionBackend(baseURL: base)
        let error = try #require(await backend.send(post(title: "slow", key: key)).result.failure)
        #expect(error.caseName == "conflict", "\(error)")
        #expect(error.statusCode == 409)
        let answer = try await first.value.get()
        #expect(answer.status == 201)
        #expect(answer.headers["Idempotent-Replayed"] == nil)
        #expect(try await ids(titled: "slow", in: backend) == [101])
    }

    @Test func aWriteWhoseAnswerWasLostIsReplayedNotAppliedAgain() async throws {
        let base = try LiveServer.drfSpace()
        let key = freshKey()
        // The server applies the write, stores its answer under the key, and closes the
        // connection without a byte: the client cannot tell whether it happened.
        let dropped = try post(title: "lost", key: key, headers: ["X-Test-Drop-Response": "1"])
        let error = try #require(await URLSessionBackend(baseURL: base).send(dropped).result.failure)
        guard case .transport(let code, let description) = error else {
            Issue.record("expected .transport, got \(error)")
            return
        }
        #if canImport(FoundationNetworking)
            // libcurl's "Empty reply from server", as for the fault server's /close.
            #expect(code == URLError.Code.badServerResponse.rawValue, "\(description)")
        #endif

        let backend = URLSessionBackend(baseURL: base)
        #expect(try await ids(titled: "lost", in: backend) == [101])
        let replayed = try await backend.send(post(title: "lost", key: key)).value
        #expect(replayed.status == 201)
        #expect(replayed.headers["Idempotent-Replayed"] == "true")
        #expect(replayed.headers["Location"]?.hasSuffix("/posts/101") == true)
        #expect(try replayed.json()["id"] == .int(101))
        #expect(try await ids(titled: "lost", in: backend) == [101])
    }

    @Test func aDeleteWithAKeyIsAppliedOnce() async throws {
        let backend = URLSessionBackend(baseURL: try LiveServer.drfSpace())
        let key = freshKey()
        let delete = BackendRequest(method: .delete, path: "posts/7", headers: ["Idempotency-Key": key])
        let first = try await backend.send(delete).value
        let second = try await backend.send(delete).value
        #expect(first.status == 200)
        #expect(second.status == 200)
        #expect(second.headers["Idempotent-Replayed"] == "true")
        // Without the key the same DELETE runs again and finds nothing.
        let again = BackendRequest(method: .delete, path: "posts/7")
        #expect(await backend.send(again).result.failure?.caseName == "notFound")
    }

    @Test func keysBelongToTheirSpace() async throws {
        let key = freshKey()
        for _ in 0..<2 {
            let backend = URLSessionBackend(baseURL: try LiveServer.drfSpace())
            let answer = try await backend.send(post(title: "spaced", key: key)).value
            #expect(answer.status == 201)
            #expect(answer.headers["Idempotent-Replayed"] == nil)
            #expect(try await ids(titled: "spaced", in: backend) == [101])
        }
    }
}
