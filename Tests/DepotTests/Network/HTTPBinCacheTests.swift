import DepotBackendConformance
import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``CacheMiddleware`` over real HTTP: httpbin's `/etag/{etag}` answers `If-None-Match`
/// with `304` and a failed `If-Match` with `412`; `/cache` answers any conditional `GET`
/// with `304`.
@Suite(.liveServers) struct HTTPBinCacheTests {
    /// httpbin through a cache, with a tap between the cache and the network.
    private func client(_ cache: CacheMiddleware = CacheMiddleware()) throws -> (any Backend, NetworkTap) {
        let tap = NetworkTap()
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin), middleware: [cache, tap])
        return (backend, tap)
    }

    @Test func aSecondGETOfAnETagIsA304ServedFromTheCache() async throws {
        let (backend, tap) = try client()
        let request = BackendRequest(segments: ["etag", "depot-v1"])

        let first = try await backend.send(request).value
        let second = try await backend.send(request).value

        #expect(first.status == 200)
        #expect(first.headers["ETag"] == "depot-v1")
        let sent = tap.exchanges.map(\.request)
        #expect(sent.count == 2)
        #expect(sent[0].headers["If-None-Match"] == nil)
        #expect(sent[1].headers["If-None-Match"] == "depot-v1")
        // The network answered 304 without a body; the caller got the stored 200.
        #expect(tap.responses.map(\.status) == [200, 304])
        #expect(tap.responses.last?.body.isEmpty == true)
        #expect(second.status == 200)
        #expect(second.body == first.body)
        #expect(second.headers["ETag"] == "depot-v1")
    }

    @Test func a304IsDecodedOncePerCallFromTheStoredBytes() async throws {
        let (backend, tap) = try client()
        let counter = DecodeCounter()
        let echo = EchoClient(backend: backend, coding: counter.coding)

        let first = try await echo.etag("depot-decode").value
        let second = try await echo.etag("depot-decode").value

        #expect(first == second)
        #expect(counter.count == 2)
        #expect(tap.responses.map(\.status) == [200, 304])
        #expect(tap.responses.map(\.body.isEmpty) == [false, true])
    }

    @Test func aFailedIfMatchIsAClearPreconditionError() async throws {
        let (backend, _) = try client()

        let refused = await backend.send(
            BackendRequest(segments: ["etag", "depot-v2"], headers: ["If-Match": "\"depot-v1\""])
        ).result
        let accepted = try await backend.send(
            BackendRequest(segments: ["etag", "depot-v2"], headers: ["If-Match": "\"depot-v2\""])
        ).value

        let error = try #require(refused.failure)
        #expect(error.isPreconditionFailed)
        #expect(error.statusCode == 412)
        #expect(error.localizedDescription.hasPrefix("Precondition failed (412): the resource changed"))
        #expect(accepted.status == 200)
    }

    @Test func lastModifiedIsRevalidatedWithIfModifiedSince() async throws {
        let cache = CacheMiddleware()
        let (backend, tap) = try client(cache)

        let first = try await backend.send(BackendRequest(path: "cache")).value
        let second = try await backend.send(BackendRequest(path: "cache")).value

        let lastModified = try #require(first.headers["Last-Modified"])
        #expect(HTTPDate.parse(lastModified) != nil)
        let revalidation = try #require(tap.exchanges.last?.request)
        #expect(revalidation.headers["If-Modified-Since"] == lastModified)
        #expect(tap.responses.last?.status == 304)
        #expect(second.status == 200)
        #expect(second.body == first.body)
        #expect(cache.count == 1)
    }

    @Test func theCallersOwnValidatorGetsThe304Itself() async throws {
        let (backend, tap) = try client()

        let answer = try await backend.send(
            BackendRequest(path: "cache", headers: ["If-Modified-Since": HTTPDate.format(Date())])
        ).value

        #expect(answer.status == 304)
        #expect(answer.body.isEmpty)
        #expect(tap.responses.map(\.status) == [304])
    }

    @Test func aDefaultURLCacheDoesNotTurnThe304IntoA200() async throws {
        // A session with a URL cache of its own: the 304 must still reach the middleware.
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
        configuration.requestCachePolicy = .useProtocolCachePolicy
        let tap = NetworkTap()
        let backend = URLSessionBackend(
            baseURL: try #require(LiveServer.httpbin), configuration: configuration,
            middleware: [CacheMiddleware(), tap])

        _ = try await backend.send(BackendRequest(segments: ["etag", "depot-v3"])).value
        let second = try await backend.send(BackendRequest(segments: ["etag", "depot-v3"])).value

        #expect(tap.responses.map(\.status) == [200, 304])
        #expect(second.status == 200)
    }
}

/// httpbin's echo, reduced to what the tests read, counting its decodes.
struct CountedEcho: Decodable, Sendable, Equatable {
    var url: String

    private enum CodingKeys: String, CodingKey {
        case url
    }

    init(from decoder: any Decoder) throws {
        url = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .url)
        if let key = DecodeCounter.key { (decoder.userInfo[key] as? DecodeCounter)?.increment() }
    }
}

/// A client for httpbin's `/etag/{etag}`, as a user would write a custom endpoint.
struct EchoClient: BackendClient {
    let backend: any Backend
    let coding: JSONCoding

    func etag(_ tag: String) -> Future<CountedEcho, ServiceError> {
        request(.get, ["etag", tag])
    }
}

/// How ``URLSessionBackend`` keeps the platform's URL cache out of conditional requests.
@Suite("URLSessionBackend conditional requests")
struct URLSessionConditionalRequestTests {
    private let builder = URLRequestBuilder(
        baseURL: URL(string: "https://api.example.com/") ?? URL(fileURLWithPath: "/"), headers: [:],
        timeout: nil)

    @Test(
        arguments: [
            ["If-None-Match": "\"v1\""], ["If-Modified-Since": "Tue, 15 Nov 1994 12:45:26 GMT"],
        ] as [HTTPHeaders])
    func aRequestWithValidatorsIgnoresTheLocalCache(headers: HTTPHeaders) throws {
        let request = try builder.urlRequest(for: BackendRequest(path: "posts/1", headers: headers))
        #expect(request.cachePolicy == .reloadIgnoringLocalCacheData)
    }

    @Test func anyOtherRequestKeepsTheSessionsPolicy() throws {
        let request = try builder.urlRequest(for: BackendRequest(path: "posts/1"))
        #expect(request.cachePolicy == .useProtocolCachePolicy)
    }
}
