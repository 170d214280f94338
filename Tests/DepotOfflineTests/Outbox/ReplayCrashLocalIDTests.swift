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

/// Kills during a replay of records created offline that refer to each other by local id
/// (issue 24; Tests/CrashSafety/README.md has the figures).
///
/// The store holds pairs of writes queued offline: `POST posts` titled `pair <seq>` (it gets a
/// local id, -1, -3, …), then `POST comments` with body `pair <seq>` and `postId` = that local
/// id. Replay children are killed with SIGKILL at seeded random moments until the outbox is empty
/// (``ReplayCrashTests/killReplays(of:in:folder:to:child:random:longestDelay:mostSent:deadline:flags:)``), so
/// kills land between a post's `201` and the record of its id, and between that record and
/// its comment's request. Then no local id may have reached the server (every comment of the
/// space points at a post of the space, and a pair's comment at the post of the same pair), no
/// write may be missing, and none applied twice (the app honours `Idempotency-Key`, and counts
/// the keys applied).
extension ReplayCrashTests {
    /// Pairs of the local-id kill test (two entries each), and the longest wait from a child's
    /// first `.sent` to its kill.
    static let localIDPairs = 300
    static let longestLocalIDKillDelay: UInt64 = 150

    @Test(
        "Replays killed with SIGKILL between a create's 201 and the writes that use its local id leak no local id",
        .timeLimit(.minutes(5)))
    func replayKilledWithLocalIDs() async throws {
        guard let child = CrashChild.required() else { return }
        let seed = UInt64(ProcessInfo.processInfo.environment["DEPOT_CRASH_SEED"] ?? "") ?? 12
        var random = SplitMix64(seed: seed)
        let space = try DRFSpace()
        let folder = try TemporaryFolder()
        let file = folder.file("pairs.sqlite")
        let started = ContinuousClock.now
        let queued = try await Self.queuePairs(Self.localIDPairs, in: file)
        let order = queued.map(\.id)
        let totals = try await Self.killReplays(
            of: order, in: file, folder: folder, to: space, child: child, random: &random,
            longestDelay: Self.longestLocalIDKillDelay, mostSent: 24, deadline: .now + .seconds(120))
        let seconds = (ContinuousClock.now - started).seconds

        // The kills that left a comment at the head of the outbox: its post was sent and its id
        // recorded, the comment not yet (or sent, its answer lost with the child).
        let commentEntries = Set(queued.filter { !$0.isPost }.map(\.id))
        let killsBeforeComment = totals.headsAfterKills.filter { $0.map(commentEntries.contains) ?? false }
            .count
        // The posts whose 201 was lost with a killed child (applied, its id not recorded): the
        // next child sent them again and had the server's id from the stored answer.
        let postEntries = Set(queued.filter(\.isPost).map(\.id))
        let postsResent = Set(totals.replayedEntries.filter(postEntries.contains)).count

        // The `created` lines: each post entry's local id named the server's post of its pair.
        let server = try await PairCheck(space: space, pairs: Self.localIDPairs)
        let byEntry = Dictionary(queued.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var wrongMappings = 0
        var postMappings = 0
        for line in totals.created {
            guard let entry = byEntry[line.id] else {
                wrongMappings += 1
                continue
            }
            let expected =
                entry.isPost ? server.postIDs[entry.seq]?.first : server.commentIDs[entry.seq]?.first
            if entry.isPost { postMappings += 1 }
            if line.localID != "\(entry.localID)" || line.serverID != expected.map(String.init) {
                wrongMappings += 1
            }
        }
        let tally = try await space.idempotencyCounts(settle: 10)
        let summary = """
            kill during replay with local ids: \(totals.kills) kills during replay (seed \(seed)), \
            \(Self.localIDPairs) pairs (\(order.count) entries), \(killsBeforeComment) kills between a post's \
            id map and its comment's send, \(postsResent) posts whose id came from a resend (the 201 lost with its \
            child); server: \(server.summary); \(tally.replayed) resends \
            (\(totals.seenReplayed) seen by a child as Idempotent-Replayed); \(totals.created.count) created \
            lines (\(postMappings) for posts), \(wrongMappings) naming another record; \(totals.runs) \
            replays, integrity ok \(totals.integrityOK)/\(totals.runs - 1), \(totals.retriedConflicts) entries \
            kept with 409 and retried; server: \(tally.summary); \(String(format: "%.1f", seconds)) s
            """
        print(summary)
        #expect(server.leakedLocalIDs == 0, "\(summary)")
        #expect(server.foreignPostIDs == 0, "\(summary)")
        #expect(server.missing == 0, "\(summary)")
        #expect(server.appliedTwice == 0, "\(summary)")
        #expect(server.wrongPost == 0, "\(summary)")
        #expect(wrongMappings == 0, "\(summary)")
        #expect(tally.applied == order.count, "\(summary)")
        #expect(tally.mismatches == 0, "a resend's body differed from the first (422): \(summary)")
        #expect(tally.replayed >= totals.seenReplayed, "\(summary)")
        #expect(totals.integrityOK == totals.runs - 1, "\(summary)")
        // Nothing was measured unless replays were killed, some between a post and its comment.
        #expect(totals.kills >= 20, "too few kills during replay to mean anything: \(summary)")
        #expect(killsBeforeComment >= 1, "no kill landed between a post and its comment: \(summary)")
        #expect(postsResent >= 1, "no kill landed between a post's 201 and the record of its id: \(summary)")
    }

    /// A queued entry of the local-id test.
    struct PairEntry {
        var id: String
        var seq: Int
        var isPost: Bool
        /// The local id of the record it creates.
        var localID: Int
    }

    /// Queues `pairs` pairs `POST posts` (title `pair <seq>`) and `POST comments` (body
    /// `pair <seq>`, `postId` the post's local id) in a new store at `file`, through `.offline`
    /// in front of a backend that cannot connect; returns the entries in queue order.
    static func queuePairs(_ pairs: Int, in file: URL) async throws -> [PairEntry] {
        let store = try OfflineStore(at: file)
        let backend = FailingBackend(error: .cannotConnect).with(.offline(store))
        var entries: [PairEntry] = []
        func send(_ path: String, _ body: String) async throws -> (String, Int) {
            var request = BackendRequest(method: .post, path: path, body: Data(body.utf8))
            request.headers["Content-Type"] = "application/json"
            let write = try #require(queuedWrite(await backend.send(request).result))
            let localID = try #require(write.localID?.intValue, "\(path): a local id that is a number")
            #expect(localID < 0, "\(path): local id \(localID)")
            return (write.id, localID)
        }
        for seq in 0..<pairs {
            let (post, postID) = try await send(
                "posts", #"{"userId": 1, "title": "pair \#(seq)", "body": "seq \#(seq)"}"#)
            entries.append(PairEntry(id: post, seq: seq, isPost: true, localID: postID))
            let (comment, commentID) = try await send(
                "comments",
                #"{"postId": \#(postID), "name": "pair \#(seq)", "email": "pair@example.com", "body": "pair \#(seq)"}"#
            )
            entries.append(PairEntry(id: comment, seq: seq, isPost: false, localID: commentID))
        }
        // The writes queued behind others started replays, which end on the unreachable backend:
        // wait for the last, so that nothing of this store runs once the children start.
        let settled = await store.outbox.replay()
        #expect(settled.remaining == pairs * 2, "queued: \(settled)")
        #expect(try store.outbox.entries().map(\.id) == entries.map(\.id), "the entries are queued in order")
        return entries
    }
}

/// The pairs `pair 0` … `pair <pairs - 1>` at the server, and every comment of the space.
struct PairCheck {
    /// The ids of the posts titled `pair <seq>`, by seq.
    var postIDs: [Int: [Int]] = [:]
    /// The ids of the comments with body `pair <seq>`, by seq.
    var commentIDs: [Int: [Int]] = [:]
    /// Comments of the space whose `postId` is negative: a local id that reached the server.
    var leakedLocalIDs = 0
    /// Comments of the space whose `postId` names no post of the space.
    var foreignPostIDs = 0
    /// Pairs whose post or comment is missing.
    var missing = 0
    /// Pairs with more than one post or more than one comment.
    var appliedTwice = 0
    /// Pairs whose comment points at another post than the pair's.
    var wrongPost = 0

    init(space: DRFSpace, pairs: Int) async throws {
        let server = URLSessionBackend(baseURL: space.url, timeout: 60)
        func records(_ path: String) async throws -> [[String: JSONValue]] {
            let body = try await server.send(BackendRequest(path: path)).value.body
            return try JSONDecoder().decode([[String: JSONValue]].self, from: body)
        }
        func seq(_ text: String?) -> Int? {
            guard let text, text.hasPrefix("pair ") else { return nil }
            return Int(text.dropFirst("pair ".count))
        }
        var posts = Set<Int>()
        for post in try await records("posts") {
            guard let id = post["id"]?.intValue else { continue }
            posts.insert(id)
            if let seq = seq(post["title"]?.stringValue) { postIDs[seq, default: []].append(id) }
        }
        var postOfComment: [Int: Int] = [:]
        for comment in try await records("comments") {
            guard let id = comment["id"]?.intValue, let postID = comment["postId"]?.intValue else {
                foreignPostIDs += 1
                continue
            }
            if postID < 0 { leakedLocalIDs += 1 }
            if !posts.contains(postID) { foreignPostIDs += 1 }
            if let seq = seq(comment["body"]?.stringValue) {
                commentIDs[seq, default: []].append(id)
                postOfComment[id] = postID
            }
        }
        for seq in 0..<pairs {
            guard let post = postIDs[seq]?.first, let comment = commentIDs[seq]?.first else {
                missing += 1
                continue
            }
            if (postIDs[seq]?.count ?? 0) > 1 || (commentIDs[seq]?.count ?? 0) > 1 { appliedTwice += 1 }
            if postOfComment[comment] != post { wrongPost += 1 }
        }
    }

    var summary: String {
        "\(leakedLocalIDs) comments with a local id, \(foreignPostIDs) pointing at no post of the space, "
            + "\(wrongPost) at another pair's post, \(missing) pairs missing, \(appliedTwice) applied twice"
    }
}
