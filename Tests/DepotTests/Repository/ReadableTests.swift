import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("Readable")
struct ReadableTests {
    @Test("findAll sends GET /posts and decodes every post")
    func findAll() async throws {
        let backend = try Seed.placeholder()
        let posts = try await PostRepository(backend: backend).findAll().value
        #expect(posts.count == 100)
        #expect(posts.map(\.id) == Array(1...100))
        let request = try #require(backend.requests.last)
        #expect(request.method == .get)
        #expect(request.path == "posts")
        #expect(request.query.isEmpty)
        #expect(request.body == nil)
    }

    @Test("findAll(query:) sends the filters and gets the matches")
    func findAllQuery() async throws {
        let backend = try Seed.placeholder()
        let posts = try await PostRepository(backend: backend).findAll(byUser: 1).value
        #expect(posts.count == 10)
        #expect(posts.allSatisfy { $0.userId == 1 })
        #expect(backend.requests.last?.query == [URLQueryItem(name: "userId", value: "1")])
    }

    @Test("findAll(query:) with the builder: OR filters, sort and full text")
    func findAllBuilder() async throws {
        let backend = try Seed.placeholder()
        let query = Query().filter("userId", 2, 3).sorted(by: "id", .descending)
        let posts = try await PostRepository(backend: backend).findAll(query: query).value
        #expect(posts.map(\.id) == Array((11...30).reversed()))
        #expect(
            backend.requests.last?.query == [
                URLQueryItem(name: "userId", value: "2"), URLQueryItem(name: "userId", value: "3"),
                URLQueryItem(name: "_sort", value: "id"), URLQueryItem(name: "_order", value: "desc"),
            ])
    }

    @Test("findByID sends GET /posts/:id and decodes the post")
    func findByID() async throws {
        let backend = try Seed.placeholder()
        let post = try await PostRepository(backend: backend).findByID(1).value
        #expect(post.id == 1)
        #expect(post.userId == 1)
        #expect(backend.requests.last?.path == "posts/1")
        #expect(backend.requests.last?.method == .get)
    }

    @Test("an empty id is .invalidRequest and nothing is sent, for every per-id call")
    func emptyIDIsRefused() async throws {
        let backend = try InMemoryBackend(seed: ["notes": [Note(id: "a", text: "kept")]])
        let notes = NoteRepository(backend: backend)
        let failures = [
            await notes.findByID("").result.failure,
            await notes.update(Note(id: "", text: "x")).result.failure,
            await notes.delete(id: "").result.failure,
        ]
        for failure in failures {
            #expect(failure?.caseName == "invalidRequest", "\(String(describing: failure))")
        }
        #expect(backend.requests.isEmpty)
        #expect(try await notes.findAll().value == [Note(id: "a", text: "kept")])
    }

    @Test("findByID of a missing id is .notFound")
    func findByIDMissing() async throws {
        let backend = try Seed.placeholder()
        let error = await PostRepository(backend: backend).findByID(9999).result.failure
        guard case .notFound(let response) = error else {
            Issue.record("expected .notFound, got \(String(describing: error))")
            return
        }
        #expect(response.status == 404)
        #expect(error?.statusCode == 404)
    }

    @Test(
        "an id that looks like a path stays inside its collection",
        arguments: ["../users", "a/b?c#d", "..", "1?x=1"])
    func idStaysInside(id: String) async throws {
        let backend = InMemoryBackend(collections: ["notes"])
        let notes = NoteRepository(backend: backend)
        _ = try await notes.create(Note(id: id, text: "kept")).value
        let found = try await notes.findByID(id).value
        #expect(found == Note(id: id, text: "kept"))
        let path = try #require(backend.requests.last?.path)
        #expect(path.hasPrefix("notes/"))
        #expect(!path.dropFirst("notes/".count).contains("/"))
        #expect(!path.contains("?") && !path.contains("#"))
    }

    @Test("a 2xx body that is not the entity is .decoding with the coding path")
    func decodingFailure() async throws {
        let backend = try Seed.placeholder()
        let error = await StrictPostRepository(backend: backend).findAll().result.failure
        guard case .decoding(let failure) = error else {
            Issue.record("expected .decoding, got \(String(describing: error))")
            return
        }
        #expect(failure.type.contains("StrictPost"))
        #expect(failure.codingPath == "[0].rating")
    }

    @Test(
        "a server failure reaches the caller as its ServiceError",
        arguments: [
            (500, "serverError"), (503, "serviceUnavailable"), (403, "forbidden"), (401, "unauthorized"),
        ])
    func serverFailures(status: Int, expected: String) async throws {
        let backend = try Seed.placeholder()
        backend.failNext(1, status: status)
        let error = await PostRepository(backend: backend).findAll().result.failure
        #expect(error?.statusCode == status)
        #expect(error?.caseName == expected)
        // The fault is spent: the next call succeeds.
        #expect(try await PostRepository(backend: backend).findAll().value.count == 100)
    }

    @Test("cancelling a slow findAll ends with .cancelled")
    func cancellation() async throws {
        let backend = try Seed.placeholder()
        backend.latency = 2 * hangBound
        let announcing = AnnouncingBackend(backend)
        let task = Task { await PostRepository(backend: announcing).findAll().result }
        await announcing.started.wait()
        task.cancel()
        // Bounded below the latency: a cancellation that waited for the answer would come too late.
        let result = await awaitBounded { await task.value }
        #expect(result?.failure == .cancelled)
    }
}
