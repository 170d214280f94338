import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replay across processes and through SIGKILL, against the DRF test app over real HTTP (issue 22;
/// Tests/CrashSafety/README.md has the figures).
///
/// Both tests fill a store with queued `POST posts` writes to a fresh DRF space (title
/// `replay <seq>`, queued in seq order), then run the child `depot-offline-crash STORE --replay
/// URL`, which replays the outbox through `URLSessionBackend` and prints a line for each `.sent`
/// entry (with whether the answer was `Idempotent-Replayed: true`).
///
/// - Two children replay one file at the same moment: every entry must be sent once in all (no
///   entry twice, no request for a key the server had applied), the server must hold one post per
///   seq in seq order, and the outbox must end empty.
/// - Replay children are killed with SIGKILL at seeded random moments while they send, until the
///   outbox is empty: the file must open and pass `PRAGMA integrity_check` after each kill, every
///   entry must reach the server (at least once) and none be applied twice (the app honours
///   `Idempotency-Key`); the requests that repeated an applied key are counted by the server.
///
/// Skipped without `DEPOT_DRF_URL` (`bash scripts/test` sets it). Seeded by `DEPOT_CRASH_SEED`
/// (default 12), like the crash-safety test.
@Suite(
    "Replay crash safety", .serialized,
    .enabled(
        if: OfflineLiveServer.drf != nil,
        "needs the DRF test server (DEPOT_DRF_URL): run `DEPOT_SKIP_AHC=1 bash scripts/test --filter ReplayCrashTests`"
    )
)
struct ReplayCrashTests {
    /// Entries of the two-process test.
    static let twoProcessEntries = 5_000
    /// Entries of the kill test, and the longest wait from a child's first `.sent` to its kill.
    static let killEntries = 1_500
    static let longestKillDelay: UInt64 = 250

    @Test("Two processes replaying one store send every entry once", .timeLimit(.minutes(5)))
    func twoProcessesReplayOneStore() async throws {
        guard let child = CrashChild.required() else { return }
        let space = try DRFSpace()
        let folder = try TemporaryFolder()
        let file = folder.file("shared.sqlite")
        let started = ContinuousClock.now
        let queued = try await Self.queuePosts(Self.twoProcessEntries, in: file)
        let filled = ContinuousClock.now

        let children = try (1...2).map { number in
            try SpawnedProcess(
                arguments: child.replayArguments(file, to: space.url, waitForStdin: true),
                stderrPath: folder.file("child-\(number).stderr").path, stdinPipe: true)
        }
        // Both open the store, then start replaying at the same moment: when their stdin ends.
        let ready = SpawnedProcess.pump(children, until: .now + .seconds(60)) {
            children.allSatisfy { $0.lines.first == "ready" }
        }
        guard ready == .done else {
            let errors = (1...2).map { CrashChild.tail(of: folder.file("child-\($0).stderr")) }
            Issue.record("the children did not both open the store within 60 s (\(ready)): \(errors)")
            return
        }
        let replayStarted = ContinuousClock.now
        for process in children { process.closeInput() }
        switch SpawnedProcess.pump(
            children, until: .now + .seconds(180), done: { Self.strayLine(in: children) })
        {
        case .deadline: Issue.record("the children were still replaying after 180 s: killed")
        case .done: Issue.record("a child printed a line no replay prints: stopped")
        case .ended: break
        }
        for process in children { process.reap() }
        let replaySeconds = (ContinuousClock.now - replayStarted).seconds

        let runs = children.map { ReplayRun(lines: $0.lines) }
        for (index, (process, run)) in zip(children, runs).enumerated() {
            let name = "child \(index + 1)"
            #expect(process.exitCode == 0, "\(name) ended with wait status \(process.waitStatus ?? -1)")
            #expect(run.report != nil, "\(name) printed no report")
            #expect(run.other.isEmpty, "\(name) printed \(run.other.prefix(3))")
            #expect(run.kept.count == 0, "\(name) kept entries, first: \(run.kept.prefix(3))")
            let stderr = CrashChild.tail(of: folder.file("child-\(index + 1).stderr"))
            #expect(stderr.isEmpty, "\(name) wrote to stderr: \(stderr)")
        }
        let sentIDs = runs.flatMap { $0.sent.map(\.id) }
        let timesSent = Dictionary(grouping: sentIDs, by: { $0 }).mapValues(\.count)
        let duplicates = sentIDs.count - timesSent.count
        let notSent = Set(queued.keys).subtracting(timesSent.keys)
        let left = try OfflineStore(at: file).outbox.entries().count
        let posts = try await space.postsBySeq()
        let server = ServerCheck(posts, entries: Self.twoProcessEntries)
        let tally = try await space.idempotencyCounts(settle: 10)

        let perChild = runs.enumerated().map { index, run in
            "child \(index + 1) \(run.requests.map(String.init) ?? "?") requests (\(run.sent.count) .sent, "
                + "\(run.kept.count) .kept)"
        }
        print(
            """
            two-process replay: \(Self.twoProcessEntries) entries; \(perChild.joined(separator: ", ")); \
            \(duplicates) entries sent twice (\(timesSent.values.filter { $0 > 1 }.count) ids), \
            \(notSent.count) never reported sent, \(left) left in the outbox; server: \
            \(server.summary), \(tally.summary); \
            \(String(format: "%.1f", (filled - started).seconds)) s to queue, \
            \(String(format: "%.1f", replaySeconds)) s to replay
            """)
        #expect(duplicates == 0, "entries reported sent by both children or twice: \(duplicates)")
        #expect(notSent.isEmpty, "entries no child reported sent: \(notSent.count)")
        #expect(left == 0, "entries left in the outbox")
        #expect(server.missing == 0 && server.appliedTwice == 0, "server: \(server.summary)")
        #expect(
            server.outOfOrder == 0, "posts whose id is not above the previous seq's: \(server.outOfOrder)")
        #expect(tally.applied == Self.twoProcessEntries, "keys applied: \(tally.summary)")
        #expect(tally.replayed == 0, "requests that repeated an applied key: \(tally.summary)")
        #expect(tally.conflicts == 0, "requests that met their key in flight (409): \(tally.summary)")
    }

    @Test(
        "Replays killed with SIGKILL while sending deliver every entry, none twice", .timeLimit(.minutes(5)))
    func replayKilledWhileSending() async throws {
        guard let child = CrashChild.required() else { return }
        let seed = UInt64(ProcessInfo.processInfo.environment["DEPOT_CRASH_SEED"] ?? "") ?? 12
        var random = SplitMix64(seed: seed)
        let space = try DRFSpace()
        let folder = try TemporaryFolder()
        let file = folder.file("replayed.sqlite")
        let started = ContinuousClock.now
        let queued = try await Self.queuePosts(Self.killEntries, in: file)
        let order = queued.sorted { $0.value < $1.value }.map(\.key)
        let totals = try await Self.killReplays(
            of: order, in: file, folder: folder, to: space, child: child, random: &random,
            longestDelay: Self.longestKillDelay, mostSent: 60, deadline: .now + .seconds(180))
        let killSeconds = (ContinuousClock.now - started).seconds

        let posts = try await space.postsBySeq()
        let server = ServerCheck(posts, entries: Self.killEntries)
        let tally = try await space.idempotencyCounts(settle: 10)
        let summary = """
            kill during replay: \(totals.kills) kills during replay (seed \(seed)), \(Self.killEntries) entries, \
            \(tally.replayed) resends (requests whose key the server had applied; \
            \(totals.seenReplayed) of them seen by a child as Idempotent-Replayed), \(server.missing) missing, \
            \(server.appliedTwice) applied twice, \(server.outOfOrder) out of order; \
            \(totals.runs) replays, \(totals.sentLines) .sent lines, integrity ok \
            \(totals.integrityOK)/\(totals.runs - 1), \(totals.retriedConflicts) entries kept with 409 and \
            retried; server: \(tally.summary); \(String(format: "%.1f", killSeconds)) s
            """
        print(summary)
        #expect(server.missing == 0, "\(summary)")
        #expect(server.appliedTwice == 0, "\(summary)")
        #expect(server.outOfOrder == 0, "\(summary)")
        #expect(tally.applied == Self.killEntries, "\(summary)")
        #expect(tally.replayed >= totals.seenReplayed, "\(summary)")
        #expect(totals.integrityOK == totals.runs - 1, "\(summary)")
        // Nothing was measured unless replays were killed.
        #expect(totals.kills >= 20, "too few kills during replay to mean anything: \(summary)")
    }

    /// Runs replay children (with the further `flags`) on the store at `file` (whose outbox holds
    /// the entries `order`, in that order) and kills each with SIGKILL at a random moment
    /// 0…`longestDelay` ms after its first `sent` line, or sooner: 0…`longestDelay`/8 ms after it
    /// has printed a random 1…`mostSent` more `sent` lines (so that a machine fast enough to send
    /// the whole outbox within a few delays still sees about a kill every `mostSent` entries),
    /// until the outbox is empty (or `deadline`); then one last replay runs to its end. After each round it waits (bounded)
    /// until the server processes none of the space's requests, reopens the store (it must open
    /// and pass `PRAGMA integrity_check`), checks that what is left keeps its order and holds no
    /// entry a child reported sent, and puts back an entry kept with a `409` (its key was still
    /// in flight); any other refusal fails the test. The last replay must find nothing to send.
    static func killReplays(
        of order: [String], in file: URL, folder: TemporaryFolder, to space: DRFSpace, child: CrashChild,
        random: inout SplitMix64, longestDelay: UInt64, mostSent: Int, deadline: ContinuousClock.Instant,
        flags: [String] = []
    ) async throws -> ReplayKillTotals {
        var totals = ReplayKillTotals()
        var left = order  // the entries still in the store, in order
        var round = 0
        while !left.isEmpty {
            guard ContinuousClock.now < deadline else {
                Issue.record("out of time after \(round) replays, \(left.count) entries left")
                break
            }
            let context = "replay \(round)"
            let stderr = folder.file("replay-\(round).stderr")
            let process = try SpawnedProcess(
                arguments: child.replayArguments(file, to: space.url) + flags, stderrPath: stderr.path)
            round += 1
            // Killed at a random moment while it sends: 0–longestDelay ms after its first `.sent` line
            // (other lines may follow it in the same read).
            let sending = SpawnedProcess.pump([process], until: .now + .seconds(60)) {
                process.lines.contains { $0.hasPrefix("sent ") } || Self.strayLine(in: [process])
            }
            var killed = false
            switch sending {
            case .done:
                let delay = Int(random.next(in: 0...longestDelay))
                let sentLines = { process.lines.count { $0.hasPrefix("sent ") } }
                let lastSent = sentLines() + Int(random.next(in: 1...UInt64(mostSent)))
                // The deliberate delay, or as many more entries sent, reading the child's lines
                // meanwhile; a child that ended first is not killed.
                var end = SpawnedProcess.pump(
                    [process], until: .now + .milliseconds(delay), done: { sentLines() >= lastSent })
                if end == .done {
                    // Not right at that `sent` line: somewhere in what the next entries do (read,
                    // merge, send, record), 0…longestDelay/8 ms later.
                    let jitter = Int(random.next(in: 0...(longestDelay / 8)))
                    end = SpawnedProcess.pump([process], until: .now + .milliseconds(jitter))
                }
                if end != .ended {
                    process.kill()
                    killed = true
                }
            case .deadline:
                Issue.record("\(context): no entry sent within 60 s")
                process.kill()
            case .ended:
                break
            }
            SpawnedProcess.pump([process], until: .now + .seconds(30))
            process.reap()
            killed = killed && process.terminatingSignal == SIGKILL
            let run = ReplayRun(lines: process.lines)
            totals.add(run, killed: killed)
            if !killed {
                #expect(
                    process.exitCode == 0, "\(context) ended with wait status \(process.waitStatus ?? -1)")
            }
            let errors = CrashChild.tail(of: stderr)
            #expect(errors.isEmpty, "\(context) wrote to stderr: \(errors)")
            guard run.other.isEmpty else {
                Issue.record("\(context) printed \(run.other.prefix(3)): stopped")
                break
            }

            // No request of the dead child may still be in process when the next one sends its key.
            let settled = try await space.idempotencyCounts(settle: 10)
            #expect(settled.outstanding == 0, "\(context): the server still processes a request after 10 s")

            // The file opens and is sound, whatever moment the kill hit.
            guard let (store, sound) = CrashChild.reopen(file, context: context) else { break }
            if sound { totals.integrityOK += 1 }
            let entries = try store.outbox.entries()
            let ids = entries.map(\.id)
            // Entries leave from the head only: what is left keeps its order.
            let inOrder = Self.isSubsequence(ids, of: left)
            #expect(inOrder, "\(context): entries appeared, were listed twice or moved")
            let reportedSent = Set(run.sent.map(\.id))
            let sentButThere = ids.filter { reportedSent.contains($0) }.count
            #expect(sentButThere == 0, "\(context): entries reported sent are still in the store")
            for entry in entries {
                guard case .kept(let refusal) = entry.state else { continue }
                // A 409 means its key was in flight still (a dead child's request): the server
                // applies it once, so it goes back in the queue; any other refusal is a failure.
                if refusal.status == 409 {
                    totals.retriedConflicts += 1
                    try store.outbox.retry(entry.id)
                } else if totals.refused.insert(entry.id).inserted {
                    Issue.record(
                        "\(context): entry \(entry.id) was refused: \(refusal.status ?? 0) \(refusal.message ?? "")"
                    )
                }
            }
            if killed {
                totals.headsAfterKills.append(ids.first)
                totals.lastLinesAtKills.append(process.lines.last)
            }
            left = ids
            // Refused entries (recorded above) stay kept: no replay would send anything more.
            if !entries.isEmpty, !entries.contains(where: \.isQueued) {
                Issue.record("\(context): only kept entries are left: stopped")
                break
            }
        }

        // One last replay, to its end: nothing may be left for it.
        let final = try SpawnedProcess(
            arguments: child.replayArguments(file, to: space.url) + flags,
            stderrPath: folder.file("final.stderr").path)
        if SpawnedProcess.pump([final], until: .now + .seconds(120), done: { Self.strayLine(in: [final]) })
            != .ended
        {
            Issue.record("the last replay was still running after 120 s, or printed a stray line: killed")
        }
        final.reap()
        let last = ReplayRun(lines: final.lines)
        totals.add(last, killed: false)
        #expect(final.exitCode == 0, "the last replay ended with wait status \(final.waitStatus ?? -1)")
        #expect(
            last.report?.dropLast() == ["0", "0", "0", "finished"],
            "the last replay: \(final.lines.suffix(3))")
        let leftAtEnd = try OfflineStore(at: file).outbox.entries().count
        #expect(leftAtEnd == 0, "entries left after the last replay")
        return totals
    }

    /// Queues `count` writes `POST posts` titled `replay 0`, `replay 1`, … in that order in a
    /// new store at `file` (through `.offline(store)` in front of a backend that cannot
    /// connect), and returns each entry's seq by its id.
    static func queuePosts(_ count: Int, in file: URL) async throws -> [String: Int] {
        let store = try OfflineStore(at: file)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        var seqs: [String: Int] = [:]
        for seq in 0..<count {
            var request = BackendRequest(
                method: .post, path: "posts",
                body: Data(#"{"userId": 1, "title": "replay \#(seq)", "body": "seq \#(seq)"}"#.utf8))
            request.headers["Content-Type"] = "application/json"
            let write = try #require(queuedWrite(await backend.send(request).result))
            seqs[write.id] = seq
        }
        // The writes queued behind others started replays, which end on the unreachable backend:
        // wait for the last, so that nothing of this store runs once the children start.
        let settled = await store.outbox.replay()
        #expect(settled.remaining == count, "queued: \(settled)")
        let ids = try store.outbox.entries().map(\.id)
        #expect(ids.map { seqs[$0] } == Array(0..<count), "the entries are queued in seq order")
        return seqs
    }

    /// Whether the last line of one of `processes` is none a replay child prints (a child in
    /// another mode, say), so that a test stops at once instead of waiting for its bound.
    static func strayLine(in processes: [SpawnedProcess]) -> Bool {
        processes.contains { process in
            guard let last = process.lines.last else { return false }
            return ![
                "ready", "sent", "kept", "created", "replayed", "conflict", "discarded", "request", "answer",
            ]
            .contains(last.prefix { $0 != " " })
        }
    }

    /// Whether `ids` are some of `order`, each once, in the same order.
    static func isSubsequence(_ ids: [String], of order: [String]) -> Bool {
        var rest = order[...]
        for id in ids {
            guard let index = rest.firstIndex(of: id) else { return false }
            rest = rest[(index + 1)...]
        }
        return true
    }
}

/// A fresh space of the DRF app, and what it says about itself.
struct DRFSpace {
    /// `…/s/<name>/`
    let url: URL
    let name: String

    init() throws {
        url = try OfflineLiveServer.drfSpace()
        name = url.lastPathComponent
    }

    /// The ids of the posts titled `replay <seq>`, by seq.
    func postsBySeq() async throws -> [Int: [Int]] {
        let body = try await URLSessionBackend(baseURL: url, timeout: 60).send(BackendRequest(path: "posts"))
            .value.body
        var bySeq: [Int: [Int]] = [:]
        for post in try JSONDecoder().decode([[String: JSONValue]].self, from: body) {
            guard let title = post["title"]?.stringValue, title.hasPrefix("replay "),
                let seq = Int(title.dropFirst("replay ".count)), let id = post["id"]?.intValue
            else { continue }
            bySeq[seq, default: []].append(id)
        }
        return bySeq
    }

    /// The app's counts of keyed writes to this space (`GET /idempotency/count`), after waiting
    /// at most `settle` seconds for those still being processed.
    func idempotencyCounts(settle: Int) async throws -> IdempotencyCounts {
        let base = try #require(OfflineLiveServer.drf)
        let request = BackendRequest(
            path: "idempotency/count",
            query: [
                URLQueryItem(name: "space", value: name), URLQueryItem(name: "settle", value: "\(settle)"),
            ])
        let body = try await URLSessionBackend(baseURL: base, timeout: Double(settle + 30)).send(request)
            .value.body
        return try JSONDecoder().decode(IdempotencyCounts.self, from: body)
    }
}

/// `GET /idempotency/count` (Tests/Servers/README.md).
struct IdempotencyCounts: Decodable {
    /// Keys applied (their first request, answered 2xx).
    var applied: Int
    /// Requests whose key had been applied: answered with the stored answer, nothing written.
    var replayed: Int
    /// Requests that met their key in flight (409).
    var conflicts: Int
    /// Requests that reused a key for another payload (422).
    var mismatches: Int
    /// Keyed writes being processed now.
    var outstanding: Int

    var summary: String {
        "\(applied) keys applied, \(replayed) requests repeating an applied key, \(conflicts) met their key "
            + "in flight (409), \(mismatches) reused a key (422)"
    }
}

/// The posts `replay 0` … `replay <entries - 1>` at the server.
struct ServerCheck {
    /// Seqs with no post.
    var missing = 0
    /// Seqs with more than one post.
    var appliedTwice = 0
    /// Seqs whose post's id is not above the previous seq's.
    var outOfOrder = 0

    init(_ bySeq: [Int: [Int]], entries: Int) {
        var previous = Int.min
        for seq in 0..<entries {
            guard let ids = bySeq[seq], let id = ids.first else {
                missing += 1
                continue
            }
            if ids.count > 1 { appliedTwice += 1 }
            if id <= previous { outOfOrder += 1 }
            previous = id
        }
    }

    var summary: String {
        "\(missing) seqs missing, \(appliedTwice) applied twice"
    }
}

/// What a replay child printed (`depot-offline-crash STORE --replay URL`).
struct ReplayRun {
    struct Sent {
        var id: String
        var key: String
        var status: Int
        /// Whether the answer said `Idempotent-Replayed: true`.
        var replayed: Bool
    }

    /// A `created <id> <localID> <serverID>` line (ids as JSON text).
    struct Created {
        var id: String
        var localID: String
        var serverID: String
    }

    /// A `request <method> <path> <key>` line (`--requests`; key `-` for none).
    struct Request {
        var method: String
        var path: String
        var key: String
    }

    var sent: [Sent] = []
    var kept: [String] = []
    var created: [Created] = []
    /// The `conflict …` and `discarded …` lines (`--conflicts`).
    var conflicts: [String] = []
    var discarded: [String] = []
    /// The `request …` lines, and the `answer …` lines' statuses, in order (`--requests`).
    var requestLines: [Request] = []
    var answerStatuses: [Int] = []
    /// The fields of the last line: sent, kept, remaining, ending, requests.
    var report: [String]?
    var other: [String] = []

    init(lines: [String]) {
        for line in lines {
            let fields = line.split(separator: " ").map(String.init)
            switch fields.first {
            case "ready": continue
            case "sent" where fields.count == 5 && Int(fields[3]) != nil:
                sent.append(
                    Sent(
                        id: fields[1], key: fields[2], status: Int(fields[3]) ?? 0,
                        replayed: fields[4] == "true"))
            case "kept": kept.append(line)
            case "created" where fields.count == 4:
                created.append(Created(id: fields[1], localID: fields[2], serverID: fields[3]))
            case "conflict" where fields.count == 5: conflicts.append(line)
            case "discarded" where fields.count == 3: discarded.append(line)
            case "request" where fields.count == 4:
                requestLines.append(Request(method: fields[1], path: fields[2], key: fields[3]))
            case "answer" where fields.count == 4 && Int(fields[3]) != nil:
                answerStatuses.append(Int(fields[3]) ?? 0)
            case "replayed" where fields.count == 6: report = Array(fields.dropFirst())
            default: other.append(line)
            }
        }
    }

    /// How many requests the child sent, when it lived to say.
    var requests: Int? { report.flatMap { Int($0[4]) } }
}

struct ReplayKillTotals {
    var runs = 0
    var kills = 0
    var sentLines = 0
    var seenReplayed = 0
    var integrityOK = 0
    var retriedConflicts = 0
    /// Every `created` line, in the order the children printed them.
    var created: [ReplayRun.Created] = []
    /// The entries whose `sent` line said `Idempotent-Replayed: true`, in order.
    var replayedEntries: [String] = []
    /// The entries kept with a refusal other than `409` (each reported once).
    var refused = Set<String>()
    /// After each kill, the entry at the head of the outbox (`nil`: none left).
    var headsAfterKills: [String?] = []
    /// After each kill, the last line the child printed.
    var lastLinesAtKills: [String?] = []
    /// Every run's lines, parsed, in order.
    var replays: [ReplayRun] = []

    mutating func add(_ run: ReplayRun, killed: Bool) {
        runs += 1
        kills += killed ? 1 : 0
        sentLines += run.sent.count
        seenReplayed += run.sent.filter(\.replayed).count
        created += run.created
        replayedEntries += run.sent.filter(\.replayed).map(\.id)
        replays.append(run)
    }
}

extension CrashChild {
    /// `depot-offline-crash STORE --replay URL [--wait-stdin]`.
    func replayArguments(_ store: URL, to server: URL, waitForStdin: Bool = false) -> [String] {
        [path, store.path, "--replay", server.absoluteString] + (waitForStdin ? ["--wait-stdin"] : [])
    }
}
