import Depot
import DepotOffline
import Foundation

// depot-offline-crash: the child of the crash-safety test (Tests/DepotOfflineTests/
// CrashSafetyTests.swift). It queues writes in an OfflineStore as fast as it can, through
// `.offline(store)` in front of a backend that can never connect, and says on stdout which
// writes it was told were queued; the test kills it with SIGKILL at a random moment and checks
// the file. See README.md beside this file.

let usage = """
    usage: depot-offline-crash STORE [--writers W] [--count N] [--seq-base B]
      STORE       the OfflineStore file (created when missing)
      --writers   concurrent writers, each sending one write after another (default 4)
      --count     stop after N writes in all (default: never, until killed)
      --seq-base  the first sequence number (default 0); writer w sends B+w, B+w+W, B+w+2W, …
    stdout, one line each, written with one write(2) as soon as it is known:
      ready                                  the store is open
      queued <id> <idempotencyKey> <seq>     the write <seq> failed with .queued: the caller was told
      other <seq> <error>                    any other outcome (the harness counts it as a failure)
      done <writes>                          --count reached
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
