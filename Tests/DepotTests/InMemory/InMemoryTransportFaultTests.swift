import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend transport faults: the network taken away")
struct InMemoryTransportFaultTests {
    @Test("failNext(_:with:) fails exactly the next N requests with no response, then service resumes")
    func failNextWithError() async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(2, with: .noConnection)
        #expect(await memorySend(backend, .post, "posts", body: "{}").memoryError == .noConnection)
        #expect(await memorySend(backend, .get, "posts/1").memoryError == .noConnection)
        // The failed POST changed nothing; the third request is served.
        #expect(backend.records(in: "posts").count == 100)
        #expect(await memorySend(backend, .get, "posts/1").memoryJSON?["id"] == 1)
        // Failed requests are logged, as with failNext(_:status:).
        #expect(backend.requests.map(\.path) == ["posts", "posts/1", "posts/1"])
    }

    @Test(
        "each transport error reaches the caller as is",
        arguments: [ServiceError.noConnection, .cannotConnect, .timedOut])
    func transportErrors(error: ServiceError) async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(1, with: error)
        #expect(await memorySend(backend, .get, "posts/1").memoryError == error)
        #expect(await memorySend(backend, .get, "posts/1").memoryResponse?.status == 200)
    }

    @Test("status and transport faults queue in the order they were asked for")
    func mixedQueue() async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(1, status: 500)
        backend.failNext(1, with: .timedOut)
        backend.failNext(0, with: .noConnection)
        #expect(await memorySend(backend, .get, "posts/1").memoryError?.statusCode == 500)
        #expect(await memorySend(backend, .get, "posts/1").memoryError == .timedOut)
        #expect(await memorySend(backend, .get, "posts/1").memoryResponse?.status == 200)
    }

    @Test("failAll(with:) fails every request until stopFailing(), which also drops pending faults")
    func failAllUntilStopped() async throws {
        let backend = try MemoryFixture.backend()
        backend.failNext(3, status: 503)
        backend.failAll(with: .noConnection)
        for _ in 0..<5 {
            #expect(await memorySend(backend, .get, "posts/1").memoryError == .noConnection)
        }
        #expect(await memorySend(backend, .delete, "posts/1").memoryError == .noConnection)
        #expect(backend.records(in: "posts").count == 100)
        #expect(backend.requests.count == 6)
        backend.stopFailing()
        #expect(await memorySend(backend, .get, "posts/1").memoryJSON?["id"] == 1)
    }

    @Test("a repository call fails with .noConnection while the backend is down")
    func repositoryCall() async throws {
        let backend = try MemoryFixture.backend()
        let posts = PostRepository(backend: backend)
        backend.failAll(with: .noConnection)
        let read = await posts.findByID(1).result
        #expect(read.failure == .noConnection)
        let write = await posts.create(NewPost(userId: 1, title: "t", body: "b")).result
        #expect(write.failure == .noConnection)
        backend.stopFailing()
        #expect(try await posts.findByID(1).value.id == 1)
        #expect(backend.requests.map(\.method) == [.get, .post, .get])
    }
}
