import Depot
import DepotOffline
import Foundation

// depot-offline-crash: the child of the crash-safety tests (Tests/DepotOfflineTests/
// Store/CrashSafetyTests.swift, Outbox/ReplayCrash*Tests.swift). It queues writes in an OfflineStore as fast
// as it can, through `.offline(store)` in front of a backend that can never connect, and says on
// stdout which writes it was told were queued; or, with --replay, it replays the store's outbox
// to a server and says which entries were sent. The tests kill it with SIGKILL at a random
// moment (or run two at once) and check the file and the server. See README.md beside this file.

let usage = """
    usage: depot-offline-crash STORE [--writers W] [--count N] [--seq-base B]
           depot-offline-crash STORE --replay URL [--wait-stdin] [--conflicts] [--requests]
      STORE         the OfflineStore file (created when missing)
      --writers     concurrent writers, each sending one write after another (default 4)
      --count       stop after N writes in all (default: never, until killed)
      --seq-base    the first sequence number (default 0); writer w sends B+w, B+w+W, B+w+2W, …
      --replay      queue nothing: replay the outbox through URLSessionBackend(baseURL: URL)
                    with store.outbox.replay(through:), then exit
      --wait-stdin  with --replay: start replaying only when stdin ends (a test closes it in
                    two children at once)
      --conflicts   with --replay: print the events .conflict and .discarded too
      --requests    with --replay: print each request the replay sends, and its answer
    stdout, one line each, written with one write(2) as soon as it is known:
      ready                                  the store is open
      queued <id> <idempotencyKey> <seq>     the write <seq> failed with .queued: the caller was told
      other <seq> <error>                    any other outcome (the harness counts it as a failure)
      done <writes>                          --count reached
    with --replay:
      ready                                  the store is open (before waiting for stdin)
      sent <id> <idempotencyKey> <status> <replayed>
                                             the event .sent: the server answered 2xx and the entry
                                             is gone from the store; <replayed> is true when the
                                             answer had `Idempotent-Replayed: true` (the server had
                                             applied that key before), else false
      kept <id> <idempotencyKey> <status>    the event .kept: the server refused the entry
      created <id> <localID> <serverID>      the event .created, after the create's sent line: the
                                             local id the entry's record had in the store is the
                                             server's id from now on (ids as JSON: -1, 101, "a")
      conflict <id> <kind> <fields> <state>  (--conflicts) the event .conflict: <kind> sameFields,
                                             deletedWhereChanged or changedWhereDeleted, <fields>
                                             the colliding fields joined by commas (- for none),
                                             <state> kept (kept for the app) or queued (.sent or
                                             .discarded follows)
      discarded <id> <idempotencyKey>        (--conflicts) the event .discarded (a conflict the
                                             policy dropped the write for)
      request <method> <path> <idempotencyKey>
                                             (--requests) the replay hands a request to
                                             URLSessionBackend (<idempotencyKey> - for none), a
                                             GET that reads a record before its write included
      answer <method> <path> <status>        (--requests) its answer arrived (<status> 0: none)
      replayed <sent> <kept> <remaining> <ending> <requests>
                                             the replay's report, and how many requests this
                                             process sent; then it exits 0
    What write <seq> is (seq mod 8): 0…4 POST posts {"seq": seq, …}; 5 PUT items/<seq>;
    6 PATCH items/<seq>; 7 DELETE items/<seq>.
    """

/// A backend that never reaches its server: every request fails with `.cannotConnect`.
struct Unreachable: Backend {
    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        .failure(.cannotConnect)
    }
}

/// Lines to stdout, each with one `write(2)` (atomic on a pipe up to PIPE_BUF bytes), under a
/// lock so writers never interleave.
final class Output: Sendable {
    private let lock = NSLock()

    func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        lock.lock()
        defer { lock.unlock() }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    exit(3)  // stdout is gone: the parent is no longer listening
                }
                offset += written
            }
        }
    }
}

/// The write with sequence number `seq` (see the usage).
func request(_ seq: Int) -> BackendRequest {
    func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }
    let headers: HTTPHeaders = ["Content-Type": "application/json"]
    switch seq % 8 {
    case 5:
        return BackendRequest(
            method: .put, path: "items/\(seq)", headers: headers,
            body: json(["seq": seq, "state": "put"]))
    case 6:
        return BackendRequest(
            method: .patch, path: "items/\(seq)", headers: headers,
            body: json(["seq": seq, "state": "patched"]))
    case 7:
        return BackendRequest(method: .delete, path: "items/\(seq)")
    default:
        return BackendRequest(
            method: .post, path: "posts", headers: headers,
            body: json(["seq": seq, "title": "crash \(seq)", "body": String(repeating: "x", count: seq % 97)])
        )
    }
}

var arguments = CommandLine.arguments.dropFirst()
var storePath: String?
var writers = 4
var count: Int?
var seqBase = 0
var replayURL: URL?
var waitForStdin = false
var printConflicts = false
var printRequests = false
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("depot-offline-crash: \(message)\n\(usage)\n".utf8))
    exit(2)
}
while let argument = arguments.popFirst() {
    func number() -> Int {
        guard let text = arguments.popFirst(), let value = Int(text), value >= 0 else {
            fail("\(argument) takes a non-negative integer")
        }
        return value
    }
    switch argument {
    case "--writers": writers = max(1, number())
    case "--count": count = number()
    case "--seq-base": seqBase = number()
    case "--replay":
        guard let text = arguments.popFirst(), let url = URL(string: text), url.scheme != nil else {
            fail("--replay takes the server's URL")
        }
        replayURL = url
    case "--wait-stdin": waitForStdin = true
    case "--conflicts": printConflicts = true
    case "--requests": printRequests = true
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        guard storePath == nil, !argument.hasPrefix("-") else { fail("unexpected argument \(argument)") }
        storePath = argument
    }
}
guard let storePath else { fail("no store file given") }

let output = Output()
let store: OfflineStore
do {
    store = try OfflineStore(at: URL(fileURLWithPath: storePath))
} catch {
    FileHandle.standardError.write(Data("depot-offline-crash: cannot open the store: \(error)\n".utf8))
    exit(1)
}
if let replayURL {
    output.line("ready")
    if waitForStdin { readToEnd(0) }
    await replay(
        store, to: replayURL, output: output, conflicts: printConflicts, requests: printRequests)
    exit(0)
}
// No bound on the outbox: the reused file of the test accumulates more than the default
// 10,000 entries over its rounds.
let backend = Unreachable().with(.offline(store, policy: OfflinePolicy(maxQueuedWrites: .max)))
output.line("ready")

await send(through: backend, writers: writers, count: count, seqBase: seqBase, output: output)
output.line("done \(count ?? 0)")

/// Sends writes through `backend` from `writers` concurrent tasks, each one after another,
/// `count` in all (or until killed), and reports each outcome on `output`.
func send(through backend: any Backend, writers: Int, count: Int?, seqBase: Int, output: Output) async {
    await withTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            // Writer w sends count / writers writes, one more for the first count % writers.
            let limit = count.map { $0 / writers + (writer < $0 % writers ? 1 : 0) }
            group.addTask {
                var index = 0
                while limit.map({ index < $0 }) ?? true {
                    let seq = seqBase + writer + index * writers
                    index += 1
                    switch await backend.send(request(seq)).result {
                    case .failure(.queued(let write)):
                        output.line("queued \(write.id) \(write.idempotencyKey) \(seq)")
                    case .failure(let error):
                        let described = String(describing: error).replacingOccurrences(of: "\n", with: " ")
                        output.line("other \(seq) \(described)")
                    case .success(let response):
                        output.line("other \(seq) answered \(response.status)")
                    }
                }
            }
        }
    }
}

/// Reads the file descriptor `fd` until it ends.
func readToEnd(_ fd: Int32) {
    var buffer = [UInt8](repeating: 0, count: 512)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count == 0 || (count < 0 && errno != EINTR) { return }
    }
}

/// Replays the outbox of `store` to the server at `url` and reports each `.sent` and `.kept`
/// event (with `conflicts`, each `.conflict` and `.discarded` too; with `requests`, each request
/// and its answer), then the replay's report, on `output` (see the usage).
func replay(_ store: OfflineStore, to url: URL, output: Output, conflicts: Bool, requests: Bool) async {
    let server = Counting(URLSessionBackend(baseURL: url, timeout: 30), output: requests ? output : nil)
    let reported = EventTally()
    let events = store.outbox.events
    let printer = Task.detached {
        // A create's `.sent` counts as printed once its `.created` (which follows at once) is
        // printed too; when none comes, with the next event.
        var awaitingCreated = false
        for await event in events {
            if case .created(let entry, let localID, let serverID) = event {
                output.line("created \(entry.id) \(jsonText(localID)) \(jsonText(serverID))")
                if awaitingCreated { reported.add() }
                awaitingCreated = false
                continue
            }
            if awaitingCreated { reported.add() }
            awaitingCreated = false
            switch event {
            case .sent(let entry, let response):
                let replayed = response.headers["Idempotent-Replayed"] == "true"
                output.line("sent \(entry.id) \(entry.idempotencyKey) \(response.status) \(replayed)")
                if entry.localID == nil { reported.add() } else { awaitingCreated = true }
            case .kept(let entry, let error):
                output.line("kept \(entry.id) \(entry.idempotencyKey) \(error.statusCode ?? 0)")
                reported.add()
            case .conflict(let entry, let conflict):
                let kept = !entry.isQueued
                if conflicts {
                    let fields = conflict.fields.isEmpty ? "-" : conflict.fields.joined(separator: ",")
                    output.line(
                        "conflict \(entry.id) \(conflict.kind.rawValue) \(fields) \(kept ? "kept" : "queued")"
                    )
                }
                // Kept for the app, it counts in the report's `kept` with no `.kept` event.
                if kept { reported.add() }
            case .discarded(let entry):
                if conflicts { output.line("discarded \(entry.id) \(entry.idempotencyKey)") }
            case .queued, .created:
                continue
            }
        }
    }
    let report = await store.outbox.replay(through: server)
    // Each event is emitted before the replay returns: wait (bounded) until all are printed.
    reported.wait(for: report.sent + report.kept, seconds: 30)
    printer.cancel()
    let ending =
        switch report.ending {
        case .finished: "finished"
        case .interrupted: "interrupted"
        case .noBackend: "noBackend"
        case .storeFailed: "storeFailed"
        }
    output.line(
        "replayed \(report.sent) \(report.kept) \(report.remaining) \(ending) \(server.requests)")
}

/// An id as JSON text: `-1`, `101`, `"local-…"`.
func jsonText(_ id: JSONValue) -> String {
    let data = (try? JSONEncoder().encode(id)) ?? Data()
    return String(decoding: data, as: UTF8.self)
}

/// A backend that counts the requests it passes on to `backend`, and prints each one and its
/// answer on `output` when given one.
final class Counting: Backend, @unchecked Sendable {
    private let backend: any Backend
    private let output: Output?
    private let count = NSLock()
    private var sent = 0  // under `count`

    init(_ backend: any Backend, output: Output? = nil) {
        self.backend = backend
        self.output = output
    }

    var requests: Int {
        count.withLock { sent }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        count.withLock { sent += 1 }
        guard let output else { return backend.send(request) }
        let method = request.method.rawValue
        let key = request.headers["Idempotency-Key"] ?? "-"
        output.line("request \(method) \(request.path) \(key)")
        let future = backend.send(request)
        return Future { promise in
            future.start { result in
                let status =
                    switch result {
                    case .success(let response): response.status
                    case .failure(let error): error.statusCode ?? 0
                    }
                output.line("answer \(method) \(request.path) \(status)")
                promise(result)
            }
        }
    }
}

/// How many events were printed, for the main task to wait on.
final class EventTally: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0  // under `condition`

    func add() {
        condition.lock()
        defer { condition.unlock() }
        count += 1
        condition.broadcast()
    }

    /// Returns when `expected` events were counted, or after `seconds`.
    func wait(for expected: Int, seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while count < expected, condition.wait(until: deadline) {}
    }
}
