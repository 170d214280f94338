import DepotInMemory
import Foundation
import Testing

@testable import Depot

@Suite("PathSegment")
struct PathSegmentTests {
    private static let hostile = [
        "../admin", "a/b?c#d", "..", ".", "ünï code", "+&=", "%2F", "a%20b", "/", "?x=1", "#top", "..%2F..",
        "~user",
    ]

    @Test(arguments: hostile)
    func encodedSegmentStaysOneSegmentAndRoundTrips(segment: String) throws {
        let encoded = PathSegment.encode(segment)
        #expect(!encoded.contains("/"))
        #expect(!encoded.contains("?"))
        #expect(!encoded.contains("#"))
        #expect(encoded != "." && encoded != "..")
        #expect(PathSegment.decode(encoded) == segment)

        let request = BackendRequest(segments: ["users", segment, "posts"])
        #expect(request.path == "users/\(encoded)/posts")
        #expect(request.path.split(separator: "/", omittingEmptySubsequences: false).count == 3)
        let url = try #require(URL(string: "https://api.example.com/\(request.path)"))
        #expect(url.host == "api.example.com")
        #expect(url.query == nil)
        #expect(url.fragment == nil)
    }

    @Test(
        arguments: [
            ("../admin", "..%2Fadmin"), ("a/b?c#d", "a%2Fb%3Fc%23d"), ("..", "%2E%2E"), (".", "%2E"),
            ("ünï code", "%C3%BCn%C3%AF%20code"), ("+&=", "%2B%26%3D"), ("a-b._~1", "a-b._~1"),
        ]
    )
    func encodesEverythingButUnreservedCharacters(segment: String, expected: String) {
        #expect(PathSegment.encode(segment) == expected)
    }

    @Test func joinAndRequestPath() {
        #expect(PathSegment.join(["users", "1", "posts"]) == "users/1/posts")
        #expect(PathSegment.join([]) == "")
        #expect(PathSegment.join(["photos"]) == "photos")
        #expect(PathSegment.join(["photos", ""]) == "photos/")
        #expect(
            PathSegment.join(["a-b._~1", "long-segment-past-fifteen-bytes", "42"])
                == "a-b._~1/long-segment-past-fifteen-bytes/42")
        #expect(PathSegment.join(["posts", ".", "1"]) == "posts/%2E/1")
        let request = BackendRequest(method: .delete, segments: ["users", "../admin"])
        #expect(request.path == "users/..%2Fadmin")
        #expect(request.method == .delete)
    }

    @Test func decodeLeavesMalformedEscapesAlone() {
        #expect(PathSegment.decode("100%") == "100%")
        #expect(PathSegment.decode("%zz") == "%zz")
    }

    /// A request built from segments carries them to the backend, which reads them
    /// without parsing the path back; it stays equal to the same path given as a string,
    /// and a path set later replaces the segments.
    @Test func aRequestKeepsTheSegmentsItWasBuiltFrom() async throws {
        var built = BackendRequest(segments: ["posts", "a/b?c"])
        #expect(built.segments == ["posts", "a/b?c"])
        #expect(built == BackendRequest(path: "posts/a%2Fb%3Fc"))
        #expect(built.hashValue == BackendRequest(path: "posts/a%2Fb%3Fc").hashValue)
        #expect(BackendRequest(path: "posts/1").segments == nil)
        #expect(BackendRequest(segments: ["posts", ""]).segments == nil)
        built.path = "users/1"
        #expect(built.segments == nil)

        let backend = try InMemoryBackend(database: Data(#"{"posts":[{"id":"a/b?c"}]}"#.utf8))
        let bySegments = try await backend.send(BackendRequest(segments: ["posts", "a/b?c"])).value
        let byPath = try await backend.send(BackendRequest(path: "posts/a%2Fb%3Fc")).value
        #expect(bySegments.body == byPath.body)
        let missing = await backend.send(built).result
        #expect(throws: ServiceError.self) { try missing.get() }
    }
}
