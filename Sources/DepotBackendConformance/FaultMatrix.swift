import Depot
import Foundation
import Testing

/// Every way a request can go wrong over a real socket, and the ``ServiceError`` case
/// it must end in: one row per fault, against httpbin, the fault server of
/// scripts/servers/fault_server.py and a closed port.
///
/// ``check(_:on:)`` starts the future once with a completion and checks that the
/// completion ran exactly once, with the expected case, within the row's timeout + 2 s.
public enum FaultMatrix {
    /// Which live server a row talks to.
    public enum Server: Sendable {
        /// httpbin (``LiveServer/httpbin``).
        case httpbin
        /// The fault server (``LiveServer/fault``).
        case fault
        /// A port where nothing listens (``LiveServer/closed``).
        case closed

        /// The server's URL, when `bash scripts/test` started it.
        public var url: URL? {
            switch self {
            case .httpbin: LiveServer.httpbin
            case .fault: LiveServer.fault
            case .closed: LiveServer.closed
            }
        }
    }

    /// One request and how it must end.
    public struct Row: Sendable, CustomTestStringConvertible {
        /// What goes wrong.
        public let name: String
        /// The server the request goes to.
        public let server: Server
        /// The request's path.
        public let path: String
        /// The backend's `timeout`.
        public var timeout: TimeInterval = 5
        /// The backend's `maximumResponseBytes`.
        public var limit: Int? = nil
        /// The `ServiceError` case name, or `"success"`.
        public let expected: String
        /// For `transport` rows, the code every backend must report.
        public var code: Int? = nil
        /// For `transport` rows whose code is the client's own choice: the fault, whose
        /// code ``BackendUnderTest/transportCode`` gives.
        public var fault: TransportFault? = nil

        /// The row's name and limit.
        public var testDescription: String { name + (limit.map { " (limit \($0))" } ?? "") }

        /// The same row through a backend with a response-size limit far above the body,
        /// so that a backend that counts the body as it arrives classifies exactly as
        /// one that does not.
        var limited: Row {
            var row = self
            row.limit = 1 << 20
            return row
        }
    }

    private static let tooLarge = ServiceError.responseTooLargeCode

    /// The transport faults: refused, silent, dripping, cut, garbage, too large.
    public static let transportRows: [Row] = [
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
        // The three below are `transport` on every backend, with the client's own code.
        Row(
            name: "closes before answering", server: .fault, path: "close", expected: "transport",
            fault: .closesBeforeAnswering),
        Row(
            name: "closes mid-body", server: .fault, path: "truncated", expected: "transport",
            fault: .closesMidBody),
        Row(
            name: "answers with garbage", server: .fault, path: "garbage", expected: "transport",
            fault: .garbage),
        Row(
            name: "an endless chunked body", server: .fault, path: "endless", limit: 1 << 20,
            expected: "transport", code: tooLarge),
        Row(
            name: "a declared body over the limit", server: .fault, path: "large?bytes=104857600",
            limit: 1 << 20, expected: "transport", code: tooLarge),
        // The server declares 100 MiB and sends nothing more: only the Content-Length
        // check can end this before the timeout.
        Row(
            name: "a declared body over the limit, before any of it", server: .fault,
            path: "declared?bytes=104857600", limit: 1 << 20, expected: "transport", code: tooLarge),
        // 200 KiB of a chunked body, then silence: only counting bytes as they arrive
        // can end this before the timeout.
        Row(
            name: "a chunked body past the limit, then silence", server: .fault,
            path: "chunked?bytes=204800&hold=1", limit: 102_400, expected: "transport", code: tooLarge),
        Row(
            name: "a chunked body under the limit", server: .fault, path: "chunked?bytes=102400",
            limit: 1 << 20, expected: "success"),
        Row(
            name: "a declared body exactly at the limit", server: .fault, path: "large?bytes=102400",
            limit: 102_400, expected: "success"),
        Row(
            name: "a chunked body one byte over the limit", server: .fault, path: "chunked?bytes=102401",
            limit: 102_400, expected: "transport", code: tooLarge),
        Row(name: "a fast answer", server: .fault, path: "json?id=7", timeout: 2, expected: "success"),
    ]

    /// Statuses through the one classifier, over a real socket.
    public static let statusRows: [Row] = [
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

    /// Every row: the transport faults, the statuses, and the statuses again with a limit.
    public static let rows = transportRows + statusRows + statusRows.map(\.limited)

    /// Checks that `row` ends in its documented case on `backend`, exactly once and in time.
    public static func check(_ row: Row, on backend: BackendUnderTest) async throws {
        let made = backend.backend(
            try #require(row.server.url), timeout: row.timeout, maximumResponseBytes: row.limit)
        let bound = row.timeout + 2
        let run = await StartedOnce.run(made.send(BackendRequest(path: row.path)), within: bound)
        let result = try #require(run.first, "no outcome within \(bound) s on \(backend)")
        let outcome = result.failure?.conformanceCaseName ?? "success"
        #expect(outcome == row.expected, "\(backend): \(result)")
        #expect(run.elapsed < bound, "\(backend) ended after \(run.elapsed) s")
        if let code = row.code ?? row.fault.flatMap(backend.transportCode) {
            guard case .transport(let actual, let description) = result.failure else { return }
            #expect(actual == code, "\(backend): \(description)")
            if code == tooLarge { #expect(description.contains("maximumResponseBytes")) }
        }
        #expect(run.completions() == 1)
    }
}
