import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every way a request can go wrong over a real socket, and the ``ServiceError`` case
/// it must end in: one row per fault, against httpbin, the fault server of
/// scripts/servers/fault_server.py and a closed port.
///
/// Each row starts the future once with a completion, checks that the completion ran
/// exactly once, with the expected case, within the row's timeout + 2 s.
@Suite(.liveServers) struct FaultMatrixTests {
    /// Which live server a row talks to.
    enum Server: Sendable {
        case httpbin, fault, closed

        var url: URL? {
            switch self {
            case .httpbin: LiveServer.httpbin
            case .fault: LiveServer.fault
            case .closed: LiveServer.closed
            }
        }
    }

    /// One request and how it must end.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let server: Server
        let path: String
        /// The backend's `timeout`.
        var timeout: TimeInterval = 5
        /// The backend's `maximumResponseBytes`.
        var limit: Int? = nil
        /// The `ServiceError` case name, or `"success"`.
        let expected: String
        /// For `transport` rows, the `URLError` code every platform must report.
        var code: URLError.Code? = nil
        /// For `transport` rows, the code FoundationNetworking (Linux) reports, where
        /// it is the platform's own choice (Apple platforms may report another).
        var linuxCode: URLError.Code? = nil

        var testDescription: String { name + (limit == nil ? "" : " (limit \(limit!))") }

        /// The same row through a backend with a response-size limit far above the body,
        /// so that the delegate-driven task classifies exactly as the plain one.
        var limited: Row {
            var row = self
            row.limit = 1 << 20
            return row
        }
    }

    static let transportRows: [Row] = [
        Row(name: "connection refused", server: .closed, path: "posts", expected: "cannotConnect"),
        Row(
            name: "accepts and never answers", server: .fault, path: "silent", timeout: 2,
            expected: "timedOut"),
        Row(
            name: "drips longer than the timeout", server: .fault, path: "drip?duration=10&numbytes=10",
            timeout: 2, expected: "timedOut"),
        Row(
            name: "httpbin drips longer than the timeout", server: .httpbin,
            path: "drip?duration=10&numbytes=10&delay=0", timeout: 2, expected: "timedOut"),
        // The three below are `transport` on every platform, with the platform's code.
        // FoundationNetworking (libcurl) reports: no answer at all ("Empty reply from
        // server") as badServerResponse (-1011); a body cut short ("transfer closed with
        // 900 bytes remaining to read") as -1, the unknown code; garbage ("Received
        // HTTP/0.9 when not allowed") as unsupportedURL (-1002).
        Row(
            name: "closes before answering", server: .fault, path: "close", expected: "transport",
            linuxCode: .badServerResponse),
        Row(
            name: "closes mid-body", server: .fault, path: "truncated", expected: "transport",
            linuxCode: .unknown),
        Row(
            name: "answers with garbage", server: .fault, path: "garbage", expected: "transport",
            linuxCode: .unsupportedURL),
        Row(
            name: "an endless chunked body", server: .fault, path: "endless", limit: 1 << 20,
            expected: "transport", code: .dataLengthExceedsMaximum),
        Row(
            name: "a declared body over the limit", server: .fault, path: "large?bytes=104857600",
            limit: 1 << 20, expected: "transport", code: .dataLengthExceedsMaximum),
        // The server declares 100 MiB and sends nothing more: only the Content-Length
        // check can end this before the timeout.
        Row(
            name: "a declared body over the limit, before any of it", server: .fault,
            path: "declared?bytes=104857600", limit: 1 << 20, expected: "transport",
            code: .dataLengthExceedsMaximum),
        // 200 KiB of a chunked body, then silence: only counting bytes as they arrive
        // can end this before the timeout.
        Row(
            name: "a chunked body past the limit, then silence", server: .fault,
            path: "chunked?bytes=204800&hold=1", limit: 102_400, expected: "transport",
            code: .dataLengthExceedsMaximum),
        Row(
            name: "a chunked body under the limit", server: .fault, path: "chunked?bytes=102400",
            limit: 1 << 20, expected: "success"),
        Row(
            name: "a declared body exactly at the limit", server: .fault, path: "large?bytes=102400",
            limit: 102_400, expected: "success"),
        Row(
            name: "a chunked body one byte over the limit", server: .fault, path: "chunked?bytes=102401",
            limit: 102_400, expected: "transport", code: .dataLengthExceedsMaximum),
        Row(name: "a fast answer", server: .fault, path: "json?id=7", timeout: 2, expected: "success"),
    ]

    static let statusRows: [Row] = [
        Row(name: "401", server: .httpbin, path: "status/401", expected: "unauthorized"),
        Row(
            name: "401 with a Basic challenge", server: .httpbin, path: "basic-auth/u/p",
            expected: "unauthorized"),
        Row(name: "403", server: .httpbin, path: "status/403", expected: "forbidden"),
        Row(name: "404", server: .httpbin, path: "status/404", expected: "notFound"),
        Row(name: "409", server: .httpbin, path: "status/409", expected: "conflict"),
        Row(name: "410", server: .httpbin, path: "status/410", expected: "notFound"),
        Row(name: "422", server: .httpbin, path: "status/422", expected: "clientError"),
        Row(name: "429", server: .httpbin, path: "status/429", expected: "serviceUnavailable"),
        Row(name: "500", server: .httpbin, path: "status/500", expected: "serverError"),
        Row(name: "503", server: .httpbin, path: "status/503", expected: "serviceUnavailable"),
        Row(
            name: "302 to a 418", server: .httpbin, path: "redirect-to?url=%2Fstatus%2F418&status_code=302",
            expected: "clientError"),
        Row(
            name: "a delay within the timeout", server: .httpbin, path: "delay/1", timeout: 3,
            expected: "success"),
    ]

    static let rows = transportRows + statusRows + statusRows.map(\.limited)

    @Test(arguments: rows) func endsInTheDocumentedCase(_ row: Row) async throws {
        let backend = URLSessionBackend(
            baseURL: try #require(row.server.url), timeout: row.timeout, maximumResponseBytes: row.limit)
        let bound = row.timeout + 2
        let run = await StartedOnce.run(backend.send(BackendRequest(path: row.path)), within: bound)
        let result = try #require(run.first, "no outcome within \(bound) s")
        let outcome = result.failure?.caseName ?? "success"
        #expect(outcome == row.expected, "\(result)")
        #expect(run.elapsed < bound, "ended after \(run.elapsed) s")
        #if canImport(FoundationNetworking)
            let code = row.code ?? row.linuxCode
        #else
            let code = row.code
        #endif
        if let code {
            guard case .transport(let actual, let description) = result.failure else { return }
            #expect(actual == code.rawValue, "\(description)")
            if code == .dataLengthExceedsMaximum { #expect(description.contains("maximumResponseBytes")) }
        }
        #expect(run.completions() == 1)
    }

    @Test func aSessionPassedInKeepsTheLimitToo() async throws {
        // On Linux such a session shows the body only to its own delegate: the limit is
        // checked once the body has arrived, with the same error.
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let backend = URLSessionBackend(
            baseURL: try #require(LiveServer.fault), session: session, timeout: 5, maximumResponseBytes: 1000)
        let over = await backend.send(BackendRequest(path: "large?bytes=1001")).result
        guard case .transport(let code, _) = over.failure else {
            Issue.record("expected a transport failure, got \(over)")
            return
        }
        #expect(code == URLError.Code.dataLengthExceedsMaximum.rawValue)
        let within = try await backend.send(BackendRequest(path: "large?bytes=1000")).value
        #expect(within.body.count == 1000)
    }
}

/// One start of a future with a completion that counts its calls.
struct StartedOnce<Value: Sendable>: Sendable {
    /// The first outcome, or `nil` when none came within the bound.
    let first: Result<Value, ServiceError>?
    /// Seconds from start to the first outcome (or to the bound).
    let elapsed: Double
    /// How many times the completion ran so far.
    let completions: @Sendable () -> Int

    /// Starts `future` and waits for its first outcome, at most `bound` seconds; then
    /// waits a further quarter second, so that a second call of the completion (which
    /// would come from the same request's other ending) has its chance to be counted.
    static func run(_ future: Future<Value, ServiceError>, within bound: TimeInterval) async -> Self {
        let count = Locked(0)
        let clock = ContinuousClock()
        let start = clock.now
        let gate = Locked<CheckedContinuation<Result<Value, ServiceError>?, Never>?>(nil)
        let first: Result<Value, ServiceError>? = await withCheckedContinuation { continuation in
            gate.withLock { $0 = continuation }
            future.start { result in
                count.withLock { $0 += 1 }
                gate.withLock { $0.take() }?.resume(returning: result)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + bound + 1) {
                gate.withLock { $0.take() }?.resume(returning: nil)
            }
        }
        let elapsed = start.duration(to: clock.now)
        try? await Task.sleep(for: .milliseconds(250))
        return StartedOnce(
            first: first,
            elapsed: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            completions: { count.withLock { $0 } })
    }
}
