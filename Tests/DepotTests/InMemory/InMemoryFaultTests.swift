import DepotInMemory
import Foundation
import Testing

@testable import Depot

@Suite("InMemoryBackend requests log, faults and latency")
struct InMemoryFaultTests {
    @Test("requests lists every request in order, failed ones included, until cleared")
    func requestsLog() async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(1, status: 500)
        _ = await memorySend(backend, .get, "posts", query: [("userId", "1")])
        _ = await memorySend(backend, .post, "posts", body: #"{"title": "t"}"#)
        _ = await memorySend(backend, .get, "nope/1")
        _ = await memorySend(backend, .delete, "posts/1")
        let log = backend.requests
        #expect(log.map(\.method) == [.get, .post, .get, .delete])
        #expect(log.map(\.path) == ["posts", "posts", "nope/1", "posts/1"])
        #expect(log[0].query == [URLQueryItem(name: "userId", value: "1")])
        #expect(log[1].body == Data(#"{"title": "t"}"#.utf8))
        backend.clearRequests()
        #expect(backend.requests.isEmpty)
        _ = await memorySend(backend, .get, "posts/2")
        #expect(backend.requests.map(\.path) == ["posts/2"])
    }

    @Test(
        "pages followed through the Link header are logged relative to the backend, as page 1 is",
        arguments: ["http://localhost/", "http://localhost/api/"])
    func requestsLogFollowedPages(baseURL: String) async throws {
        let backend = try Seed.placeholder()
        backend.baseURL = try #require(URL(string: baseURL))
        var pages: [Page<Post>] = []
        for try await page in PostRepository(backend: backend).pages(size: 40) { pages.append(page) }
        #expect(pages.map(\.items.count) == [40, 40, 20])
        // Pages 2 and 3 were asked at the server's own URL for them.
        guard case .href(let next)? = pages.first?.nextAddress else {
            Issue.record("page 1 names no next URL: \(String(describing: pages.first?.nextAddress))")
            return
        }
        #expect(next == baseURL + "posts?_page=2&_limit=40")

        let log = backend.requests
        #expect(log.map(\.path) == ["posts", "posts", "posts"])
        #expect(
            log.map(\.query)
                == (1...3).map { page in
                    [
                        URLQueryItem(name: "_page", value: String(page)),
                        URLQueryItem(name: "_limit", value: "40"),
                    ]
                })
        // The same shape as page 1's request, but for the page: method, headers, body, resource.
        for (offset, request) in log.enumerated() {
            var expected = log[0]
            expected.query[0].value = String(offset + 1)
            #expect(request == expected)
            #expect(request.resource == .collection(["posts"]))
            #expect(request.resource == log[0].resource)
        }
    }

    @Test("pages followed with the caller's filter are logged with the filter first, as page 1 is")
    func requestsLogFollowedFilteredPages() async throws {
        let backend = try Seed.placeholder()
        backend.baseURL = try #require(URL(string: "http://localhost/api/"))
        var ids: [Int] = []
        for try await page in PostRepository(backend: backend).pages(size: 4, query: ["userId": 3]) {
            ids += page.items.map(\.id)
        }
        #expect(ids == Array(21...30))
        let log = backend.requests
        #expect(log.map(\.path) == ["posts", "posts", "posts"])
        #expect(
            log.map(\.query)
                == (1...3).map { page in
                    [
                        URLQueryItem(name: "userId", value: "3"),
                        URLQueryItem(name: "_page", value: String(page)),
                        URLQueryItem(name: "_limit", value: "4"),
                    ]
                })
    }

    @Test("an absolute URL under the base is logged relative to it; other URLs as they were sent")
    func requestsLogAbsoluteURLs() async throws {
        let backend = try MemoryFixture.backend()
        backend.baseURL = try #require(URL(string: "http://localhost:8080/api/"))
        let patch = BackendRequest(
            method: .patch, path: "http://LOCALHOST:8080/api/posts/1?_embed=comments#top",
            query: [URLQueryItem(name: "x", value: "a b")], headers: ["X-Trace": "7"],
            body: Data(#"{"title": "t"}"#.utf8))
        _ = await backend.send(patch).result
        _ = await memorySend(backend, .get, "//localhost:8080/api/users/1/posts?userId=1")
        // Kept as sent: another origin, outside the base, and paths the app wrote.
        let kept = [
            "http://example.com/api/posts", "http://localhost:8080/other/posts",
            "https://localhost:8080/api/posts",
            "/api/posts?_limit=1", "posts?_limit=1",
        ]
        for path in kept { _ = await memorySend(backend, .get, path) }

        let log = backend.requests
        #expect(log.map(\.path) == ["posts/1", "users/1/posts"] + kept)
        #expect(
            log[0].query == [
                URLQueryItem(name: "_embed", value: "comments"), URLQueryItem(name: "x", value: "a b"),
            ])
        #expect(log[0].method == .patch)
        #expect(log[0].headers["X-Trace"] == "7")
        #expect(log[0].body == patch.body)
        #expect(log[0].resource == .record("1", in: ["posts"]))
        #expect(log[1].query == [URLQueryItem(name: "userId", value: "1")])
        #expect(log[1].resource == .collection(["posts"], under: ["users", "1"]))
        #expect(log.dropFirst(2).map(\.query) == Array(repeating: [], count: kept.count))
    }

    @Test("failNext fails exactly the next N requests, changes nothing, then service resumes")
    func failNext() async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(
            2, status: 503, headers: ["Retry-After": "3"], body: Data(#"{"message": "down"}"#.utf8))
        for _ in 0..<2 {
            let error = await memorySend(backend, .post, "posts", body: "{}").memoryError
            guard case .serviceUnavailable(let response, let retryAfter)? = error else {
                Issue.record("expected .serviceUnavailable, got \(String(describing: error))")
                return
            }
            #expect(response.status == 503)
            #expect(retryAfter == 3)
            #expect(error?.message == "down")
        }
        #expect(backend.records(in: "posts").count == 100)
        #expect(await memorySend(backend, .post, "posts", body: "{}").memoryResponse?.status == 201)
        #expect(backend.requests.count == 3)
    }

    @Test(
        "an injected status is classified like the network's",
        arguments: [
            (500, "serverError"), (502, "serverError"), (503, "serviceUnavailable"),
            (429, "serviceUnavailable"),
            (401, "unauthorized"), (403, "forbidden"), (404, "notFound"), (410, "notFound"),
            (409, "conflict"),
            (422, "clientError"), (302, "unexpectedStatus"),
        ])
    func classification(status: Int, kind: String) async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(1, status: status)
        let error = await memorySend(backend, .get, "posts/1").memoryError
        #expect(memoryKind(error) == kind)
        #expect(error?.statusCode == status)
        #expect(await memorySend(backend, .get, "posts/1").memoryJSON?["id"] == 1)
    }

    @Test("faults queue: a second failNext follows the first")
    func queuedFaults() async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(1, status: 500)
        backend.failNext(1, status: 404)
        backend.failNext(0, status: 418)
        #expect(await memorySend(backend, .get, "posts/1").memoryError?.statusCode == 500)
        #expect(await memorySend(backend, .get, "posts/1").memoryError?.statusCode == 404)
        #expect(await memorySend(backend, .get, "posts/1").memoryResponse?.status == 200)
    }

    @Test("with no latency the answer arrives synchronously, inside start")
    func synchronous() throws {
        let backend = try MemoryFixture.backend()
        let box = MemoryOutcomeBox()
        backend.send(BackendRequest(path: "posts/1")).start { box.set($0) }
        #expect(box.get()?.memoryJSON?["id"] == 1)
    }

    @Test("with latency the answer arrives after the delay, not inside start")
    func latency() async throws {
        let backend = try MemoryFixture.backend()
        backend.latency = 0.05
        #expect(backend.latency == 0.05)
        let insideStart = Locked<Bool?>(nil)
        // The starting thread while `start` runs: an answer on it then came inside `start`.
        let starting = Locked<pthread_t?>(pthread_self())
        let clock = ContinuousClock()
        let start = clock.now
        let result = await withCheckedContinuation { continuation in
            backend.send(BackendRequest(method: .post, path: "posts", body: Data("{}".utf8))).start {
                result in
                let inside = starting.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
                insideStart.withLock { $0 = inside }
                continuation.resume(returning: result)
            }
            starting.withLock { $0 = nil }
        }
        #expect(insideStart.withLock { $0 } == false)
        #expect(clock.now - start >= .milliseconds(45))
        #expect(result.memoryResponse?.status == 201)
        #expect(backend.records(in: "posts").count == 101)
    }

    @Test("cancelling during latency ends with .cancelled at once and changes nothing")
    func cancellation() async throws {
        let backend = try MemoryFixture.backend()
        backend.latency = 30
        let box = MemoryOutcomeBox()
        let cancellable = backend.send(BackendRequest(method: .post, path: "posts", body: Data("{}".utf8)))
            .start {
                box.set($0)
            }
        #expect(box.get() == nil)
        cancellable.cancel()
        #expect(box.get()?.memoryError == .cancelled)
        cancellable.cancel()
        #expect(backend.records(in: "posts").count == 100)
        #expect(backend.requests.count == 1)
    }

    @Test("cancelling the awaiting task cancels a slow request promptly")
    func taskCancellation() async throws {
        let backend = try MemoryFixture.backend()
        backend.latency = 2 * hangBound
        let announcing = AnnouncingBackend(backend)
        let task = Task { await announcing.send(BackendRequest(path: "posts")).result }
        await announcing.started.wait()
        task.cancel()
        // Bounded below the latency: a cancellation that waited for the answer would come too late.
        let result = await awaitBounded { await task.value }
        #expect(result?.memoryError == .cancelled)
        #expect(backend.requests.count == 1)
    }
}

/// Holds the outcome a completion delivers, for tests that start futures directly.
final class MemoryOutcomeBox: Sendable {
    private let state = Mutex()

    func set(_ result: Result<BackendResponse, ServiceError>) {
        state.withLock { $0 = result }
    }

    func get() -> Result<BackendResponse, ServiceError>? {
        state.withLock { $0 }
    }

    private final class Mutex: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<BackendResponse, ServiceError>?

        func withLock<T>(_ body: (inout Result<BackendResponse, ServiceError>?) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }
}
