import Foundation
import Testing

@testable import Depot

/// Collects the events a logging middleware reports.
private final class EventLog: Sendable {
    private let events = Locked<[LogEvent]>([])

    var all: [LogEvent] { events.withLock { $0 } }

    func middleware(redactingHeaders headers: Set<String> = [], queryItems: Set<String> = [])
        -> LoggingMiddleware
    {
        LoggingMiddleware(redacting: Redaction.default.adding(headers: headers, queryItems: queryItems)) {
            event in
            self.events.withLock { $0.append(event) }
        }
    }
}

@Suite("LoggingMiddleware")
struct LoggingMiddlewareTests {
    @Test func reportsTheRequestWhenSentAndTheResponseWhenDone() async throws {
        let log = EventLog()
        let backend = ScriptedBackend([
            .status(200, headers: ["Content-Type": "application/json"], body: "[1,2]")
        ])
        let request = BackendRequest(
            method: .post, path: "users", query: [URLQueryItem(name: "_page", value: "2")],
            headers: ["Accept": "application/json"], body: Data("{}".utf8))

        let response = try await backend.with(log.middleware()).send(request).value

        #expect(response.body == Data("[1,2]".utf8))
        let events = log.all
        try #require(events.count == 2)
        #expect(events.map(\.requestNumber) == [1, 1])
        #expect(events[0].phase == .sent)
        #expect(events[0].duration == nil)
        #expect(events[0].method == .post)
        #expect(events[0].path == "users")
        #expect(events[0].query == [URLQueryItem(name: "_page", value: "2")])
        #expect(events[0].headers == ["Accept": "application/json"])
        #expect(events[0].bodySize == 2)
        #expect(
            events[1].phase
                == .succeeded(status: 200, headers: ["Content-Type": "application/json"], bodySize: 5))
        #expect(try #require(events[1].duration) >= .zero)
        #expect(events[1].status == 200)
        #expect(events[1].level == .info)
        #expect(events[1].description.hasPrefix("#1 POST users?_page=2 -> 200 ("))
    }

    @Test func numbersRequestsInTheOrderTheyStart() async {
        let log = EventLog()
        let client = ScriptedBackend([.status(200), .status(404), .failure(.timedOut)]).with(log.middleware())

        for path in ["a", "b", "c"] { _ = await client.send(BackendRequest(path: path)).result }

        #expect(
            log.all.map { "\($0.requestNumber) \($0.path) \($0.phase == .sent ? "sent" : "done")" } == [
                "1 a sent", "1 a done", "2 b sent", "2 b done", "3 c sent", "3 c done",
            ])
    }

    @Test func concurrentRequestsGetDistinctNumbers() async {
        let log = EventLog()
        let client = ScriptedBackend([]).with(log.middleware())

        await withTaskGroup(of: Void.self) { group in
            for id in 1...50 {
                group.addTask { _ = await client.send(BackendRequest(path: "items/\(id)")).result }
            }
        }

        let events = log.all
        #expect(events.count == 100)
        #expect(Set(events.map(\.requestNumber)) == Set(1...50))
        for number in 1...50 {
            let own = events.filter { $0.requestNumber == number }
            #expect(own.count == 2)
            #expect(own.first?.phase == .sent)
            #expect(own.first?.path == own.last?.path)
        }
    }

    @Test func eachStartOfTheSameFutureIsANewRequest() async {
        let log = EventLog()
        let future = ScriptedBackend([]).with(log.middleware()).send(BackendRequest(path: "users"))

        _ = await future.result
        _ = await future.result

        #expect(log.all.map(\.requestNumber) == [1, 1, 2, 2])
    }

    @Test func redactsSecretsInRequestHeadersWhateverTheCase() async throws {
        let log = EventLog()
        let headers: HTTPHeaders = [
            "authorization": "Bearer s3cr3t", "COOKIE": "session=abc", "Proxy-Authorization": "Basic eA==",
            "X-Api-Key": "k-123", "Accept": "application/json",
        ]
        let backend = ScriptedBackend([])
        let client = backend.with(log.middleware(redactingHeaders: ["x-api-key"]))

        _ = try await client.send(BackendRequest(path: "me", headers: headers)).value

        let logged = try #require(log.all.first?.headers)
        #expect(logged["Authorization"] == "<redacted>")
        #expect(logged["Cookie"] == "<redacted>")
        #expect(logged["proxy-authorization"] == "<redacted>")
        #expect(logged["X-API-Key"] == "<redacted>")
        #expect(logged["Accept"] == "application/json")
        #expect(!log.all.map(\.description).joined().contains("s3cr3t"))
        #expect(backend.requests.first?.headers == headers)  // the request itself is untouched
    }

    @Test func redactsSetCookieInResponsesButTheCallerStillGetsIt() async throws {
        let log = EventLog()
        var responseHeaders = HTTPHeaders()
        responseHeaders.add("Set-Cookie", "a=1")
        responseHeaders.add("set-cookie", "b=2")
        responseHeaders.add("ETag", #""v1""#)
        let client = ScriptedBackend([.status(200, headers: responseHeaders)]).with(log.middleware())

        let response = try await client.send(BackendRequest(path: "login")).value

        #expect(response.headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        guard case .succeeded(_, let logged, _) = log.all.last?.phase else {
            Issue.record("expected a success event")
            return
        }
        #expect(logged.values(for: "Set-Cookie") == ["<redacted>", "<redacted>"])
        #expect(logged["ETag"] == #""v1""#)
    }

    @Test func redactsTheHeadersKeptInAFailure() async throws {
        let log = EventLog()
        let headers: HTTPHeaders = ["Set-Cookie": "session=abc", "WWW-Authenticate": "Bearer"]
        let client = ScriptedBackend([.status(401, headers: headers)]).with(log.middleware())

        let result = await client.send(BackendRequest(path: "me")).result

        #expect(result.failureStatus == 401)
        let event = try #require(log.all.last)
        guard case .unauthorized(let response, let challenges) = event.error else {
            Issue.record("expected .unauthorized, got \(String(describing: event.error))")
            return
        }
        #expect(response.headers["Set-Cookie"] == "<redacted>")
        #expect(response.headers["WWW-Authenticate"] == "Bearer")
        #expect(challenges.map(\.scheme) == ["Bearer"])
        #expect(event.status == 401)
        #expect(event.level == .warning)
    }

    @Test func redactsChosenQueryItems() async throws {
        let log = EventLog()
        let client = ScriptedBackend([]).with(log.middleware(queryItems: ["api_key"]))
        let query = [URLQueryItem(name: "q", value: "rain"), URLQueryItem(name: "API_KEY", value: "k-9")]

        _ = try await client.send(BackendRequest(path: "weather", query: query)).value

        #expect(log.all.first?.query.map(\.value) == ["rain", "<redacted>"])
        #expect(log.all.first?.description == "#1 GET weather?q=rain&API_KEY=<redacted>")
        #expect(log.all.last?.metadata["query"] == "q=rain&API_KEY=<redacted>")
    }

    @Test func theTargetShowsTheQueryPercentEncoded() {
        let event = LogEvent(
            requestNumber: 4, method: .get, path: "posts",
            query: [URLQueryItem(name: "q", value: "a b&c=d"), URLQueryItem(name: "flag", value: nil)],
            phase: .sent)

        #expect(event.target == "posts?q=a%20b%26c%3Dd&flag")
        #expect(event.description == "#4 GET posts?q=a%20b%26c%3Dd&flag")
    }

    @Test(arguments: [
        (ScriptedBackend.Reply.status(404), LogEvent.Level.warning),
        (.status(503), .error),
        (.failure(.timedOut), .error),
        (.failure(.cancelled), .info),
    ])
    func failuresAreReportedWithALevel(reply: ScriptedBackend.Reply, level: LogEvent.Level) async throws {
        let log = EventLog()

        _ = await ScriptedBackend([reply]).with(log.middleware()).send(BackendRequest(path: "users/9")).result

        let event = try #require(log.all.last)
        #expect(event.error != nil)
        #expect(event.level == level)
        #expect(event.description.hasPrefix("#1 GET users/9 failed ("))
    }

    @Test func theDurationCoversTheWholeRequest() async throws {
        let log = EventLog()
        let backend = ScriptedBackend { _, _, reply in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.03) { reply(.status(200)) }
        }

        _ = await boundedWait(hangBound) {
            await backend.with(log.middleware()).send(BackendRequest(path: "slow")).result
        }

        #expect(try #require(log.all.last?.duration) >= .milliseconds(30))
    }

    @Test func metadataCarriesTheFieldsAsStrings() async throws {
        let log = EventLog()
        let client = ScriptedBackend([.status(404)]).with(log.middleware())

        _ = await client.send(BackendRequest(path: "users/9", headers: ["Authorization": "Bearer x"])).result

        let metadata = try #require(log.all.last?.metadata)
        #expect(metadata["request"] == "1")
        #expect(metadata["method"] == "GET")
        #expect(metadata["path"] == "users/9")
        #expect(metadata["phase"] == "failed")
        #expect(metadata["status"] == "404")
        #expect(metadata["request_header.authorization"] == "<redacted>")
        #expect(metadata["duration_ms"] != nil)
        #expect(metadata["error"]?.contains("404") == true)
    }
}
