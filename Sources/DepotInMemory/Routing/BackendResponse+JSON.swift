import Depot
import Foundation
import JSONServerEngine

extension BackendResponse {
    /// The `Content-Type` of JSON answers: `application/json; charset=utf-8`, as
    /// json-server sends it.
    public static let jsonContentType = jsonServerContentType

    /// A JSON response: `value` as compact JSON (keys sorted), with
    /// `Content-Type: application/json; charset=utf-8` unless `headers` names another.
    ///
    /// For ``DepotInMemory/InMemoryBackend/route(_:_:handler:)`` handlers and test stubs:
    ///
    /// ```swift
    /// backend.route(.get, "health") { _ in .json(["status": "ok"]) }
    /// backend.route(.post, "movies/:id/rent") { _ in .json(["error": "out of stock"], status: 409) }
    /// ```
    public static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = [:])
        -> BackendResponse
    {
        BackendResponse(status: status, headers: jsonHeaders(headers), body: JSONWriter.encode(value))
    }

    /// A JSON response whose body is `value` encoded with `encoder`, with
    /// `Content-Type: application/json; charset=utf-8` unless `headers` names another.
    ///
    /// ```swift
    /// backend.route(.get, "me") { _ in try .json(encoding: User(id: 1, name: "Ada")) }
    /// ```
    ///
    /// - Throws: ``Depot/ServiceError/invalidRequest(_:)`` when `value` cannot be encoded.
    public static func json<Value: Encodable>(
        encoding value: Value,
        status: Int = 200,
        headers: HTTPHeaders = [:],
        encoder: JSONEncoder = JSONEncoder()
    ) throws(ServiceError) -> BackendResponse {
        let body: Data
        do {
            body = try encoder.encode(value)
        } catch {
            throw .invalidRequest("could not encode \(Value.self) as JSON: \(error)")
        }
        return BackendResponse(status: status, headers: jsonHeaders(headers), body: body)
    }

    /// An error response with the JSON body `{"error": message}`, which
    /// ``Depot/ServiceError/message`` reads back; ``DepotInMemory/InMemoryBackend`` answers its own 400s
    /// and 409s this way (its 404s are `{}`, as json-server's).
    ///
    /// ```swift
    /// backend.route(.post, "movies/:id/rent") { _ in .error(409, "already rented") }
    /// ```
    public static func error(_ status: Int, _ message: String, headers: HTTPHeaders = [:]) -> BackendResponse
    {
        json(.object(["error": .string(message)]), status: status, headers: headers)
    }
}
