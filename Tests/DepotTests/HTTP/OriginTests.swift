import DepotInMemory
import Foundation
import Testing

@_spi(BackendSupport) @testable import Depot

/// The one origin rule: every layer that decides whether a URL is the backend's own
/// (and so may carry its credentials) judges the same URL the same way.
@Suite struct OriginTests {
    private func origin(_ text: String) throws -> Origin? {
        Origin(try #require(URL(string: text)))
    }

    @Test(arguments: [
        ("https://api.example.com", "https://API.example.com:443"),
        ("http://api.example.com:80/a", "HTTP://api.example.com/b"),
        ("https://user:secret@api.example.com", "https://api.example.com"),
        ("http://[::1]:80", "http://[::1]"),
    ])
    func sameOrigin(_ first: String, _ second: String) throws {
        #expect(try origin(first) == origin(second))
    }

    @Test(arguments: [
        ("http://api.example.com", "https://api.example.com"),
        ("https://api.example.com", "https://api.example.com:8443"),
        ("https://api.example.com", "https://example.com"),
        ("http://localhost:80", "http://localhost:443"),
    ])
    func otherOrigin(_ first: String, _ second: String) throws {
        #expect(try origin(first) != origin(second))
    }

    @Test func describedWithoutTheDefaultPort() throws {
        #expect(try origin("https://API.example.com:443/x")?.description == "https://api.example.com")
        #expect(try origin("http://h:8080")?.description == "http://h:8080")
        #expect(try origin("http://[::1]:80")?.description == "http://[::1]")
        #expect(try origin("mailto:someone@example.com") == nil)
    }

    @Test(arguments: [
        ("https://h/x", true), ("a:b", true), ("svn+ssh://h", true), ("posts/a:b", false),
        ("1a:b", false), ("//h/x", false), ("/a:b", false), ("posts", false),
    ])
    func startsWithScheme(_ reference: String, _ expected: Bool) {
        #expect(Origin.startsWithScheme(reference[...]) == expected)
    }

    /// An absolute URL on the base's origin, spelled with another case and the default
    /// port, is the backend's own for the request preparation (URLSession and
    /// AsyncHTTPClient), the in-memory backend and hypermedia links alike; the same URL
    /// on another port is refused by all three.
    @Test func everyLayerJudgesAURLTheSameWay() async throws {
        let base = try #require(URL(string: "https://api.example.com/v1/"))
        let own = "https://API.example.com:443/v1/posts/1"
        let foreign = "https://api.example.com:8443/v1/posts/1"

        let preparation = HTTPRequestPreparation(baseURL: base)
        #expect(try preparation.url(for: BackendRequest(path: own)).path == "/v1/posts/1")
        #expect(throws: ServiceError.self) { try preparation.url(for: BackendRequest(path: foreign)) }

        let memory = InMemoryBackend(collections: ["posts"])
        memory.baseURL = base
        let created = try await memory.send(
            BackendRequest(method: .post, path: "posts", body: Data(#"{"title":"a"}"#.utf8))
        ).value
        #expect(created.status == 201)
        #expect(try await memory.send(BackendRequest(path: own)).value.status == 200)
        let refused = await memory.send(BackendRequest(path: foreign)).result
        #expect(throws: ServiceError.self) { try refused.get() }

        let followed = try LinkTarget.resolve(
            Link(rel: "self", href: own), values: [:], root: base, allowsForeignOrigins: false)
        #expect(followed.path == "posts/1")
        #expect(throws: ServiceError.self) {
            try LinkTarget.resolve(
                Link(rel: "self", href: foreign), values: [:], root: base, allowsForeignOrigins: false)
        }
    }
}
