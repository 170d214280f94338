import Depot
import Foundation

/// One input on its way through a target, and what went wrong with it.
final class Harness {
    /// How long a future may take to complete (seconds): anything later is a stall.
    let waitBound: TimeInterval
    /// How long one call may take, from start to outcome, even when it completes on the
    /// caller's thread (seconds): a parser that is slow on some input is a stall too.
    let slowBound: TimeInterval
    /// What went wrong with the current input (empty when all is well).
    private(set) var problems: [String] = []

    init(waitBound: TimeInterval, slowBound: TimeInterval) {
        self.waitBound = waitBound
        self.slowBound = slowBound
    }

    /// Records a stall when the call that started at `start` took longer than the bound.
    func timed(_ label: String, since start: DispatchTime) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        if seconds > slowBound {
            fail("\(label): took \(String(format: "%.2f", seconds)) s (bound \(slowBound) s)")
        }
    }

    func reset() {
        problems.removeAll(keepingCapacity: true)
    }

    /// Records a wrong outcome for the current input.
    func fail(_ problem: String) {
        problems.append(problem)
    }

    /// Records a wrong outcome unless `condition` holds.
    func check(_ condition: Bool, _ problem: @autoclosure () -> String) {
        if !condition { fail(problem()) }
    }

    /// Starts `future` and returns its one outcome, or `nil` (and a recorded problem) when it
    /// does not complete within the bound. A second completion, now or later, is recorded too.
    func outcome<Value: Sendable>(
        _ future: Future<Value, ServiceError>, _ label: String
    ) -> Result<Value, ServiceError>? {
        let probe = CompletionProbe<Value>(label: label)
        let start = DispatchTime.now()
        future.start { probe.complete($0) }
        guard let result = probe.wait(waitBound) else {
            fail("\(label): no completion within \(waitBound) s")
            return nil
        }
        timed(label, since: start)
        return result
    }

    /// Awaits `future.result` (the async bridge) from a task, with the same bound.
    func awaitedOutcome<Value: Sendable>(
        _ future: Future<Value, ServiceError>, _ label: String
    ) -> Result<Value, ServiceError>? {
        let probe = CompletionProbe<Value>(label: label)
        let start = DispatchTime.now()
        let task = Task { probe.complete(await future.result) }
        guard let result = probe.wait(waitBound) else {
            task.cancel()
            fail("\(label) (awaited): no result within \(waitBound) s")
            return nil
        }
        timed(label, since: start)
        return result
    }

    /// Checks that a failure is typed sensibly: it describes itself, and a failure that
    /// carries a response carries the status it was classified from.
    func inspect(_ error: ServiceError, _ label: String) {
        let text = error.errorDescription ?? ""
        check(!text.isEmpty, "\(label): \(error) has no description")
        _ = error.message
        if let status = error.statusCode {
            check(
                Classification.matches(error, status: status),
                "\(label): status \(status) classified as \(error)")
        }
    }

    /// Checks the failure of a call whose backend answered `status`.
    func expectFailure(_ error: ServiceError, status: Int, _ label: String) {
        inspect(error, label)
        check(error.statusCode == status, "\(label): answered \(status), failed with \(error)")
    }
}

/// The classifier's table, restated: which case each status must end in.
enum Classification {
    static func matches(_ error: ServiceError, status: Int) -> Bool {
        switch (status, error) {
        case (401, .unauthorized), (403, .forbidden), (404, .notFound), (410, .notFound), (409, .conflict),
            (429, .serviceUnavailable), (503, .serviceUnavailable):
            return true
        case (401, _), (403, _), (404, _), (410, _), (409, _), (429, _), (503, _):
            return false
        case (400..<500, .clientError), (500..<600, .serverError):
            return true
        case (400..<600, _):
            return false
        case (_, .unexpectedStatus):
            return !(200..<300).contains(status)
        default:
            return false
        }
    }
}

/// Counts the completions of one start.
final class CompletionProbe<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private var count = 0
    private var result: Result<Value, ServiceError>?
    private let label: String

    init(label: String) {
        self.label = label
    }

    func complete(_ outcome: Result<Value, ServiceError>) {
        lock.lock()
        count += 1
        let isFirst = count == 1
        if isFirst { result = outcome }
        lock.unlock()
        if isFirst {
            done.signal()
        } else {
            LateProblems.shared.add("\(label): completed \(count) times")
        }
    }

    func wait(_ bound: TimeInterval) -> Result<Value, ServiceError>? {
        if let result = current() { return result }
        _ = done.wait(timeout: .now() + bound)
        return current()
    }

    private func current() -> Result<Value, ServiceError>? {
        lock.lock()
        defer { lock.unlock() }
        return result
    }
}

/// Problems that arrive after their input was done (a second completion on another thread);
/// the run checks them after each input and at the end of each target.
final class LateProblems: @unchecked Sendable {
    static let shared = LateProblems()
    private let lock = NSLock()
    private var problems: [String] = []

    func add(_ problem: String) {
        lock.lock()
        problems.append(problem)
        lock.unlock()
    }

    func take() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        let taken = problems
        problems.removeAll()
        return taken
    }
}

/// The input being run, kept where a crash or a stall cannot lose it: in a file rewritten
/// before every input (two system calls), and in memory for the watchdog.
final class CurrentInput: @unchecked Sendable {
    private let descriptor: Int32
    let path: String
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var label = ""
    private var startedAt = Date()
    private var serial: UInt64 = 0

    init(path: String) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }

    func set(_ input: [UInt8], label: String) {
        if descriptor >= 0 {
            _ = ftruncate(descriptor, 0)
            _ = input.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        lock.lock()
        bytes = input
        self.label = label
        startedAt = Date()
        serial &+= 1
        lock.unlock()
    }

    var snapshot: (bytes: [UInt8], label: String, startedAt: Date, serial: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        return (bytes, label, startedAt, serial)
    }
}

/// Where failing inputs go, and how they are shown in the log.
enum FailureReport {
    static func save(_ input: [UInt8], target: String, kind: String, directory: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in input { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent(
            "\(target)-\(kind)-\(String(hash, radix: 16)).bin")
        _ = FileManager.default.createFile(atPath: path, contents: Data(input))
        return path
    }

    static func print(_ input: [UInt8], target: String, headline: String, saved path: String) {
        let base64 = Data(input).base64EncodedString()
        let lines = [
            headline,
            "fuzz:   input (\(input.count) bytes) saved to \(path)",
            "fuzz:   replay: swift run -c release --scratch-path .build/release-bench depot-fuzz "
                + "--replay \(path) --target \(target)",
            "fuzz:   base64: \(base64.count > 20_000 ? String(base64.prefix(20_000)) + "…" : base64)",
        ]
        say(lines.joined(separator: "\n"))
    }
}

/// Ends the process when one input runs longer than the bound: a parser that loops or a
/// wait that never ends is a failure, reported with the input.
enum Watchdog {
    static func start(
        _ current: CurrentInput, target: String, bound: TimeInterval, failureDirectory: String
    ) {
        let thread = Thread {
            while true {
                Thread.sleep(forTimeInterval: 0.1)
                let snapshot = current.snapshot
                guard snapshot.serial != 0, -snapshot.startedAt.timeIntervalSinceNow > bound else { continue }
                let path = FailureReport.save(
                    snapshot.bytes, target: target, kind: "hang", directory: failureDirectory)
                FailureReport.print(
                    snapshot.bytes, target: target,
                    headline: "fuzz: HANG in target \(target): \(snapshot.label) ran over \(bound) s",
                    saved: path)
                exit(3)
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// Writes a line to standard output at once (unbuffered: a worker's lines and its
/// supervisor's stay in order, and a trap loses nothing).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
