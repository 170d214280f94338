import Depot
import DepotInMemory
import Foundation
import Testing

/// Route handlers written as a test writes them: `try` with no annotation.
@Suite("InMemoryBackend routes: handlers that throw")
struct InMemoryRouteThrowingTests {
    struct Todo: Codable, Equatable, Sendable {
        var id: Int
        var title: String
    }

    /// A value `JSONEncoder` refuses (a non-finite `Double`).
    struct Unencodable: Encodable {
        var value = Double.nan
    }

    struct HandlerFailure: Error, CustomStringConvertible {
        var description: String { "no todos today" }
    }

    @Test("a plain closure with try encodes a value and answers it")
    func plainTry() async throws {
        let backend = InMemoryBackend()
        backend.route(.get, "users/:id/todos") { context in
            try .json(encoding: [Todo(id: Int(context.parameters["id"] ?? "") ?? 0, title: "Write tests")])
        }
        let answer = try #require(await memorySend(backend, .get, "users/7/todos").memoryResponse)
        #expect(
            try JSONDecoder().decode([Todo].self, from: answer.body) == [Todo(id: 7, title: "Write tests")])
        #expect(answer.headers["Content-Type"] == BackendResponse.jsonContentType)
    }

    @Test("the three closure shapes resolve: no throw, untyped try, typed throws(ServiceError)")
    func closureShapes() async throws {
        let backend = InMemoryBackend()
        backend.route(.get, "a") { _ in .json(["shape": "plain"]) }
        backend.route(.get, "b") { _ in try .json(encoding: ["shape": "try"]) }
        backend.route(.get, "c") { context throws(ServiceError) in
            guard context.request.method == .get else { throw .notFound(FailureResponse(status: 404)) }
            return try .json(encoding: ["shape": "typed"])
        }
        let typed: @Sendable (RouteContext) throws(ServiceError) -> BackendResponse = { _ in
            .json(["shape": "value"])
        }
        backend.route(.get, "d", handler: typed)
        #expect(await memorySend(backend, .get, "a").memoryJSON == ["shape": "plain"])
        #expect(await memorySend(backend, .get, "b").memoryJSON == ["shape": "try"])
        #expect(await memorySend(backend, .get, "c").memoryJSON == ["shape": "typed"])
        #expect(await memorySend(backend, .get, "d").memoryJSON == ["shape": "value"])
    }

    @Test("an encoding failure reaches the caller as .invalidRequest")
    func encodingFailure() async {
        let backend = InMemoryBackend()
        backend.route(.get, "broken") { _ in try .json(encoding: Unencodable()) }
        let error = await memorySend(backend, .get, "broken").memoryError
        #expect(memoryKind(error) == "invalidRequest")
        #expect(error?.localizedDescription.contains("Unencodable") == true)
    }

    @Test("a ServiceError thrown by the handler or a store operation reaches the caller as is")
    func serviceErrorsPassThrough() async {
        let backend = InMemoryBackend(collections: ["todos"])
        backend.route(.patch, "todos/:id/done") { context in
            try context.patch(in: "todos", id: context.parameters["id"] ?? "", with: ["done": true])
            return .json(["ok": true])
        }
        backend.route(.get, "gone") { _ in throw ServiceError.conflict(FailureResponse(status: 409)) }
        #expect(memoryKind(await memorySend(backend, .patch, "todos/9/done").memoryError) == "notFound")
        #expect(memoryKind(await memorySend(backend, .get, "gone").memoryError) == "conflict")
    }

    @Test("any other error is a 500 naming the route and the error")
    func otherErrorIsServerError() async {
        let backend = InMemoryBackend()
        backend.route(.get, "users/:id/todos") { _ in throw HandlerFailure() }
        let error = await memorySend(backend, .get, "users/1/todos").memoryError
        #expect(memoryKind(error) == "serverError")
        #expect(error?.statusCode == 500)
        #expect(error?.message == "the route GET users/:id/todos threw no todos today")
    }
}
