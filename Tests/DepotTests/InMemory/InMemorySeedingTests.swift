import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend seeding")
struct InMemorySeedingTests {
    struct Post: Codable, Equatable {
        var id: Int
        var userId: Int
        var title: String
    }

    struct Seed: Encodable {
        var users: [[String: Int]]
        var posts: [Post]
    }

    @Test("a db.json document seeds collections and singular objects")
    func fromData() async throws {
        let backend = try MemoryFixture.backend()
        #expect(backend.records(in: "users").count == 10)
        #expect(backend.records(in: "posts").count == 100)
        #expect(backend.records(in: "comments").count == 300)
        #expect(backend.records(in: "posts").first == MemoryFixture.posts().first)
        #expect(backend.object("profile") == ["name": "Ada", "theme": "dark"])
        #expect(backend.records(in: "profile").isEmpty)
        #expect(await memorySend(backend, .get, "posts").memoryIDs == Array(1...100))
    }

    @Test("an Encodable struct seeds one collection per property")
    func fromStruct() async throws {
        let seed = Seed(
            users: [["id": 1]],
            posts: [Post(id: 1, userId: 1, title: "Hi"), Post(id: 2, userId: 1, title: "Yo")])
        let backend = try InMemoryBackend(seed: seed)
        #expect(await memorySend(backend, .get, "users/1").memoryJSON == ["id": 1])
        let answer = try #require(await memorySend(backend, .get, "posts").memoryResponse)
        #expect(try JSONDecoder().decode([Post].self, from: answer.body) == seed.posts)
    }

    @Test("an Encodable dictionary seeds, through the given encoder")
    func fromDictionary() async throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let backend = try InMemoryBackend(
            seed: ["posts": [Post(id: 7, userId: 3, title: "Snake")]], encoder: encoder)
        #expect(backend.records(in: "posts") == [["id": 7, "user_id": 3, "title": "Snake"]])
    }

    @Test(
        "an empty backend is 404 to everything, POST included (json-server with {}); empty collections take writes"
    )
    func empty() async throws {
        let empty = InMemoryBackend()
        #expect(memoryKind(await memorySend(empty, .get, "posts").memoryError) == "notFound")
        #expect(memoryKind(await memorySend(empty, .post, "posts", body: "{}").memoryError) == "notFound")
        #expect(empty.records(in: "posts").isEmpty)

        let named = InMemoryBackend(collections: ["posts", "comments", "posts"])
        let seeded = try InMemoryBackend(database: Data(#"{"posts": [], "comments": []}"#.utf8))
        for backend in [named, seeded] {
            #expect(await memorySend(backend, .get, "db").memoryJSON == ["posts": [], "comments": []])
            let created = await memorySend(backend, .post, "posts", body: #"{"title": "first"}"#)
            #expect(created.memoryResponse?.status == 201)
            #expect(created.memoryJSON == ["id": 1, "title": "first"])
            #expect(await memorySend(backend, .get, "posts").memoryIDs == [1])
        }
    }

    @Test(
        "a seed that is not a db.json document is .decoding naming where",
        arguments: [
            ("not json", ""), ("[]", ""), (#"{"posts": [1, 2]"#, ""), (#"{"posts": 3}"#, "posts"),
            (#"{"posts": [{"id": 1}, "two"]}"#, "posts[1]"), (#"{"name": "x"}"#, "name"),
        ])
    func malformed(document: String, codingPath: String) throws {
        do {
            _ = try InMemoryBackend(database: Data(document.utf8))
            Issue.record("expected a failure for \(document)")
        } catch {
            guard case .decoding(let failure) = error else {
                Issue.record("expected .decoding, got \(error)")
                return
            }
            #expect(failure.codingPath == codingPath)
            #expect(!failure.description.isEmpty)
        }
    }

    @Test("a seed that cannot be encoded is .invalidRequest")
    func unencodable() {
        do {
            _ = try InMemoryBackend(seed: ["scores": [Double.nan]])
            Issue.record("expected a failure")
        } catch {
            #expect(memoryKind(error) == "invalidRequest")
        }
    }

    @Test("records keep the bytes they were seeded with: a listing is the seed's array, byte for byte")
    func bytesPreserved() async throws {
        let backend = InMemoryBackend.jsonPlaceholder()
        let photos = try #require(await memorySend(backend, .get, "photos").memoryResponse)
        #expect(photos.body == JSONPlaceholderData.collection("photos"))
        #expect(photos.headers["Content-Type"] == "application/json; charset=utf-8")

        let pretty = Data("{\n  \"posts\": [\n    { \"title\": \"b\", \"id\": 1 }\n  ]\n}".utf8)
        let one = try #require(
            await memorySend(try InMemoryBackend(database: pretty), .get, "posts/1").memoryResponse)
        #expect(String(decoding: one.body, as: UTF8.self) == #"{ "title": "b", "id": 1 }"#)
    }

    @Test("JSON escapes, unicode and numbers survive seeding and writing")
    func jsonFidelity() async throws {
        let document =
            #"{"notes": [{"id": 1, "text": "a\"b\\c\n\u00e9\ud83d\ude00", "big": 12345678901234, "pi": 3.25, "neg": -0.5, "e": 1e3, "nested": {"list": [true, false, null]}}]}"#
        let backend = try InMemoryBackend(database: Data(document.utf8))
        let stored = try #require(backend.records(in: "notes").first)
        #expect(stored["text"] == .string("a\"b\\c\né😀"))
        #expect(stored["big"] == .int(12_345_678_901_234))
        #expect(stored["pi"] == .double(3.25))
        #expect(stored["e"] == .double(1000))
        // A PATCH makes the backend write the record itself; the values read back the same.
        let patched = await memorySend(backend, .patch, "notes/1", body: #"{"extra": "\u0001"}"#)
        #expect(patched.memoryJSON?["text"] == .string("a\"b\\c\né😀"))
        #expect(patched.memoryJSON?["nested"] == ["list": [true, false, .null]])
        #expect(patched.memoryJSON?["extra"] == .string("\u{01}"))
        #expect(patched.memoryJSON?["neg"] == .double(-0.5))
    }
}

/// `InMemoryBackend(seed:)` with collections of different types and a singular object,
/// as the README shows it.
@Suite("InMemoryBackend seeding: several types")
struct InMemoryTypedSeedTests {
    struct User: Codable, Equatable, Identifiable, Sendable {
        var id: Int
        var name: String
    }

    struct Todo: Codable, Equatable, Identifiable, Sendable {
        var id: String
        var userId: Int
        var done: Bool
    }

    struct Profile: Codable, Equatable, Sendable {
        var theme: String
    }

    struct Seed: Encodable {
        var users: [User]
        var todos: [Todo]
        var profile: Profile
    }

    struct TodoRepository: CRUDRepository {
        typealias Entity = Todo
        let backend: any Backend
        let name = "todos"
    }

    @Test("each property is a collection or an object of its own type, served and written as json-server")
    func severalTypes() async throws {
        let seed = Seed(
            users: [User(id: 1, name: "Ada"), User(id: 2, name: "Grace")],
            todos: [Todo(id: "t1", userId: 1, done: false), Todo(id: "t2", userId: 2, done: true)],
            profile: Profile(theme: "dark"))
        let backend = try InMemoryBackend(seed: seed)
        let todos = TodoRepository(backend: backend)

        #expect(try await todos.findAll(query: ["userId": 2]).value == [seed.todos[1]])
        #expect(try await todos.findByID("t1").value == seed.todos[0])
        let nested = try #require(await memorySend(backend, .get, "users/1/todos").memoryResponse)
        #expect(try JSONDecoder().decode([Todo].self, from: nested.body) == [seed.todos[0]])
        #expect(try await todos.patch(seed.todos[0], with: ["done": true]).value.done)
        #expect(backend.object("profile") == ["theme": "dark"])
        #expect(backend.records(in: "users").count == 2)
    }
}
