import Depot
import DepotFixtures
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
    server = try InMemoryBackend(database: JSONPlaceholderData.database())
    print("Server: an in-memory json-server with generated JSONPlaceholder data")
}

let storeURL = FileManager.default.temporaryDirectory
    .appending(path: "depot-offline-demo", directoryHint: .isDirectory)
    .appending(path: "depot.sqlite")
if arguments.contains("--reset") { try OfflineStore.remove(at: storeURL) }
let store = try OfflineStore(at: storeURL)
print("Store:  \(storeURL.path(percentEncoded: false))")

let network = NetworkSwitch(server)
let posts = PostRepository(backend: network.with(.offline(store)))
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

print("\n== 4. Writing while offline")
var queued: [QueuedWrite] = []
for title in ["Written on the train", "Written in a tunnel"] {
    switch await posts.create(NewPost(userId: 1, title: title, body: "Sent when the network is back.")).result
    {
    case .failure(.queued(let write)):
        queued.append(write)
        print(
            "  POST /posts \"\(title)\": queued as \(write.id.prefix(8)), Idempotency-Key \(write.idempotencyKey.prefix(8))…"
        )
    case .failure(let error):
        print("  POST /posts \"\(title)\": \(error.localizedDescription)")
    case .success(let post):
        print("  POST /posts \"\(title)\": created #\(post.id)")
    }
}

print("\n== 5. The network is back: replaying the outbox")
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
        case .queued, .discarded, .created:
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
await readPosts("GET /posts?userId=1")

// Answers from the last tenth of a second wait in memory to be written together: write them.
store.flush()
print("\nRun it again: it starts offline and reads what this run stored.")
