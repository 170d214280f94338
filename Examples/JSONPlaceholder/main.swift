import Depot
import DepotInMemory
import Foundation

// Runs against an in-memory copy of JSONPlaceholder's data unless given
// `--base-url https://jsonplaceholder.typicode.com` (or any json-server).
let arguments = CommandLine.arguments
let memory: InMemoryBackend?
let backend: any Backend
if let flag = arguments.firstIndex(of: "--base-url"), arguments.indices.contains(flag + 1),
    let url = URL(string: arguments[flag + 1])
{
    memory = nil
    backend = URLSessionBackend(baseURL: url)
    print("Using \(url)")
} else {
    let seeded = InMemoryBackend.jsonPlaceholder()
    memory = seeded
    backend = seeded
    print("Using an in-memory backend seeded with generated JSONPlaceholder data")
}

let users = UserRepository(backend: backend)
let posts = PostRepository(backend: backend)

do {
    print("\n== Users")
    for user in try await users.findAll().value {
        print("  #\(user.id) \(user.name) <\(user.email)>")
    }

    print("\n== Posts by user 1")
    for post in try await posts.findAll(byUser: 1).value {
        print("  #\(post.id) \(post.title)")
    }

    print("\n== User 2's posts, nested: GET /users/2/posts, 3 per page")
    let user2 = try await users.findByID(2).value
    for try await page in posts.scoped(to: user2, in: users).pages(size: 3) {
        print("  page \(page.number): \(page.items.map { "#\($0.id)" }.joined(separator: " "))")
    }

    print("\n== Every post, 10 per page")
    var seen = 0
    for try await page in posts.pages(size: 10) {
        seen += page.items.count
        let of = page.pageCount.map { " of \($0)" } ?? ""
        print(
            "  page \(page.number)\(of): ids \(page.items.first?.id ?? 0)–\(page.items.last?.id ?? 0), \(seen) posts so far"
        )
    }

    print("\n== Create, update, patch, delete")
    memory?.clearRequests()
    let created = try await posts.create(
        NewPost(userId: 1, title: "Hello, Depot", body: "Written by the example.")
    ).value
    print("  created #\(created.id): \(created.title)")

    var edited = created
    edited.title = "Hello again"
    let updated = try await posts.update(edited).value
    print("  updated #\(updated.id): \(updated.title)")

    let patched = try await posts.patch(created.id, with: ["body": "Patched body."]).value
    print("  patched #\(patched.id): \(patched.body)")

    try await posts.delete(id: created.id).value
    print("  deleted #\(created.id)")

    switch await posts.findByID(created.id).result {
    case .failure(.notFound): print("  reading #\(created.id) again: not found, as expected")
    case .failure(let error): print("  reading #\(created.id) again failed: \(error)")
    case .success: print("  reading #\(created.id) again: still there?")
    }

    if let memory {
        print("\n== What the backend received")
        for request in memory.requests {
            let body = request.body.flatMap { String(data: $0, encoding: .utf8) } ?? ""
            print("  \(request.method.rawValue) /\(request.path) \(body)")
        }
    }
} catch {
    print("error: \(error.localizedDescription)")
    exit(1)
}
