import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Crash safety, measured (issue 12): a write whose `.queued` failure reached its caller survives
/// a `kill -9` at any later moment, and is replayed (at least once; see ReplayCrashTests for kills
/// during the replay itself).
///
/// Each round starts the child `depot-offline-crash` (Tests/CrashSafety/) on a store file; it
/// queues writes from four concurrent tasks through `.offline(store)` in front of a backend that
/// cannot connect and prints `queued <id> <key> <seq>` for each `.queued` failure it receives.
/// After a random 5–200 ms (from the start of the process, so some kills land while the file is
/// being created or opened) it is killed with SIGKILL. Then the file must open, pass
/// `PRAGMA integrity_check`, and hold every reported write once, with its key. Even rounds
/// reuse one file (its entries accumulate: none may disappear, and the earlier ones stay first);
/// odd rounds use a fresh file. Last, the reused file is replayed through an `InMemoryBackend`
/// without kills, and every write must be sent and applied once.
///
/// The child must write nothing to stderr (a trap, a sanitizer report). Seeded
/// (`DEPOT_CRASH_SEED`, default 12) and bounded: `DEPOT_CRASH_ROUNDS` kills (default 200, under
/// the thread sanitizer too), about 30 s of kills and up to 10 s of replay on a 2-core machine
/// (Tests/CrashSafety/README.md has the figures). `DEPOT_CRASH_CHILD` names the child binary
/// when it is not beside the test bundle.
@Suite("Crash safety")
struct CrashSafetyTests {
    @Test("Every write reported .queued survives SIGKILL and is replayed once", .timeLimit(.minutes(3)))
    func queuedWritesSurviveSIGKILL() async throws {
        guard let child = CrashChild.required() else { return }
        let seed = UInt64(ProcessInfo.processInfo.environment["DEPOT_CRASH_SEED"] ?? "") ?? 12
        let underTSan = CrashChild.threadSanitizerIsActive
        let rounds =
            Int(ProcessInfo.processInfo.environment["DEPOT_CRASH_ROUNDS"] ?? "") ?? 200
        let folder = try TemporaryFolder()
        let shared = folder.file("shared.sqlite")
        var random = SplitMix64(seed: seed)
        var totals = CrashTotals()
        var sharedIDs: [String] = []  // the reused file's entries after the last round on it
        var sharedReported: [Int: ReportedWrite] = [:]  // seq → what the child was told
        let started = ContinuousClock.now
        let deadline = started + .seconds(150)

        for round in 0..<rounds {
            guard ContinuousClock.now < deadline else {
                Issue.record("out of time after \(round) of \(rounds) rounds: a child or a check is stalling")
                break
            }
            let reuse = round % 2 == 0
            let file = reuse ? shared : folder.file("fresh-\(round).sqlite")
            let delay = Int(random.next(in: 5...200))
            // Sequence numbers are unique across the run, so records can be told apart after replay.
            let run = try await child.runAndKill(
                store: file, seqBase: round * 1_000_000, after: .milliseconds(delay),
                stderr: folder.file("child-\(round).stderr"))
            totals.kills += 1
            totals.reported += run.reported.count
            totals.unfinishedLines += run.unfinishedLine ? 1 : 0
            if run.ready { totals.roundsReady += 1 }
            totals.otherOutcomes += run.otherOutcomes.count
            if let first = run.otherOutcomes.first {
                Issue.record(
                    "round \(round): \(run.otherOutcomes.count) writes ended otherwise than .queued, first: \(first)"
                )
            }
            if !run.stderr.isEmpty {
                // The child writes nothing there: a trap, a sanitizer report, an error opening the store.
                Issue.record("round \(round): the child wrote to stderr: \(run.stderr)")
            }
            let context = "round \(round) (\(reuse ? "reused" : "fresh") file, killed after \(delay) ms)"

            // The file must open and be sound, whatever moment the kill hit.
            guard let (store, sound) = CrashChild.reopen(file, context: context) else { continue }
            if sound { totals.integrityOK += 1 }

            let entries = try store.outbox.entries()
            // Entries new in this round: committed, whether or not the child lived to print it.
            let known = reuse ? Set(sharedIDs) : []
            let reportedIDs = Set(run.reported.map(\.id))
            let new = entries.filter { !known.contains($0.id) }
            totals.entriesCommitted += new.count
            totals.committedUnreported += new.filter { !reportedIDs.contains($0.id) }.count
            let byID = Dictionary(grouping: entries, by: \.id)
            for (id, group) in byID where group.count > 1 {
                Issue.record("\(context): entry \(id) is listed \(group.count) times")
            }
            let keys = Dictionary(grouping: entries, by: \.idempotencyKey)
            for (key, group) in keys where group.count > 1 {
                Issue.record("\(context): Idempotency-Key \(key) is on \(group.count) entries")
            }
            for write in run.reported {
                guard let found = byID[write.id], let entry = found.first else {
                    Issue.record(
                        "\(context): write \(write.seq) was reported queued as \(write.id) but is gone")
                    totals.reportedMissing += 1
                    continue
                }
                totals.reportedFound += 1
                #expect(entry.idempotencyKey == write.idempotencyKey, "\(context): key of write \(write.seq)")
                #expect(entry.method == write.method, "\(context): method of write \(write.seq)")
                #expect(entry.path == write.path, "\(context): path of write \(write.seq)")
            }
            if reuse {
                // What the file held before this round is still there, in the same order, first.
                let ids = entries.map(\.id)
                if !ids.starts(with: sharedIDs) {
                    let lost = Set(sharedIDs).subtracting(ids)
                    Issue.record(
                        "\(context): the reused file lost or reordered earlier entries (\(lost.count) lost)")
                }
                sharedIDs = ids
                for write in run.reported { sharedReported[write.seq] = write }
            }
        }
        totals.killSeconds = (ContinuousClock.now - started).seconds

        // Replay the reused file once, without kills: every entry sent and applied once, in order.
        let replayStarted = ContinuousClock.now
        totals.replayed = try await Self.replayAndCheck(shared, reported: sharedReported)
        totals.replaySeconds = (ContinuousClock.now - replayStarted).seconds

        let summary = """
            crash safety: \(totals.kills) kills (seed \(seed)\(underTSan ? ", thread sanitizer" : "")), \
            \(totals.reported) writes reported queued, \(totals.reportedFound) found after the kill \
            (\(totals.reportedMissing) missing), \(totals.entriesCommitted) entries committed \
            (\(totals.committedUnreported) of them not yet reported when killed), integrity ok \
            \(totals.integrityOK)/\(totals.kills), \(totals.roundsReady) kills after the store opened, \
            \(totals.replayed) entries of the reused file replayed once each; \
            \(String(format: "%.1f", totals.killSeconds)) s of kills, \
            \(String(format: "%.1f", totals.replaySeconds)) s of replay; child \(child.path)
            """
        print(summary)
        #expect(totals.kills == rounds, "\(summary)")
        #expect(totals.integrityOK == totals.kills, "\(summary)")
        #expect(totals.reportedMissing == 0, "\(summary)")
        // Nothing was measured unless writes were queued before the kills.
        #expect(
            totals.reported >= totals.kills,
            "too few writes were reported queued to mean anything: \(summary)")
    }

    /// Replays the store at `file` through an `InMemoryBackend` and checks that every entry was
    /// sent once, with its key, and applied: each reported `POST` is one record, each `PUT`
    /// and `PATCH` changed its item, each `DELETE` removed it. Returns how many entries were sent.
    static func replayAndCheck(_ file: URL, reported: [Int: ReportedWrite]) async throws -> Int {
        let store = try OfflineStore(at: file)
        let entries = try store.outbox.entries()
        // The items the PUT, PATCH and DELETE entries (reported or not) change exist beforehand.
        let itemIDs = entries.compactMap { entry in
            entry.path.hasPrefix("items/") ? Int(entry.path.dropFirst("items/".count)) : nil
        }
        let items = itemIDs.map { #"{"id": \#($0), "seq": \#($0), "state": "seeded"}"# }
        let server = try InMemoryBackend(
            database: Data(#"{"posts": [], "items": [\#(items.joined(separator: ","))]}"#.utf8))

        let report = await store.outbox.replay(through: server)
        #expect(
            report == OutboxReplayReport(sent: entries.count, kept: 0, remaining: 0, ending: .finished),
            "replay of \(entries.count) entries")

        let left = try store.outbox.entries()
        #expect(
            left.isEmpty, "entries left after replaying into a server that accepts them all: \(left.count)")
        let sent = server.requests
        #expect(sent.count == entries.count, "\(entries.count) entries, \(sent.count) requests sent")
        #expect(
            sent.map { $0.headers["Idempotency-Key"] ?? "" } == entries.map(\.idempotencyKey),
            "the requests replayed are the entries, in order, each once, each with its Idempotency-Key")

        // Records by sequence number: each reported POST created exactly one.
        var postsBySeq: [Int: Int] = [:]
        for record in server.records(in: "posts") {
            if let seq = record["seq"]?.intValue { postsBySeq[seq, default: 0] += 1 }
        }
        let postEntries = entries.filter { $0.method == .post }.count
        #expect(postsBySeq.values.reduce(0, +) == postEntries, "\(postEntries) POST entries")
        for (seq, count) in postsBySeq where count != 1 {
            Issue.record("write \(seq) created \(count) records")
        }
        var itemsByID: [Int: String] = [:]
        for record in server.records(in: "items") {
            if let id = record["id"]?.intValue, let state = record["state"]?.stringValue {
                itemsByID[id] = state
            }
        }
        for write in reported.values {
            switch write.method {
            case .post: #expect(postsBySeq[write.seq] == 1, "reported POST \(write.seq) applied once")
            case .put: #expect(itemsByID[write.seq] == "put", "reported PUT \(write.seq) applied")
            case .patch: #expect(itemsByID[write.seq] == "patched", "reported PATCH \(write.seq) applied")
            case .delete: #expect(itemsByID[write.seq] == nil, "reported DELETE \(write.seq) applied")
            default: Issue.record("unexpected method \(write.method)")
            }
        }
        return sent.count
    }
}

/// What the child said it was told: write `seq` failed with `.queued` as entry `id`.
struct ReportedWrite: Sendable, Hashable {
    var id: String
    var idempotencyKey: String
    var seq: Int

    /// The write the child sends for `seq` (Tests/CrashSafety/main.swift).
    var method: HTTPMethod {
        switch seq % 8 {
        case 5: .put
        case 6: .patch
        case 7: .delete
        default: .post
        }
    }

    var path: String { method == .post ? "posts" : "items/\(seq)" }
}

struct CrashTotals {
    var kills = 0
    var roundsReady = 0
    var reported = 0
    var reportedFound = 0
    var reportedMissing = 0
    var entriesCommitted = 0
    var committedUnreported = 0
    var integrityOK = 0
    var unfinishedLines = 0
    var otherOutcomes = 0
    var replayed = 0
    var killSeconds = 0.0
    var replaySeconds = 0.0
}

/// What one run of the child printed before it was killed.
struct ChildRun {
    var ready = false
    var reported: [ReportedWrite] = []
    var otherOutcomes: [String] = []
    /// Whether the output ended in the middle of a line (never, since each line is one write(2)).
    var unfinishedLine = false
    /// The end of the child's stderr (empty unless something went wrong).
    var stderr = ""
}

/// The child binary, `depot-offline-crash`.
struct CrashChild {
    static let name = "depot-offline-crash"
    let path: String

    /// The folders the child is looked for in: the test bundle's own (the build products of
    /// whatever `--scratch-path` built it, `.build/tsan/debug` under the thread sanitizer), then
    /// the package's `.build/debug`.
    static func searchedFolders() -> [String] {
        var folders: [URL] = []
        // Linux: the test runner is `<products>/DepotPackageTests.xctest`, an executable.
        if let executable = Bundle.main.executableURL {
            folders.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        // macOS: `<products>/DepotPackageTests.xctest/Contents/MacOS/…`, loaded by a runner.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            folders.append(bundle.bundleURL.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        let arguments = CommandLine.arguments.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath() }
        for argument in arguments where argument.path.contains(".xctest") {
            var url = argument
            while url.pathExtension != "xctest", url.path != "/" { url.deleteLastPathComponent() }
            if url.path != "/" { folders.append(url.deletingLastPathComponent()) }
        }
        let package = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        folders.append(package.appending(path: ".build/debug"))
        var seen = Set<String>()
        return folders.map(\.path).filter { seen.insert($0).inserted }
    }

    /// The child named by `DEPOT_CRASH_CHILD`, else the first one found in ``searchedFolders()``.
    static func locate() -> CrashChild? {
        if let named = ProcessInfo.processInfo.environment["DEPOT_CRASH_CHILD"], !named.isEmpty {
            return FileManager.default.isExecutableFile(atPath: named) ? CrashChild(path: named) : nil
        }
        for folder in searchedFolders() {
            let path = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return CrashChild(path: path) }
        }
        return nil
    }

    /// The child ``locate()`` finds; when there is none, records an issue that says how to build
    /// it and returns `nil`.
    static func required(sourceLocation: SourceLocation = #_sourceLocation) -> CrashChild? {
        if let named = ProcessInfo.processInfo.environment["DEPOT_CRASH_CHILD"], !named.isEmpty,
            !FileManager.default.isExecutableFile(atPath: named)
        {
            Issue.record(
                "DEPOT_CRASH_CHILD names \(named), which is not an executable file",
                sourceLocation: sourceLocation)
            return nil
        }
        guard let child = locate() else {
            Issue.record(
                """
                The crash-safety child `depot-offline-crash` was not found beside the test bundle \
                (looked in: \(searchedFolders().joined(separator: ", "))). Build it \
                with `swift build --build-tests` (same --scratch-path as the tests) or name it \
                in DEPOT_CRASH_CHILD.
                """, sourceLocation: sourceLocation)
            return nil
        }
        return child
    }

    /// Whether this process runs under the thread sanitizer (and so, built the same way, does
    /// the child).
    static var threadSanitizerIsActive: Bool {
        #if canImport(Glibc) || canImport(Darwin)
            // RTLD_DEFAULT: NULL on Linux, (void *)-2 on Apple platforms.
            #if canImport(Darwin)
                let everywhere = UnsafeMutableRawPointer(bitPattern: -2)
            #else
                let everywhere: UnsafeMutableRawPointer? = nil
            #endif
            return dlsym(everywhere, "__tsan_init") != nil
        #else
            return false
        #endif
    }

    /// Starts the child on `store`, kills it with SIGKILL `after` its start, and returns what it
    /// printed.
    func runAndKill(store: URL, seqBase: Int, after delay: Duration, stderr: URL) async throws -> ChildRun {
        let arguments = [path, store.path, "--writers", "4", "--seq-base", String(seqBase)]
        let process = try SpawnedProcess(arguments: arguments, stderrPath: stderr.path)
        try await Task.sleep(for: delay)
        process.kill()
        _ = process.readAllAndWait()
        var run = ChildRun()
        run.unfinishedLine = process.unfinishedLine
        for line in process.lines {
            let fields = line.split(separator: " ")
            switch fields.first {
            case "ready": run.ready = true
            case "queued" where fields.count == 4 && Int(fields[3]) != nil:
                run.reported.append(
                    ReportedWrite(
                        id: String(fields[1]), idempotencyKey: String(fields[2]), seq: Int(fields[3]) ?? 0))
            default: run.otherOutcomes.append(String(line))
            }
        }
        run.stderr = Self.tail(of: stderr)
        return run
    }

    /// Opens the store at `file` after a child was killed, and checks `PRAGMA integrity_check`:
    /// the store and whether it is sound (`ok`). Records an issue, naming `context`, when the
    /// file does not open (then `nil`) or is not sound.
    static func reopen(_ file: URL, context: String) -> (store: OfflineStore, sound: Bool)? {
        let store: OfflineStore
        do {
            store = try OfflineStore(at: file)
        } catch {
            Issue.record("\(context): the store does not open after SIGKILL: \(error)")
            return nil
        }
        do {
            let integrity = try store.integrityCheck()
            if integrity == ["ok"] { return (store, true) }
            Issue.record("\(context): integrity_check says \(integrity.prefix(5))")
        } catch {
            Issue.record("\(context): integrity_check fails: \(error)")
        }
        return (store, false)
    }

    /// The end of the file `url` (a child's stderr): empty when it is empty or missing.
    static func tail(of url: URL) -> String {
        guard let data = FileManager.default.contents(atPath: url.path), !data.isEmpty else { return "" }
        return String(decoding: data.suffix(4_000), as: UTF8.self)
    }
}

/// A child process with its stdout on a pipe (posix_spawn, so no descriptor of another test leaks
/// into it and its stdout ends exactly when it dies), and optionally its stdin on a pipe too.
final class SpawnedProcess {
    let pid: pid_t
    /// The read end of the child's stdout; -1 once it has ended.
    private var output: Int32
    /// The write end of the child's stdin (with `stdinPipe`); -1 when closed or absent.
    private var input: Int32 = -1
    private var reaped = false
    /// Every byte read from the child's stdout so far.
    private(set) var received = Data()
    /// The complete lines of ``received``, without their newline.
    private(set) var lines: [String] = []
    private var lineStart = 0
    /// The status `waitpid` gave, once reaped.
    private(set) var waitStatus: Int32?

    /// Starts `arguments[0]`; its stderr goes to the file `stderrPath`, its stdin is
    /// `/dev/null`, or a pipe with `stdinPipe` (see ``closeInput()``).
    init(arguments: [String], stderrPath: String, stdinPipe: Bool = false) throws {
        var fds: [Int32] = [-1, -1]
        var stdin: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if stdinPipe, pipe(&stdin) != 0 {
            let error = errno
            close(fds[0])
            close(fds[1])
            throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)
        }
        // No end may leak into processes other tests start meanwhile (dup2 clears the flag on
        // the child's own 0 and 1).
        for fd in fds + stdin where fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t?
        #else
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if stdinPipe {
            posix_spawn_file_actions_adddup2(&actions, stdin[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, arguments[0], &actions, nil, argv, environ)
        close(fds[1])
        if stdin[0] >= 0 { close(stdin[0]) }
        guard status == 0 else {
            close(fds[0])
            if stdin[1] >= 0 { close(stdin[1]) }
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        pid = child
        output = fds[0]
        input = stdin[1]
    }

    deinit {
        if !reaped {
            _ = signalProcess(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        if output >= 0 { close(output) }
        if input >= 0 { close(input) }
    }

    /// SIGKILL, as `kill -9`.
    func kill() {
        _ = signalProcess(pid, SIGKILL)
    }

    /// Closes the child's stdin: it reads its end.
    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// Whether the child's stdout has ended (it exited, or was killed).
    var outputEnded: Bool { output < 0 }

    /// Whether the output ends in the middle of a line.
    var unfinishedLine: Bool { lineStart < received.count }

    /// How ``pump(_:until:done:)`` stopped.
    enum PumpEnd {
        case done, ended, deadline
    }

    /// Reads the stdout of `processes` as it comes (so none blocks on a full pipe), until `done()`
    /// is true (checked first and after each read), every stdout has ended, or `deadline`.
    @discardableResult
    static func pump(
        _ processes: [SpawnedProcess], until deadline: ContinuousClock.Instant, done: () -> Bool = { false }
    ) -> PumpEnd {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if done() { return .done }
            let open = processes.filter { !$0.outputEnded }
            if open.isEmpty { return .ended }
            let left = deadline - ContinuousClock.now
            if left <= .zero { return .deadline }
            var fds = open.map { pollfd(fd: $0.output, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(min(max(left.seconds * 1000, 1), 1000))
            if poll(&fds, nfds_t(fds.count), milliseconds) < 0, errno != EINTR { return .deadline }
            for (process, fd) in zip(open, fds) where fd.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(process.output, $0.baseAddress, $0.count) }
                if count > 0 {
                    process.take(buffer[0..<count])
                } else if count == 0 || errno != EINTR {
                    close(process.output)
                    process.output = -1
                }
            }
        }
    }

    private func take(_ bytes: ArraySlice<UInt8>) {
        let from = received.count
        received.append(contentsOf: bytes)
        for index in from..<received.count where received[index] == UInt8(ascii: "\n") {
            lines.append(String(decoding: received[lineStart..<index], as: UTF8.self))
            lineStart = index + 1
        }
    }

    /// Reaps the child (killed first if its stdout has not ended) and returns its wait status.
    @discardableResult
    func reap() -> Int32 {
        if let waitStatus { return waitStatus }
        if !outputEnded { kill() }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
        waitStatus = status
        return status
    }

    /// The exit code, when the child exited (rather than being killed by a signal).
    var exitCode: Int32? {
        guard let status = waitStatus, status & 0x7f == 0 else { return nil }
        return (status >> 8) & 0xff
    }

    /// The signal that ended the child, when one did.
    var terminatingSignal: Int32? {
        guard let status = waitStatus, status & 0x7f != 0, status & 0x7f != 0x7f else { return nil }
        return status & 0x7f
    }

    /// Reads stdout to its end (the child is dead: the pipe ends once drained; at most 60 s)
    /// and reaps the child.
    func readAllAndWait() -> Data {
        Self.pump([self], until: .now + .seconds(60))
        reap()
        return received
    }
}

/// `kill(2)`, which the method `SpawnedProcess.kill()` hides inside the class.
private func signalProcess(_ pid: pid_t, _ signal: Int32) -> Int32 {
    kill(pid, signal)
}

extension SplitMix64 {
    /// A number in `range`.
    mutating func next(in range: ClosedRange<UInt64>) -> UInt64 {
        range.lowerBound + next() % (range.upperBound - range.lowerBound + 1)
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
