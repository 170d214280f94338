import Depot
import DepotBackendConformance
import Foundation
import Testing

/// What the backend sends arrives as sent: httpbin's `/anything` echoes it back.
@Suite(.liveServers) struct HTTPBinRoundTripTests {
    private func backend(headers: HTTPHeaders = [:], middleware: [any Middleware] = []) throws
        -> URLSessionBackend
    {
        URLSessionBackend(baseURL: try #require(LiveServer.httpbin), headers: headers, middleware: middleware)
    }

    @Test func queryValuesSurviveTheTrip() async throws {
        let values = ["a+b", "c&d=e", "100% sure", "x/y?z#w", "naïve café", "~._-"]
        let request = BackendRequest(
            path: "anything",
            query: values.enumerated().map { URLQueryItem(name: "v\($0.offset)", value: $0.element) })
        let args = try #require(try await backend().send(request).value.json()["args"]?.objectValue)
        for (index, value) in values.enumerated() {
            #expect(args["v\(index)"] == .string(value))
        }
    }

    @Test func repeatedQueryNamesArriveInOrder() async throws {
        let query = Query().filter("id", 3, 1, 2)
        let request = BackendRequest(path: "anything", query: query.items)
        let args = try #require(try await backend().send(request).value.json()["args"])
        #expect(args["id"] == .array([.string("3"), .string("1"), .string("2")]))
    }

    @Test func headersAreDefaultedAndRequestHeadersWin() async throws {
        let backend = try backend(headers: ["X-Client": "depot", "X-Version": "1"])
        let request = BackendRequest(path: "anything", headers: ["X-Version": "2", "X-Request": "yes"])
        let headers = try #require(try await backend.send(request).value.json()["headers"])
        #expect(headers["Accept"] == .string("application/json"))
        #expect(headers["X-Client"] == .string("depot"))
        #expect(headers["X-Version"] == .string("2"))
        #expect(headers["X-Request"] == .string("yes"))
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch, .delete])
    func bodiesAndMethodsSurviveTheTrip(method: HTTPMethod) async throws {
        let body = Data(#"{"title":"Ünïcode & symbols +=","userId":1}"#.utf8)
        let request = BackendRequest(method: method, path: "anything/posts/1", body: body)
        let json = try await backend().send(request).value.json()
        #expect(json["method"] == .string(method.rawValue))
        #expect(json["data"] == .string(String(decoding: body, as: UTF8.self)))
        #expect(json["json"]?["title"] == .string("Ünïcode & symbols +="))
        #expect(json["headers"]?["Content-Type"] == .string("application/json"))
    }

    @Test func aBaseURLWithAPathPrefixKeepsIt() async throws {
        let httpbin = try #require(LiveServer.httpbin)
        for base in ["/anything/api/v1", "/anything/api/v1/"] {
            let backend = URLSessionBackend(baseURL: try #require(URL(string: httpbin.absoluteString + base)))
            let json = try await backend.send(BackendRequest(segments: ["posts", "1"])).value.json()
            #expect(json["url"] == .string(httpbin.absoluteString + "/anything/api/v1/posts/1"))
        }
    }

    @Test func anAbsoluteURLOnTheSameOriginIsFollowed() async throws {
        let httpbin = try #require(LiveServer.httpbin)
        let backend = URLSessionBackend(
            baseURL: try #require(URL(string: httpbin.absoluteString + "/anything/api/")))
        let json = try await backend.send(
            BackendRequest(path: httpbin.absoluteString + "/anything/next?_page=2")
        )
        .value.json()
        #expect(json["url"] == .string(httpbin.absoluteString + "/anything/next?_page=2"))
    }

    @Test func middlewareRunsInOrderInFrontOfTheNetwork() async throws {
        let backend = try backend(middleware: [Stamp(value: "outer"), Stamp(value: "inner")])
        let headers = try #require(
            try await backend.send(BackendRequest(path: "anything")).value.json()["headers"])
        #expect(headers["X-Stamp"] == .string("outer,inner"))
    }

    @Test func responseHeadersReachTheCaller() async throws {
        let request = BackendRequest(
            path: "response-headers",
            query: [
                URLQueryItem(name: "X-Total-Count", value: "42"),
                URLQueryItem(name: "Link", value: "<http://h/p?_page=2>; rel=\"next\""),
            ])
        let response = try await backend().send(request).value
        #expect(response.headers["x-total-count"] == "42")
        #expect(response.headers["Link"] == "<http://h/p?_page=2>; rel=\"next\"")
    }
}

/// Appends its value to `X-Stamp`, to show the order middleware runs in.
private struct Stamp: Middleware {
    let value: String

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        var request = request
        request.headers["X-Stamp"] = request.headers["X-Stamp"].map { $0 + "," + value } ?? value
        return next(request)
    }
}
