import Foundation
import Testing

@testable import Depot

/// Redirects: followed on the same origin with every header; followed to another
/// origin without `Authorization` and `Cookie`. The second httpbin is the other
/// origin (same host, another port).
@Suite(.liveServers) struct HTTPBinRedirectTests {
    private let credentials: HTTPHeaders = [
        "Authorization": "Bearer secret", "Cookie": "session=1", "X-Trace": "kept",
    ]

    private func redirect(to target: String) -> BackendRequest {
        BackendRequest(
            path: "redirect-to", query: [URLQueryItem(name: "url", value: target)], headers: credentials)
    }

    /// The headers httpbin's `/headers` echoed, names as httpbin spells them.
    private func echoedHeaders(_ response: BackendResponse) throws -> [String: JSONValue] {
        try #require(try response.json()["headers"]?.objectValue)
    }

    @Test func followsASameOriginRedirectWithEveryHeader() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let response = try await backend.send(redirect(to: "/headers")).value
        let headers = try echoedHeaders(response)
        #expect(headers["Authorization"] == .string("Bearer secret"))
        #expect(headers["Cookie"] == .string("session=1"))
        #expect(headers["X-Trace"] == .string("kept"))
    }

    @Test func followsARedirectChain() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let response = try await backend.send(BackendRequest(path: "redirect/3")).value
        #expect(response.status == 200)
        #expect(try response.json()["url"]?.stringValue?.hasSuffix("/get") == true)
    }

    @Test func neverSendsCredentialsToAnotherOrigin() async throws {
        let other = try #require(LiveServer.httpbin2)
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let response = try await backend.send(redirect(to: other.absoluteString + "/headers")).value
        let headers = try echoedHeaders(response)
        #expect(headers["Host"] == .string(try #require(other.host) + ":" + String(try #require(other.port))))
        #expect(headers["Authorization"] == nil)
        #expect(headers["Cookie"] == nil)
        #expect(headers["X-Trace"] == .string("kept"))
    }

    @Test func staysWithoutCredentialsWhenRedirectedBack() async throws {
        let home = try #require(LiveServer.httpbin)
        let other = try #require(LiveServer.httpbin2)
        let back = home.absoluteString + "/headers"
        let via = other.absoluteString + "/redirect-to?url=" + QueryEncoding.component(back)
        let backend = URLSessionBackend(baseURL: home)
        let response = try await backend.send(redirect(to: via)).value
        let headers = try echoedHeaders(response)
        #expect(headers["Host"] == .string(try #require(home.host) + ":" + String(try #require(home.port))))
        #expect(headers["Authorization"] == nil)
    }

    @Test func neverResendsA307WithoutItsBody() async throws {
        let backend = URLSessionBackend(baseURL: try #require(LiveServer.httpbin))
        let request = BackendRequest(
            method: .put, path: "redirect-to",
            query: [
                URLQueryItem(name: "url", value: "/anything/moved"),
                URLQueryItem(name: "status_code", value: "307"),
            ],
            body: Data(#"{"title":"kept"}"#.utf8))
        let result = await backend.send(request).result
        if TaskDelegate.dropsBodyOnRedirect {
            // FoundationNetworking would resend the PUT without its body: not followed.
            #expect(result.failure?.caseName == "unexpectedStatus")
            #expect(result.failure?.statusCode == 307)
        } else {
            let json = try result.get().json()
            #expect(json["method"] == .string("PUT"))
            #expect(json["json"]?["title"] == .string("kept"))
        }
    }
}
