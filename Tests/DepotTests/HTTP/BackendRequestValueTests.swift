import Depot
import Foundation
import Testing

/// A request keeps its fields in one box that its copies share until one of them changes:
/// each copy must still behave as a value of its own.
@Suite("BackendRequest: a value, though its copies share their fields")
struct BackendRequestValueTests {
    /// A request with every field set.
    private static func full() -> BackendRequest {
        var request = BackendRequest(
            method: .post, resource: .record("7", in: ["posts"]),
            query: [URLQueryItem(name: "a", value: "1")],
            headers: ["X-One": "1"], body: Data("{}".utf8))
        request.isRetryable = true
        request.destination = DownloadDestination(URL(fileURLWithPath: "/tmp/depot-value-test"))
        request.context = RequestContext(receipt: AnswerReceipt())
        return request
    }

    /// Each change to a copy, one field at a time.
    private static let changes: [(String, @Sendable (inout BackendRequest) -> Void)] = [
        ("method", { $0.method = .put }),
        ("path", { $0.path = "posts/8" }),
        ("query", { $0.query.append(URLQueryItem(name: "b", value: "2")) }),
        ("headers", { $0.headers["X-Two"] = "2" }),
        ("body", { $0.body = Data("[]".utf8) }),
        ("bodyFile", { $0.bodyFile = URL(fileURLWithPath: "/tmp/depot-value-body") }),
        ("destination", { $0.destination = nil }),
        ("progress", { $0.progress = ProgressHandler { _ in } }),
        ("isRetryable", { $0.isRetryable = false }),
    ]

    @Test("Changing a copy, field by field, leaves the original and its other copies as they were")
    func copiesAreIndependent() {
        for (field, change) in Self.changes {
            let original = Self.full()
            let sibling = original
            var copy = original
            change(&copy)
            #expect(copy != original, "changing \(field) on a copy left it equal to the original")
            #expect(original == Self.full(), "changing \(field) on a copy changed the original")
            #expect(sibling == Self.full(), "changing \(field) on a copy changed another copy")
            #expect(original.resource == RequestResource.record("7", in: ["posts"]))
            #expect(original.path == "posts/7")
        }
    }

    @Test("Changing the original after copying leaves the copy as it was")
    func originalChangesAfterCopying() {
        var original = Self.full()
        let copy = original
        original.headers["X-Two"] = "2"
        original.path = "comments"
        #expect(copy.headers["X-Two"] == nil)
        #expect(copy.path == "posts/7")
        #expect(copy.resource == .record("7", in: ["posts"]))
        #expect(original.resource == RequestResource(path: "comments"))
    }

    @Test("Readdressing a copy, which equality does not see, leaves the original's resource")
    func readdressingACopy() {
        let original = Self.full()
        var copy = original
        copy.address(.record("9", in: ["posts"]))
        let moved = original.readdressed(path: "elsewhere/1", query: [])
        #expect(copy.resource == .record("9", in: ["posts"]))
        #expect(moved.path == "elsewhere/1")
        #expect(original.resource == .record("7", in: ["posts"]))
        #expect(original.segments == ["posts", "7"])
        #expect(original.path == "posts/7")
        #expect(original.query == [URLQueryItem(name: "a", value: "1")])
    }

    @Test("A request prints its fields, not its box")
    func printsItsFields() {
        let text = String(describing: Self.full())
        #expect(text.contains("method:"))
        #expect(text.contains("path: \"posts/7\""))
        #expect(!text.contains("storage"))
    }

    @Test("The context of a copy is its own, and stays outside equality")
    func contextOfACopy() {
        let original = Self.full()
        var copy = original
        copy.context = RequestContext()
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
        #expect(original.context.receipt != nil)
        #expect(copy.context.receipt == nil)
    }

    @Test("Requests built apart from the same fields are equal and hash alike")
    func equalityByFields() {
        #expect(Self.full() == Self.full())
        #expect(Self.full().hashValue == Self.full().hashValue)
        var other = Self.full()
        other.headers["X-One"] = "2"
        #expect(other != Self.full())
    }

    @Test("Copies sent to other threads and changed there stay apart")
    func copiesAcrossThreads() async {
        let original = Self.full()
        let changed = await withTaskGroup(of: BackendRequest.self) { group in
            for index in 0..<32 {
                group.addTask {
                    var copy = original
                    copy.headers["X-Index"] = "\(index)"
                    copy.query.append(URLQueryItem(name: "i", value: "\(index)"))
                    return copy
                }
            }
            var all: [BackendRequest] = []
            for await request in group { all.append(request) }
            return all
        }
        #expect(original == Self.full())
        #expect(Set(changed.compactMap { $0.headers["X-Index"] }).count == 32)
        for request in changed {
            #expect(request.query.count == 2)
            #expect(request.query.last?.value == request.headers["X-Index"])
        }
    }
}
