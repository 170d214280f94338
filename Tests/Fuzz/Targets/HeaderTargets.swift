import Depot
import DepotInMemory
import Foundation

/// A backend that answers each request with what a closure makes of it.
struct ClosureBackend: Backend {
    let answer: @Sendable (BackendRequest) -> BackendResponse

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future(result: ServiceError.check(answer(request), for: request))
    }
}

/// Link headers (one field per line): the parser, then paging that follows what it found.
enum LinkHeaderTarget {
    static let page = Data(
        (1...10).map { #"{"id":\#($0),"userId":1,"title":"t\#($0)","body":"b"}"# }.joined(separator: ",")
            .utf8)

    static func run(_ input: [UInt8], _ harness: Harness) {
        let start = DispatchTime.now()
        defer { harness.timed("Link parsing and paging", since: start) }
        var headers: HTTPHeaders = ["X-Total-Count": "100"]
        for line in lines(input) {
            let value = text(line)
            headers.add("Link", value)
            do {
                for link in try LinkHeader.parse(value) {
                    harness.check(!link.rel.isEmpty, "an empty rel from \(value.debugDescription)")
                    harness.check(
                        !link.href.contains(">"), "an href with \">\" from \(value.debugDescription)")
                }
            } catch {
                harness.inspect(error, "LinkHeader.parse")
                if case .decoding = error {} else { harness.fail("LinkHeader.parse failed with \(error)") }
            }
        }
        _ = try? LinkHeader.links(in: headers)
        var body = Data("[".utf8)
        body.append(page)
        body.append(Data("]".utf8))
        let backend = FixedBackend(response: BackendResponse(status: 200, headers: headers, body: body))
        for style in paginationStyles.prefix(3) {
            let label = "findPage(\(style.name))"
            let posts = FuzzRepository<Post>(name: "posts", backend: backend, pagination: style.pagination)
            let result = harness.outcome(posts.findPage(1, size: 10), label)
            expectDecoded(result, label, harness)
            guard case .success(let first) = result else { continue }
            _ = first.nextAddress
            _ = first.pageCount
            guard first.hasNext else { continue }
            let second = harness.outcome(posts.findPage(after: first), "\(label) next")
            expectDecoded(second, "\(label) next", harness)
        }
    }
}

/// WWW-Authenticate challenges (one field per line) through the parser and a 401.
enum AuthenticateTarget {
    static func run(_ input: [UInt8], _ harness: Harness) {
        let start = DispatchTime.now()
        defer { harness.timed("challenge parsing", since: start) }
        var headers: HTTPHeaders = [:]
        var expected: [AuthenticationChallenge] = []
        for line in lines(input) {
            let value = text(line)
            headers.add("WWW-Authenticate", value)
            let challenges = AuthenticationChallenge.parse(value)
            for challenge in challenges {
                harness.check(
                    !challenge.scheme.isEmpty && !challenge.scheme.contains("=")
                        && !challenge.scheme.contains(where: { $0.isWhitespace || $0 == "," }),
                    "a scheme \(challenge.scheme.debugDescription) from \(value.debugDescription)")
                _ = challenge.realm
            }
            expected += challenges
        }
        let response = BackendResponse(status: 401, headers: headers, body: Data(input.prefix(256)))
        guard
            case .unauthorized(_, let challenges) = ServiceError(
                response: response, for: BackendRequest(path: "me"))
        else { return harness.fail("a 401 is not .unauthorized") }
        harness.check(challenges == expected, "the 401 kept other challenges than the parser finds")

        // Bearer auth refreshes once on a 401 and then gives up with the 401: one completion.
        let backend = FixedBackend(response: response).with(
            .bearer(token: { "token" }, refresh: { _ in "fresh" }))
        let posts = FuzzRepository<Post>(name: "posts", backend: backend)
        switch harness.outcome(posts.findByID(1), "bearer over 401") {
        case .success: harness.fail("a 401 behind bearer auth succeeded")
        case .failure(let error): harness.inspect(error, "bearer over 401")
        case nil: break
        }
    }
}

/// Retry-After (line 1) with Date (line 2) on 503 and 429; every line through HTTPDate.
enum RetryAfterTarget {
    static func run(_ input: [UInt8], _ harness: Harness) {
        let fields = lines(input).map(text)
        var headers: HTTPHeaders = ["Retry-After": fields[0]]
        if fields.count > 1 { headers["Date"] = fields[1] }
        for status in [503, 429] {
            let response = BackendResponse(status: status, headers: headers)
            switch ServiceError(response: response, for: BackendRequest(path: "x")) {
            case .serviceUnavailable(_, let retryAfter)?:
                if let retryAfter {
                    harness.check(
                        retryAfter.isFinite && retryAfter >= 0, "Retry-After \(fields[0]) gave \(retryAfter)")
                }
            default: harness.fail("a \(status) is not .serviceUnavailable")
            }
        }
        for field in fields.prefix(4) {
            guard let date = HTTPDate.parse(field) else { continue }
            let formatted = HTTPDate.format(date)
            guard let again = HTTPDate.parse(formatted) else {
                harness.fail("HTTPDate.format wrote \(formatted.debugDescription), which does not parse")
                continue
            }
            harness.check(
                abs(again.timeIntervalSince(date)) < 1,
                "HTTPDate round trip of \(field.debugDescription): \(formatted) is \(again), not \(date)")
        }
    }
}

/// Entity tags and dates, one per line: [0] the server's ETag, [1] the client's
/// If-None-Match, [2] Last-Modified, [3] If-Modified-Since, [4] Cache-Control, [5] Vary.
enum EntityTagTarget {
    static let body = Data(#"{"id":1,"userId":1,"title":"t","body":"b"}"#.utf8)

    static func run(_ input: [UInt8], _ harness: Harness) {
        let fields = lines(input).map(text)
        func field(_ index: Int) -> String? {
            index < fields.count && !fields[index].isEmpty ? fields[index] : nil
        }
        var validators: HTTPHeaders = ["Content-Type": "application/json"]
        validators["ETag"] = field(0)
        validators["Last-Modified"] = field(2)
        validators["Cache-Control"] = field(4)
        validators["Vary"] = field(5)
        let served = validators
        var conditions: HTTPHeaders = [:]
        conditions["If-None-Match"] = field(1)
        conditions["If-Modified-Since"] = field(3)

        // The in-memory conditional GET: a route that sends these validators.
        let memory = InMemoryBackend()
        memory.route(.get, "r") { _ throws(ServiceError) in
            BackendResponse(status: 200, headers: served, body: body)
        }
        let request = BackendRequest(path: "r", headers: conditions)
        // Validators no backend may send (CR, LF, NUL) are refused as every backend refuses them.
        let refused = conditions.firstUnsafeField != nil
        func expectRefusedOrServed(_ error: ServiceError, _ label: String) {
            guard refused, case .invalidRequest = error else {
                harness.fail("\(label) failed: \(error)")
                return
            }
        }
        switch harness.outcome(memory.send(request), "conditional GET") {
        case .success(let response):
            harness.check(!refused, "conditional GET: validators with CR, LF or NUL were sent")
            harness.check(
                response.status == 200 || response.status == 304, "conditional GET: \(response.status)")
            if response.status == 200 {
                harness.check(response.body == body, "conditional GET: another body")
            }
        case .failure(let error): expectRefusedOrServed(error, "conditional GET")
        case nil: break
        }
        // The JSON server's own tags, sent back mutated.
        if let seeded = try? InMemoryBackend(database: Data(#"{"posts":[{"id":1,"title":"t"}]}"#.utf8)) {
            let matched = harness.outcome(
                seeded.send(BackendRequest(path: "posts/1", headers: conditions)), "posts/1")
            if case .failure(let error) = matched { expectRefusedOrServed(error, "conditional GET posts/1") }
        }

        // The cache: a server that answers 304 to any validator, with its tag.
        let server = ClosureBackend { request in
            if request.isConditional {
                var headers = HTTPHeaders()
                headers["ETag"] = served["ETag"]
                return BackendResponse(status: 304, headers: headers)
            }
            return BackendResponse(status: 200, headers: served, body: body)
        }
        for conditionalWrites in [false, true] {
            let cached = server.with(
                .cache(maxEntries: 4, maxBytes: 1 << 16, conditionalWrites: conditionalWrites))
            for attempt in 1...2 {
                let label = "cached GET \(attempt)"
                switch harness.outcome(cached.send(BackendRequest(path: "posts/1")), label) {
                case .success(let response):
                    harness.check(
                        response.status == 200 && response.body == body, "\(label): \(response.status)")
                case .failure(let error): harness.fail("\(label) failed: \(error)")
                case nil: break
                }
            }
            let conditional = harness.outcome(
                cached.send(BackendRequest(path: "posts/1", headers: conditions)), "own")
            if case .failure(let error) = conditional {
                harness.fail("a GET with its own validators: \(error)")
            }
            let put = BackendRequest(method: .put, path: "posts/1", body: body)
            if case .failure(let error) = harness.outcome(cached.send(put), "cached PUT") {
                harness.fail("PUT through the cache failed: \(error)")
            }
        }
    }
}
