import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLRequestBuilderTests {
    private func builder(
        _ base: String, headers: HTTPHeaders = [:], timeout: TimeInterval? = nil
    ) throws -> URLRequestBuilder {
        URLRequestBuilder(baseURL: try #require(URL(string: base)), headers: headers, timeout: timeout)
    }

    @Test(arguments: [
        ("http://h", "posts/1", "http://h/posts/1"),
        ("http://h/", "posts/1", "http://h/posts/1"),
        ("http://h/api/v1", "posts/1", "http://h/api/v1/posts/1"),
        ("http://h/api/v1/", "posts/1", "http://h/api/v1/posts/1"),
        ("https://h:8443/api/v1/", "posts", "https://h:8443/api/v1/posts"),
        ("http://h/api/v1/", "/status", "http://h/status"),
        ("http://h/api/", "http://h/api/posts?_page=2", "http://h/api/posts?_page=2"),
        ("http://h:80/api/", "HTTP://H/other", "HTTP://H/other"),
        ("http://h/", "posts?_page=2#top", "http://h/posts?_page=2"),
        ("http://h/", "users/%2E%2E%2Fadmin", "http://h/users/%2E%2E%2Fadmin"),
        ("http://h/api", "", "http://h/api/"),
    ])
    func resolvesThePathAgainstTheBase(base: String, path: String, expected: String) throws {
        let url = try builder(base).url(for: BackendRequest(path: path))
        #expect(url.absoluteString == expected)
    }

    @Test func segmentsFromIDsStayInTheCollection() throws {
        let request = BackendRequest(segments: ["users", "../admin", "a/b?c#d", ".."])
        let url = try builder("http://h/api/").url(for: request)
        #expect(url.absoluteString == "http://h/api/users/..%2Fadmin/a%2Fb%3Fc%23d/%2E%2E")
    }

    @Test func encodesQueryValuesPerRFC3986() throws {
        let request = BackendRequest(
            path: "search",
            query: [
                URLQueryItem(name: "q", value: "a+b&c=d e/?é"),
                URLQueryItem(name: "id", value: "1"),
                URLQueryItem(name: "id", value: "2"),
                URLQueryItem(name: "flag", value: nil),
                URLQueryItem(name: "na me", value: "~._-"),
            ])
        let url = try builder("http://h").url(for: request)
        #expect(
            url.absoluteString
                == "http://h/search?q=a%2Bb%26c%3Dd%20e%2F%3F%C3%A9&id=1&id=2&flag&na%20me=~._-")
    }

    @Test func appendsQueryItemsToAQueryInThePath() throws {
        let request = BackendRequest(
            path: "posts?_page=2", query: [URLQueryItem(name: "_limit", value: "10")])
        #expect(
            try builder("http://h").url(for: request).absoluteString == "http://h/posts?_page=2&_limit=10")
    }

    @Test(arguments: [
        "http://elsewhere/posts", "https://h/posts", "http://h:8080/posts", "//elsewhere/posts",
        "ftp://h/posts",
    ])
    func refusesAbsoluteURLsOfAnotherOrigin(path: String) throws {
        let builder = try builder("http://h/api")
        let outcome = Result { () throws(ServiceError) in try builder.url(for: BackendRequest(path: path)) }
        #expect(outcome.failure?.caseName == "invalidRequest")
    }

    @Test(arguments: ["ftp://h/", "file:///tmp/", "mailto:someone@example.com", "/relative/only"])
    func refusesABaseURLThatIsNotHTTP(base: String) throws {
        let builder = try builder(base)
        let outcome = Result { () throws(ServiceError) in
            try builder.urlRequest(for: BackendRequest(path: "posts"))
        }
        #expect(outcome.failure?.caseName == "invalidRequest")
    }

    @Test func sendsJSONByDefaultAndLetsTheRequestWin() throws {
        let builder = try builder("http://h", headers: ["X-Client": "depot", "X-Version": "1"])
        let plain = try builder.urlRequest(for: BackendRequest(path: "posts"))
        #expect(plain.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(plain.value(forHTTPHeaderField: "X-Client") == "depot")
        #expect(plain.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(plain.httpMethod == "GET")

        let custom = try builder.urlRequest(
            for: BackendRequest(
                method: .post, path: "posts", headers: ["accept": "text/csv", "X-Version": "2"],
                body: Data("{}".utf8)))
        #expect(custom.value(forHTTPHeaderField: "Accept") == "text/csv")
        #expect(custom.value(forHTTPHeaderField: "X-Version") == "2")
        #expect(custom.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(custom.httpMethod == "POST")
        #expect(custom.httpBody == Data("{}".utf8))

        let form = try builder.urlRequest(
            for: BackendRequest(
                method: .put, path: "posts/1", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Data("a=1".utf8)))
        #expect(form.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func joinsRepeatedHeaderValues() throws {
        var headers = HTTPHeaders()
        headers.add("X-Tag", "a")
        headers.add("X-Tag", "b")
        let request = try builder("http://h").urlRequest(for: BackendRequest(path: "p", headers: headers))
        #expect(request.value(forHTTPHeaderField: "X-Tag") == "a, b")
    }

    @Test(
        arguments: [
            ["X-Evil": "a\r\nInjected: yes"], ["X-Evil": "a\nb"], ["X-Evil": "a\rb"], ["X\nEvil": "a"],
            ["Bad Name": "a"],
        ] as [HTTPHeaders])
    func refusesHeadersThatCouldSplitTheRequest(headers: HTTPHeaders) throws {
        let builder = try builder("http://h")
        let outcome = Result { () throws(ServiceError) in
            try builder.urlRequest(for: BackendRequest(path: "p", headers: headers))
        }
        #expect(outcome.failure?.caseName == "invalidRequest")
    }

    @Test func refusesUnsafeDefaultHeadersToo() throws {
        let builder = try builder("http://h", headers: ["X-Key": "k\r\n"])
        let outcome = Result { () throws(ServiceError) in
            try builder.urlRequest(for: BackendRequest(path: "p"))
        }
        #expect(outcome.failure?.caseName == "invalidRequest")
    }

    @Test(arguments: [HTTPMethod.get, .head])
    func refusesABodyOnGetAndHead(method: HTTPMethod) throws {
        let request = BackendRequest(method: method, path: "p", body: Data("x".utf8))
        let builder = try builder("http://h")
        let outcome = Result { () throws(ServiceError) in try builder.urlRequest(for: request) }
        #expect(outcome.failure?.caseName == "invalidRequest")
    }

    @Test func appliesTheTimeout() throws {
        let request = try builder("http://h", timeout: 2.5).urlRequest(for: BackendRequest(path: "p"))
        #if canImport(FoundationNetworking)
            #expect(request.timeoutInterval == 3)
            #expect(URLRequestBuilder.platformTimeout(0.2) == 1)
        #else
            #expect(request.timeoutInterval == 2.5)
        #endif
    }
}
