@_spi(BackendSupport) import Depot
import Foundation
import Testing

extension NetworkConformance {
    private static let credentials: HTTPHeaders = [
        "Authorization": "Bearer secret", "Cookie": "session=1", "X-Trace": "kept",
    ]

    private static func redirect(to target: String) -> BackendRequest {
        BackendRequest(
            path: "redirect-to", query: [URLQueryItem(name: "url", value: target)], headers: credentials)
    }

    /// The headers httpbin's `/headers` echoed, names as httpbin spells them.
    private static func echoedHeaders(_ response: BackendResponse) throws -> [String: JSONValue] {
        try #require(try response.conformanceJSON()["headers"]?.objectValue)
    }

    private static func hostHeader(_ url: URL) throws -> JSONValue {
        .string(try #require(url.host) + ":" + String(try #require(url.port)))
    }

    /// Redirects: followed on the same origin with every header; followed to another
    /// origin without `Authorization` and `Cookie`, also when redirected back; a chain; a
    /// loop; a `307` with a body. The second httpbin is the other origin (same host,
    /// another port).
    public static let redirects: [ConformanceCheck] = [
        ConformanceCheck("redirects: same origin keeps every header") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let headers = try echoedHeaders(try await backend.send(redirect(to: "/headers")).value)
            #expect(headers["Authorization"] == .string("Bearer secret"))
            #expect(headers["Cookie"] == .string("session=1"))
            #expect(headers["X-Trace"] == .string("kept"))
        },
        ConformanceCheck("redirects: a chain of three") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let response = try await backend.send(BackendRequest(path: "redirect/3")).value
            #expect(response.status == 200)
            #expect(try response.conformanceJSON()["url"]?.stringValue?.hasSuffix("/get") == true)
        },
        ConformanceCheck("redirects: never sends credentials to another origin") { subject in
            let other = try #require(LiveServer.httpbin2)
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let response = try await backend.send(redirect(to: other.absoluteString + "/headers")).value
            let headers = try echoedHeaders(response)
            #expect(headers["Host"] == (try hostHeader(other)))
            #expect(headers["Authorization"] == nil)
            #expect(headers["Cookie"] == nil)
            #expect(headers["X-Trace"] == .string("kept"))
        },
        ConformanceCheck("redirects: stays without credentials when redirected back") { subject in
            let home = try #require(LiveServer.httpbin)
            let other = try #require(LiveServer.httpbin2)
            let back = home.absoluteString + "/headers"
            let encoded = try #require(back.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let via = other.absoluteString + "/redirect-to?url=" + encoded
            let response = try await subject.backend(home).send(redirect(to: via)).value
            let headers = try echoedHeaders(response)
            #expect(headers["Host"] == (try hostHeader(home)))
            #expect(headers["Authorization"] == nil)
        },
        ConformanceCheck("redirects: more than the limit fail as transport -1007") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let result = await backend.send(BackendRequest(path: "redirect/25")).result
            guard case .transport(let code, _) = result.failure else {
                Issue.record("\(subject): expected .transport, got \(result)")
                return
            }
            #expect(code == HTTPRedirectRule.tooManyRedirectsCode)
        },
        ConformanceCheck("redirects: a 307 resends a PUT with its body, or reaches the caller") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let request = BackendRequest(
                method: .put, path: "redirect-to",
                query: [
                    URLQueryItem(name: "url", value: "/anything/moved"),
                    URLQueryItem(name: "status_code", value: "307"),
                ],
                body: Data(#"{"title":"kept"}"#.utf8))
            let result = await backend.send(request).result
            if subject.followsRedirectsWithBody {
                let json = try result.get().conformanceJSON()
                #expect(json["method"] == .string("PUT"))
                #expect(json["json"]?["title"] == .string("kept"))
            } else {
                #expect(result.failure?.conformanceCaseName == "unexpectedStatus")
                #expect(result.failure?.statusCode == 307)
            }
        },
        ConformanceCheck("redirects: a 303 after a POST is a GET without the body") { subject in
            let backend = subject.backend(try #require(LiveServer.httpbin))
            let request = BackendRequest(
                method: .post, path: "redirect-to",
                query: [
                    URLQueryItem(name: "url", value: "/get"), URLQueryItem(name: "status_code", value: "303"),
                ],
                body: Data(#"{"title":"dropped"}"#.utf8))
            let json = try await backend.send(request).value.conformanceJSON()
            #expect(json["url"]?.stringValue?.hasSuffix("/get") == true)
        },
    ]
}
