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

/// Kills during a replay that reads, merges and sends (issue 34; Tests/CrashSafety/README.md has
/// the figures).
///
/// The test process reads the listing `posts` of a fresh DRF space through `.offline(store)` (so
/// each post's base is the record in that stored listing: no validator, so the replay reads each
/// record before its write) and queues one `PATCH posts/<id>` `{"title": "mine <id>", "userId": …}`
/// per post while offline (the title changed, `userId` sent as it was, as a form sends it). Then
/// another device either `PATCH`es `{"body": "theirs <id>"}` of every one of
/// those posts on the server (every replay merges), or writes nothing (every replay finds the
/// record unchanged and sends the write as made). Replay children are killed with SIGKILL at
/// seeded random moments until the outbox is empty
/// (``ReplayCrashTests/killReplays(of:in:folder:to:child:random:longestDelay:mostSent:deadline:flags:)``),
/// printing each request and its answer (`--requests`) and every conflict (`--conflicts`), so
/// kills land while a record is read, between its read and its write, while the write is out,
/// and between its answer and the record of it.
///
/// Then every post must hold the user's title and the other device's body (no lost write, no
/// lost merge); no conflict may be reported (the edits touch different fields); each `PATCH`
/// must have gone with the entry's key when sent as made, with its derived key
/// `<key>-<fnv64 of {"title":…}>` when merged (the title alone); and the server must count one key applied per
/// entry (none applied twice, whatever the kills) and no key reused for another body (`422`).
extension ReplayCrashTests {
    /// What the other device does while the title edits wait in the outbox.
    enum OtherDevice: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// `PATCH`es the body of every post: each replay reads, merges and sends the title alone.
        case editsBodies
        /// Nothing: each replay reads the record unchanged and sends the write as made.
        case writesNothing

        var testDescription: String { rawValue }
    }

    /// Posts of each case (the space's 100, and more created), and the longest wait from a
    /// child's first `.sent` to its kill.
    static let conflictPosts = 300
    static let longestConflictKillDelay: UInt64 = 200

    @Test(
        "Replays killed with SIGKILL while they read, merge and send lose no write and apply none twice",
        .timeLimit(.minutes(5)), arguments: OtherDevice.allCases)
    func replayKilledWhileMerging(_ other: OtherDevice) async throws {
        guard let child = CrashChild.required() else { return }
        let seed = UInt64(ProcessInfo.processInfo.environment["DEPOT_CRASH_SEED"] ?? "") ?? 12
        var random = SplitMix64(seed: seed)
        let space = try DRFSpace()
        let folder = try TemporaryFolder()
        let file = folder.file("merged.sqlite")
        let started = ContinuousClock.now
        let listed = try await Self.postsListing(of: space, count: Self.conflictPosts)
        let queued = try await Self.queueTitleEdits(of: listed, in: file, from: space)
        if other == .editsBodies { try await Self.editBodiesElsewhere(listed.map(\.id), in: space) }
        let prepared = ContinuousClock.now
        let totals = try await Self.killReplays(
            of: queued.map(\.entry), in: file, folder: folder, to: space, child: child, random: &random,
            longestDelay: Self.longestConflictKillDelay, mostSent: 12, deadline: .now + .seconds(150),
            flags: ["--conflicts", "--requests"])
        let seconds = (ContinuousClock.now - started).seconds
        let replaySeconds = (ContinuousClock.now - prepared).seconds

        let server = try await MergeCheck(space: space, listed: listed, theirBodies: other == .editsBodies)
        let requests = ReplayRequestCheck(totals: totals, queued: queued)
        let kills = KillMoments(totals.lastLinesAtKills)
        let conflicts = totals.replays.flatMap(\.conflicts)
        let discarded = totals.replays.flatMap(\.discarded)
        let tally = try await space.idempotencyCounts(settle: 10)
        let summary = """
            kill during a replay that reads and merges (\(other)): \(totals.kills) kills during replay (seed \(seed)), \
            \(queued.count) entries (PATCH title\(other == .editsBodies ? "; body PATCHed by another device" : "")); \
            kills \(kills.summary); server: \(server.summary); \(requests.summary); \(conflicts.count) conflict and \
            \(discarded.count) discarded events; \(tally.replayed) resends (\(totals.seenReplayed) seen by a \
            child as Idempotent-Replayed); \(totals.runs) replays, integrity ok \
            \(totals.integrityOK)/\(totals.runs - 1), \(totals.retriedConflicts) entries kept with 409 and \
            retried; server: \(tally.summary); \(String(format: "%.1f", replaySeconds)) s of replays, \
            \(String(format: "%.1f", seconds)) s in all
            """
        print(summary)
        #expect(server.asExpected == queued.count, "\(summary)")
        #expect(server.lostTitles == 0 && server.lostBodies == 0, "\(summary)")
        #expect(server.otherChanges == 0 && server.missing == 0, "\(summary)")
        #expect(conflicts.isEmpty, "conflicts reported for edits of different fields: \(conflicts.prefix(3))")
        #expect(discarded.isEmpty, "writes dropped: \(discarded.prefix(3))")
        // Merged, a write goes with its derived key; as made (nobody else wrote), with its own.
        let unexpectedKeys = other == .editsBodies ? requests.ownKeys : requests.derivedKeys
        #expect(unexpectedKeys == 0 && requests.otherKeys == 0, "\(summary)")
        #expect(requests.foreignPaths == 0 && requests.otherMethods == 0, "\(summary)")
        #expect(requests.patchedBeforeRead == 0, "\(summary)")
        // An entry whose `sent` line a kill took is gone from the store all the same (checked after
        // each round); none may be reported twice.
        #expect(requests.sentTwice == 0, "\(summary)")
        // One key applied per entry: no write went again under a key of its own after a kill.
        #expect(tally.applied == queued.count, "\(summary)")
        #expect(tally.mismatches == 0, "a key reused for another body (422): \(summary)")
        #expect(tally.replayed >= totals.seenReplayed, "\(summary)")
        #expect(totals.integrityOK == totals.runs - 1, "\(summary)")
        // Nothing was measured unless replays were killed, some between a read and its write,
        // some after a write reached the server (found there by the next read, or sent again
        // and answered from its key).
        #expect(totals.kills >= 20, "too few kills during replay to mean anything: \(summary)")
        #expect(kills.duringOrAfterRead >= 1, "no kill landed between a read and its write: \(summary)")
        #expect(
            requests.foundApplied + tally.replayed >= 1,
            "no kill landed after a write reached the server: \(summary)")
    }

    /// A post as the listing showed it.
    struct ListedPost {
        var id: Int
        var record: [String: JSONValue]
    }

    /// A queued title edit: its entry, key and post.
    struct TitleEdit {
        var entry: String
        var key: String
        var post: Int
        var path: String { "posts/\(post)" }
        /// The body the replay's merge sends: the user's one changed field.
        var mergedBody: Data { Data(#"{"title":"mine \#(post)"}"#.utf8) }
        /// The key the merged `PATCH` goes with.
        var mergedKey: String { key + "-" + OutboxReplayer.fingerprint(mergedBody) }
    }

    /// The first `count` posts of `space` (its 100, and posts created to make up the rest), as its
    /// listing `posts` shows them.
    static func postsListing(of space: DRFSpace, count: Int) async throws -> [ListedPost] {
        let server = URLSessionBackend(baseURL: space.url, timeout: 60)
        var posts = try await Self.listing(of: space)
        for number in posts.count..<count {
            var create = BackendRequest(
                method: .post, path: "posts",
                body: Data(
                    #"{"userId": 2, "title": "extra \#(number)", "body": "extra body \#(number)"}"#.utf8))
            create.headers["Content-Type"] = "application/json"
            _ = try await server.send(create).value
        }
        if posts.count < count { posts = try await Self.listing(of: space) }
        try #require(posts.count >= count, "the space lists \(posts.count) posts")
        return Array(posts.sorted { $0.id < $1.id }.prefix(count))
    }

    /// The posts of `space`'s listing.
    static func listing(of space: DRFSpace) async throws -> [ListedPost] {
        let body = try await URLSessionBackend(baseURL: space.url, timeout: 60).send(
            BackendRequest(path: "posts")
        )
        .value.body
        return try JSONDecoder().decode([[String: JSONValue]].self, from: body).compactMap { record in
            record["id"]?.intValue.map { ListedPost(id: $0, record: record) }
        }
    }

    /// In a new store at `file`: reads the listing `posts` of `space` through `.offline(store)`,
    /// then, offline (`.offline(store)` in front of a backend that cannot connect), queues
    /// `PATCH posts/<id>` `{"title": "mine <id>", "userId": <as listed>}` for each of `posts`, in
    /// order (a changed field and one sent unchanged: the merge sends the title alone, under a
    /// derived key). Checks that each entry's base is the post as listed, and returns the
    /// entries in queue order.
    static func queueTitleEdits(of posts: [ListedPost], in file: URL, from space: DRFSpace) async throws
        -> [TitleEdit]
    {
        let store = try OfflineStore(at: file)
        let online = URLSessionBackend(baseURL: space.url, timeout: 60).with(.offline(store))
        let read = try await online.send(BackendRequest(path: "posts")).value
        #expect(read.status == 200)
        let offline = FailingBackend(error: .cannotConnect).with(.offline(store))
        var edits: [TitleEdit] = []
        for post in posts {
            let userID = post.record["userId"]?.intValue ?? 0
            var request = BackendRequest(
                method: .patch, path: "posts/\(post.id)",
                body: Data(#"{"title": "mine \#(post.id)", "userId": \#(userID)}"#.utf8))
            request.headers["Content-Type"] = "application/json"
            let write = try #require(queuedWrite(await offline.send(request).result))
            edits.append(TitleEdit(entry: write.id, key: write.idempotencyKey, post: post.id))
        }
        // The writes queued behind others started replays, which end on the unreachable backend:
        // wait for the last, so that nothing of this store runs once the children start.
        let settled = await store.outbox.replay()
        #expect(settled.remaining == posts.count, "queued: \(settled)")
        let entries = try store.outbox.entries()
        #expect(entries.map(\.id) == edits.map(\.entry), "the entries are queued in order")
        let wrongBases = zip(entries, posts).filter { $0.base != .object($1.record) }.count
        #expect(wrongBases == 0, "entries whose base is not the post as listed: \(wrongBases)")
        return edits
    }

    /// Another device: `PATCH posts/<id>` `{"body": "theirs <id>"}` on the server, for each of
    /// `ids` (no `Idempotency-Key`: the server's key counts stay the replays').
    static func editBodiesElsewhere(_ ids: [Int], in space: DRFSpace) async throws {
        let server = URLSessionBackend(baseURL: space.url, timeout: 60)
        for id in ids {
            var request = BackendRequest(
                method: .patch, path: "posts/\(id)", body: Data(#"{"body": "theirs \#(id)"}"#.utf8))
            request.headers["Content-Type"] = "application/json"
            let answer = try await server.send(request).value
            #expect(answer.status == 200, "the other device's PATCH posts/\(id): \(answer.status)")
        }
    }
}

/// The posts at the server after the replays: each must hold the user's title and the other
/// device's body (or, when it wrote nothing, the body as listed), and the rest as listed.
struct MergeCheck {
    /// Posts as expected.
    var asExpected = 0
    /// Posts without the user's title, or without the other device's body.
    var lostTitles = 0
    var lostBodies = 0
    /// Posts with another member changed.
    var otherChanges = 0
    /// Posts gone.
    var missing = 0

    init(space: DRFSpace, listed: [ReplayCrashTests.ListedPost], theirBodies: Bool) async throws {
        let now = Dictionary(
            try await ReplayCrashTests.listing(of: space).map { ($0.id, $0.record) },
            uniquingKeysWith: { a, _ in a })
        for post in listed {
            guard let record = now[post.id] else {
                missing += 1
                continue
            }
            let title = record["title"] == .string("mine \(post.id)")
            let body = record["body"] == (theirBodies ? .string("theirs \(post.id)") : post.record["body"])
            if !title { lostTitles += 1 }
            if !body { lostBodies += 1 }
            if title && body { asExpected += 1 }
            var rest = record
            var before = post.record
            for key in ["title", "body"] {
                rest[key] = nil
                before[key] = nil
            }
            if rest != before { otherChanges += 1 }
        }
    }

    var summary: String {
        "\(asExpected) posts with the user's title and the expected body, \(lostTitles) without the user's "
            + "title, \(lostBodies) with another body, \(otherChanges) with another field changed, \(missing) gone"
    }
}

/// The requests the children printed (`--requests`), against the entries queued.
struct ReplayRequestCheck {
    var reads = 0
    var patches = 0
    /// `PATCH`es with the entry's own key (sent as made), with its derived key for the body
    /// `{"title":…}` (merged), and with another key.
    var ownKeys = 0
    var derivedKeys = 0
    var otherKeys = 0
    /// Requests to a path no entry writes, or with another method than `GET` and `PATCH`.
    var foreignPaths = 0
    var otherMethods = 0
    /// `PATCH`es a child sent before it read the record.
    var patchedBeforeRead = 0
    /// Entries with a `PATCH` in more than one child (a merge sent again after a kill).
    var patchedAgain = 0
    /// Entries a child reported `.sent` after reading the record and sending nothing: the record
    /// held the user's change already (the write had reached the server before a kill).
    var foundApplied = 0
    /// Entries reported `.sent` more than once, or never.
    var sentTwice = 0
    var neverSent = 0

    init(totals: ReplayKillTotals, queued: [ReplayCrashTests.TitleEdit]) {
        let byPath = Dictionary(queued.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var childrenPatching: [String: Int] = [:]
        for run in totals.replays {
            var read = Set<String>()
            var patched = Set<String>()
            for request in run.requestLines {
                guard let edit = byPath[request.path] else {
                    foreignPaths += 1
                    continue
                }
                switch request.method {
                case "GET":
                    reads += 1
                    read.insert(request.path)
                case "PATCH":
                    patches += 1
                    patched.insert(request.path)
                    if !read.contains(request.path) { patchedBeforeRead += 1 }
                    if request.key == edit.key {
                        ownKeys += 1
                    } else if request.key == edit.mergedKey {
                        derivedKeys += 1
                    } else {
                        otherKeys += 1
                    }
                default: otherMethods += 1
                }
            }
            for path in patched { childrenPatching[path, default: 0] += 1 }
            let sentHere = Set(run.sent.map(\.id))
            foundApplied +=
                queued.filter { edit in
                    sentHere.contains(edit.entry) && read.contains(edit.path) && !patched.contains(edit.path)
                }.count
        }
        patchedAgain = childrenPatching.values.filter { $0 > 1 }.count
        let timesSent = Dictionary(grouping: totals.replays.flatMap(\.sent), by: \.id).mapValues(\.count)
        sentTwice = timesSent.values.filter { $0 > 1 }.count
        neverSent = queued.filter { timesSent[$0.entry] == nil }.count
    }

    var summary: String {
        "requests: \(reads) reads, \(patches) PATCHes (\(patchedAgain) entries PATCHed by two children or more; "
            + "\(ownKeys) with the entry's key, \(derivedKeys) with its derived key, \(otherKeys) with another, "
            + "\(patchedBeforeRead) before their read); \(foundApplied) entries found applied by a read (sent, not "
            + "PATCHed again); \(sentTwice) entries reported sent twice, \(neverSent) never (their `sent` line lost "
            + "with a killed child)"
    }
}

/// Where the kills landed, by the last line the killed child printed (`--requests`).
struct KillMoments {
    /// While a record was read (`request GET`), or after its answer, before the write
    /// (`answer GET`).
    var whileReading = 0
    var afterRead = 0
    /// While the `PATCH` was out (`request PATCH`), or after its answer, before its
    /// `sent` line (`answer PATCH`).
    var whileSending = 0
    var afterAnswer = 0
    /// After an entry's `sent` line, before the next request.
    var betweenEntries = 0
    var other = 0

    init(_ lastLines: [String?]) {
        for line in lastLines {
            let fields = line?.split(separator: " ").prefix(2).joined(separator: " ") ?? ""
            switch fields {
            case "request GET": whileReading += 1
            case "answer GET": afterRead += 1
            case "request PATCH": whileSending += 1
            case "answer PATCH": afterAnswer += 1
            default:
                if fields.hasPrefix("sent") || fields.hasPrefix("created") {
                    betweenEntries += 1
                } else {
                    other += 1
                }
            }
        }
    }

    /// Kills that came after a read began and before the write was handed on.
    var duringOrAfterRead: Int { whileReading + afterRead }

    var summary: String {
        "\(whileReading) while reading, \(afterRead) between a read's answer and the write, \(whileSending) while "
            + "the PATCH was out, \(afterAnswer) between its answer and the sent line, \(betweenEntries) "
            + "after a sent line, \(other) elsewhere"
    }
}
