import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct TaskDelegateTests {
    private func request(_ url: String) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("session=1", forHTTPHeaderField: "Cookie")
        request.setValue("trace", forHTTPHeaderField: "X-Trace")
        return request
    }

    private func policy(_ origin: String) throws -> TaskDelegate {
        TaskDelegate(origin: Origin(try #require(URL(string: origin))))
    }

    @Test func keepsCredentialsOnTheSameOrigin() throws {
        let next = try policy("http://api.example:80/v1").redirect(to: try request("http://API.example/v2/x"))
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(next.value(forHTTPHeaderField: "Cookie") == "session=1")
    }

    @Test(arguments: ["http://other.example/x", "https://api.example/x", "http://api.example:8080/x"])
    func dropsCredentialsOnAnotherOrigin(target: String) throws {
        let next = try policy("http://api.example/v1").redirect(to: try request(target))
        #expect(next.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(next.value(forHTTPHeaderField: "X-Trace") == "trace")
        #expect(next.url?.absoluteString == target)
    }

    @Test func staysWithoutCredentialsAfterLeavingTheOrigin() throws {
        let policy = try policy("http://api.example/")
        _ = policy.redirect(to: try request("http://other.example/x"))
        let back = policy.redirect(to: try request("http://api.example/y"))
        #expect(back.value(forHTTPHeaderField: "Authorization") == nil)
    }
}
