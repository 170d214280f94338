import Foundation
import Testing

@testable import Depot

/// A response whose header fields are read on first use (as URLSessionBackend makes them):
/// read at most once, whichever copy asks first, and never for a success nobody looks into.
@Suite struct BackendResponseTests {
    /// A response with `fields` read on first use, and how many times they were read.
    private func deferred(_ fields: HTTPHeaders, status: Int = 200) -> (BackendResponse, Locked<Int>) {
        let reads = Locked(0)
        let response = BackendResponse(status: status, body: Data("{}".utf8)) {
            reads.withLock { $0 += 1 }
            return fields
        }
        return (response, reads)
    }

    @Test func aSuccessNobodyLooksIntoIsNeverConverted() throws {
        let (response, reads) = deferred(["ETag": "\"1\""])
        let checked = try ServiceError.check(response, for: BackendRequest(path: "posts/1")).get()
        #expect(checked.status == 200 && checked.body == Data("{}".utf8))
        #expect(reads.withLock { $0 } == 0)
    }

    @Test func anErrorKeepsTheFields() {
        let (response, reads) = deferred(["Retry-After": "7"], status: 503)
        let error = ServiceError.check(response, for: BackendRequest(path: "posts/1")).failure
        guard case .serviceUnavailable(let failure, let retryAfter) = error else {
            Issue.record("expected .serviceUnavailable, got \(String(describing: error))")
            return
        }
        #expect(retryAfter == 7)
        #expect(failure.headers["retry-after"] == "7")
        #expect(reads.withLock { $0 } == 1)
    }

    @Test func copiesOnManyThreadsReadTheFieldsOnce() async {
        let (response, reads) = deferred(["X-Total-Count": "100", "Link": "<p?_page=2>; rel=\"next\""])
        let seen = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<32 {
                let copy = response
                group.addTask { copy.headers["x-total-count"] }
            }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(seen == Array(repeating: "100", count: 32))
        #expect(reads.withLock { $0 } == 1)
    }

    @Test func changedFieldsAreTheCopysOwn() {
        let (response, reads) = deferred(["ETag": "\"1\""])
        var changed = response
        changed.headers.add("Age", "3")
        #expect(changed.headers["ETag"] == "\"1\"" && changed.headers["Age"] == "3")
        #expect(response.headers["Age"] == nil)
        #expect(reads.withLock { $0 } == 1)

        let (replaced, unread) = deferred(["ETag": "\"1\""])
        var set = replaced
        set.headers = ["ETag": "\"2\""]
        #expect(set.headers["ETag"] == "\"2\"")
        #expect(unread.withLock { $0 } == 0)
    }

    /// A change that fails halfway.
    private struct Stop: Error {}

    @Test func aChangeThatThrowsKeepsWhatItChanged() {
        let (response, reads) = deferred(["ETag": "\"1\""])
        var changed = response
        #expect(throws: Stop.self) {
            try Self.change(&changed.headers)
        }
        #expect(changed.headers["ETag"] == "\"1\"" && changed.headers["Age"] == "3")
        #expect(response.headers["Age"] == nil)
        #expect(reads.withLock { $0 } == 1)
    }

    /// Adds `Age: 3` to `headers`, then fails.
    private static func change(_ headers: inout HTTPHeaders) throws(Stop) {
        headers.add("Age", "3")
        throw Stop()
    }

    @Test func showsItsFieldsNotHowTheyAreKept() {
        let (response, _) = deferred(["ETag": "\"1\""])
        let children = Mirror(reflecting: response).children.map { $0.label ?? "" }
        #expect(children == ["status", "headers", "body", "file"])
        #expect(String(describing: response).contains("ETag: \"1\""))
    }

    @Test func comparesAndHashesByTheFieldsNotHowTheyAreKept() {
        let (response, _) = deferred(["ETag": "\"1\""])
        let given = BackendResponse(status: 200, headers: ["etag": "\"1\""], body: Data("{}".utf8))
        #expect(response == given)
        #expect(response.hashValue == given.hashValue)
        #expect(response != BackendResponse(status: 200, headers: ["ETag": "\"2\""], body: Data("{}".utf8)))
        #expect(response != BackendResponse(status: 201, headers: ["ETag": "\"1\""], body: Data("{}".utf8)))
    }
}
