import Depot
import DepotInMemory
import DepotOffline
import Foundation

// Reads and writes that survive the network, with DepotOffline.
//
//   swift run OfflineDemo                      # an in-memory json-server, a store in the temp folder
//   swift run OfflineDemo --base-url URL       # any json-server instead
//   swift run OfflineDemo --reset              # forget what earlier runs stored
//
// Run it twice: the second run starts offline and still reads what the first one stored.
let arguments = CommandLine.arguments
let server: any Backend
if let flag = arguments.firstIndex(of: "--base-url"), arguments.indices.contains(flag + 1),
    let url = URL(string: arguments[flag + 1])
{
    server = URLSessionBackend(baseURL: url, timeout: 10)
    print("Server: \(url)")
} else {
    server = InMemoryBackend.jsonPlaceholder()
    print("Server: an in-memory json-server with generated JSONPlaceholder data")
}

let storeURL = FileManager.default.temporaryDirectory
    .appending(path: "depot-offline-demo", directoryHint: .isDirectory)
    .appending(path: "depot.sqlite")
if arguments.contains("--reset") { try OfflineStore.remove(at: storeURL) }
let store = try OfflineStore(at: storeURL)
print("Store:  \(storeURL.path(percentEncoded: false))")

let network = NetworkSwitch(server)
let backend = network.with(.offline(store))
let posts = PostRepository(backend: backend)
let comments = CommentRepository(backend: backend)
let time = Date.FormatStyle(date: .omitted, time: .standard)

/// Reads user 1's posts and says where the answer came from.
func readPosts(_ label: String) async {
    let receipt = AnswerReceipt()
    switch await receipt.collect({ await posts.findAll(query: ["userId": 1]).result }) {
    case .success(let found):
        switch receipt.source {
        case .network:
            print("  \(label): \(found.count) posts, from the server")
        case .stored(let savedAt):
            let age = Int(Date().timeIntervalSince(savedAt))
            print("  \(label): \(found.count) posts, saved \(savedAt.formatted(time)) (\(age) s ago)")
        }
    case .failure(.noConnection):
        print("  \(label): offline, and nothing stored for it yet")
    case .failure(let error):
        print("  \(label): \(error.localizedDescription)")
    }
}

print("\n== 1. Starting offline: what did an earlier run keep?")
network.isOn = false
await readPosts("GET /posts?userId=1")
let waiting = try store.outbox.entries()
print("  writes waiting in the outbox: \(waiting.count)")

print("\n== 2. Online")
network.isOn = true
await readPosts("GET /posts?userId=1")
if !(server is URLSessionBackend) {
    print("  (each run starts a new in-memory server: the posts an earlier run created are in")
    print("   the saved answer above, not on this server)")
}

print("\n== 3. The network goes away")
network.isOn = false
await readPosts("GET /posts?userId=1")

/// Lists user 1's posts by id and title, and how many unsent writes the answer includes.
func listPosts(_ label: String) async {
    let receipt = AnswerReceipt()
    guard let found = try? await receipt.collect({ try await posts.findAll(query: ["userId": 1]).value })
    else {
        print("  \(label): no answer")
        return
    }
    let ids = found.map(\.id)
    print("  \(label): \(found.count) posts, \(receipt.pendingWrites) changes not yet on the server")
    print(
        "    ids: \(ids.map(String.init).joined(separator: " "))\(Set(ids).count == ids.count ? "" : " (an id twice!)")"
    )
    for post in found where post.id < 0 || post.title.hasPrefix("Edited") || post.title.hasPrefix("Written") {
        print("    #\(post.id) \"\(post.title)\"")
    }
}

/// An id as a person reads it: `-1`, `local-…`.
func text(_ id: JSONValue) -> String {
    switch id {
    case .int(let number): return String(number)
    case .string(let string): return string
    default: return "\(id)"
    }
}

/// Says what became of a write made while offline.
func describe(_ label: String, _ result: Result<some Sendable, ServiceError>) {
    switch result {
    case .failure(.queued(let write)):
        let local = write.localID.map { ", local id \(text($0))" } ?? ""
        print("  \(label): queued as \(write.id.prefix(8))\(local)")
    case .failure(let error): print("  \(label): \(error.localizedDescription)")
    case .success: print("  \(label): sent")
    }
}

print("\n== 4. Writing while offline: the list shows every change at once")
let created = await posts.create(
    NewPost(userId: 1, title: "Written on the train", body: "Sent when the network is back.")
).result
describe("POST /posts", created)
if case .failure(.queued(let write)) = created, let postID = try? write.localID(as: Post.ID.self) {
    let comment = NewComment(postId: postID, name: "Me", email: "me@example.com", body: "First!")
    describe("POST /comments (postId \(postID))", await comments.create(comment).result)
}
describe("PATCH /posts/1", await posts.patch(1, with: ["title": "Edited offline"]).result)
describe("DELETE /posts/2", await posts.delete(id: 2).result)
await listPosts("GET /posts?userId=1")

print("\n== 5. Meanwhile another device, online, edits post 1 too")
let otherDevice = PostRepository(backend: server)
let elsewhere = await otherDevice.patch(
    1, with: ["title": "Retitled elsewhere", "body": "Rewritten elsewhere."]
).result
print("  PATCH /posts/1 title and body: \((try? elsewhere.get()).map { _ in "done" } ?? "failed")")

print("\n== 6. The network is back: replaying the outbox")
// Counted and subscribed before the network returns, so no event comes before the listener.
let events = store.outbox.events
let pending = try store.outbox.entries().filter(\.isQueued).count
network.isOn = true
let listener = Task {
    var reported = 0
    guard pending > 0 else { return }
    for await event in events where reported < pending {
        switch event {
        case .sent(let entry, let response):
            let created = try? JSONDecoder().decode(Post.self, from: response.body)
            let id = created.map { "#\($0.id)" } ?? "\(response.status)"
            print(
                "  sent \(entry.method.rawValue) /\(entry.path): the server answered \(response.status), \(id)"
            )
            reported += 1
        case .kept(let entry, let error):
            print("  kept \(entry.method.rawValue) /\(entry.path): \(error.localizedDescription)")
            reported += 1
        case .created(let entry, let localID, let serverID):
            print(
                "  /\(entry.path) \(text(localID)) is #\(text(serverID)) on the server: later writes and reads use it"
            )
        case .conflict(let entry, let conflict):
            print(
                "  conflict on \(entry.method.rawValue) /\(entry.path): both changed \(conflict.fields), kept for the app"
            )
            // Kept for the app (the default policy): no other event follows for it.
            if entry.conflict != nil { reported += 1 }
        case .queued, .discarded:
            break
        }
        if reported == pending { break }
    }
}
let report = await store.outbox.replay()
// A replay the network interrupted reports fewer events: stop waiting for the rest.
if report.sent + report.kept < pending { listener.cancel() }
await listener.value
print("  replay: \(report.sent) sent, \(report.kept) kept, \(report.remaining) left")
await listPosts("GET /posts?userId=1")

print("\n== 7. Resolving the conflict: my title, the other device's body")
for entry in try store.outbox.entries() {
    guard let conflict = entry.conflict, case .object(var record)? = conflict.theirs,
        case .object(let mine)? = conflict.mine
    else { continue }
    record["title"] = mine["title"]
    // Queued again as a PUT of this record; a replay starts by itself.
    try store.outbox.resolve(entry.id, with: .object(record))
}
_ = await store.outbox.replay()
if let post = try? await otherDevice.findByID(1).value {
    print("  on the server, #1 \"\(post.title)\": \(post.body)")
}

// Answers from the last tenth of a second wait in memory to be written together: write them.
store.flush()
print("\nRun it again: it starts offline and reads what this run stored.")
