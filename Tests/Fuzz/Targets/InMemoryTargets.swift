import Depot
import DepotInMemory
import Foundation

/// Mutated db.json documents: seeding fails with a typed error or the backend answers reads.
enum DatabaseTarget {
    static let names = ["posts", "users", "comments", "todos", "profile"]
    static let queries: [[URLQueryItem]] = [
        [], [URLQueryItem(name: "_page", value: "2"), URLQueryItem(name: "_limit", value: "2")],
        [URLQueryItem(name: "q", value: "a")],
        [URLQueryItem(name: "_sort", value: "title"), URLQueryItem(name: "_order", value: "desc")],
        [URLQueryItem(name: "_sort", value: "id,userId")],
        [URLQueryItem(name: "_start", value: "1"), URLQueryItem(name: "_end", value: "3")],
        [URLQueryItem(name: "id", value: "1"), URLQueryItem(name: "id", value: "2")],
        [URLQueryItem(name: "_embed", value: "comments"), URLQueryItem(name: "_expand", value: "user")],
        [URLQueryItem(name: "userId_gte", value: "1"), URLQueryItem(name: "title_like", value: "^s")],
    ]

    static func run(_ input: [UInt8], _ harness: Harness) {
        let backend: InMemoryBackend
        do {
            backend = try InMemoryBackend(database: Data(input))
        } catch {
            harness.inspect(error, "InMemoryBackend(database:)")
            return
        }
        for name in names {
            for query in queries {
                let request = BackendRequest(path: name, query: query)
                expectAnswered(harness.outcome(backend.send(request), "GET \(name) \(query)"), harness)
            }
            for path in ["\(name)/1", "\(name)/0", "\(name)/1/posts", "\(name)/%2E%2E"] {
                expectAnswered(
                    harness.outcome(backend.send(BackendRequest(path: path)), "GET \(path)"), harness)
            }
            let loose = FuzzRepository<Loose>(name: name, backend: backend)
            expectRead(harness.outcome(loose.findAll(), "findAll \(name)"), "findAll \(name)", harness)
            expectRead(
                harness.outcome(loose.findPage(1, size: 2), "findPage \(name)"), "findPage \(name)", harness)
            _ = backend.records(in: name)
            _ = backend.object(name)
        }
        // A write on top of whatever was seeded, then the collection read back.
        let posts = FuzzRepository<Loose>(name: "posts", backend: backend)
        let created = harness.outcome(posts.create(["title": "fuzz"] as JSONValue), "create")
        if case .failure(let error) = created { expectAnswerFailure(error, "create", harness) }
        expectRead(harness.outcome(posts.findAll(), "findAll after create"), "findAll after create", harness)
    }

    /// A request the backend answered: success, or a classified 4xx (never 5xx).
    static func expectAnswered(_ result: Result<BackendResponse, ServiceError>?, _ harness: Harness) {
        switch result {
        case .success(let response):
            harness.check((200..<300).contains(response.status), "answered \(response.status) as a success")
        case .failure(let error): expectAnswerFailure(error, "answer", harness)
        case nil: break
        }
    }

    static func expectAnswerFailure(_ error: ServiceError, _ label: String, _ harness: Harness) {
        harness.inspect(error, label)
        guard let status = error.statusCode else {
            if case .invalidRequest = error { return }
            return harness.fail("\(label): failed without a status: \(error)")
        }
        harness.check((400..<500).contains(status), "\(label): the in-memory backend answered \(status)")
    }

    /// A repository read: success, a 4xx, or a decoding failure (a record that is no object).
    static func expectRead<Value>(_ result: Result<Value, ServiceError>?, _ label: String, _ harness: Harness)
    {
        guard case .failure(let error) = result else { return }
        if case .decoding = error { return harness.inspect(error, label) }
        expectAnswerFailure(error, label, harness)
    }
}

/// Mutated request bodies and content types on every in-memory write.
enum WriteTarget {
    static let seed = Data(
        """
        {"posts":[{"id":1,"userId":1,"title":"a","body":"b"},{"id":2,"userId":1,"title":"c","body":"d"}],
        "users":[{"id":1,"name":"Leanne"}],"comments":[{"id":1,"postId":1,"body":"x"}],
        "profile":{"name":"typicode"}}
        """.utf8)
    static let writes: [(HTTPMethod, String)] = [
        (.post, "posts"), (.put, "posts/1"), (.patch, "posts/2"), (.put, "profile"), (.patch, "profile"),
        (.post, "users/1/posts"), (.post, "things"), (.delete, "posts/2"), (.post, "echo"),
    ]
    static let contentTypes: [String?] = [
        "application/json", nil, "text/plain", "application/merge-patch+json; charset=utf-8",
        "application/x-www-form-urlencoded",
    ]

    static func run(_ input: [UInt8], _ harness: Harness) {
        let backend: InMemoryBackend
        do {
            backend = try InMemoryBackend(database: seed)
        } catch {
            return harness.fail("the write seed does not load: \(error)")
        }
        // A route that decodes the body itself, as an app's stub would.
        backend.route(.post, "echo") { context throws(ServiceError) in
            let post = try context.decodeBody(as: Post.self)
            _ = context.body
            return .json(try context.encode(post), status: 201)
        }
        let body = Data(input)
        for (index, (method, path)) in writes.enumerated() {
            for offset in 0..<2 {
                var request = BackendRequest(method: method, path: path, body: body)
                let type = contentTypes[(index + offset * 3) % contentTypes.count]
                if let type { request.headers["Content-Type"] = type }
                let label = "\(method) \(path) (\(type ?? "no type"))"
                switch harness.outcome(backend.send(request), label) {
                case .success(let response):
                    harness.check(
                        (200..<300).contains(response.status), "\(label): answered \(response.status)")
                case .failure(let error): DatabaseTarget.expectAnswerFailure(error, label, harness)
                case nil: break
                }
            }
        }
        // Through a repository too: the bytes as a draft of their own content type.
        let posts = FuzzRepository<Loose>(name: "posts", backend: backend)
        let sent = harness.outcome(
            posts.send(.post, ["posts"], body: .data(body, contentType: "application/json")), "send .data")
        if case .failure(let error) = sent {
            DatabaseTarget.expectAnswerFailure(error, "send .data", harness)
        }
        // Whatever was written, the store still answers reads with JSON a decoder takes.
        for name in ["posts", "things"] {
            let read = harness.outcome(
                FuzzRepository<Loose>(name: name, backend: backend).findAll(), "read \(name)")
            DatabaseTarget.expectRead(read, "read \(name) after writes", harness)
        }
        let profile = FuzzRepositoryWithCoding<Loose>(name: "profile", backend: backend, coding: .default)
        let read = harness.outcome(profile.request(.get, ["profile"], as: JSONValue.self), "read profile")
        DatabaseTarget.expectRead(read, "read profile after writes", harness)
    }
}

/// Request targets on InMemoryBackend: line 1 is the path (relative, absolute or a full
/// URL), line 2 the query string (`name=value&…`, percent-encoded), sent as GET, HEAD and
/// DELETE to a seeded backend.
enum RequestTargetTarget {
    static func run(_ input: [UInt8], _ harness: Harness) {
        let fields = lines(input).map(text)
        let path = fields[0]
        var query: [URLQueryItem] = []
        if fields.count > 1 {
            for pair in fields[1].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let value =
                    parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : nil
                query.append(URLQueryItem(name: name, value: value))
            }
        }
        guard let backend = try? InMemoryBackend(database: WriteTarget.seed) else {
            return harness.fail("the seed does not load")
        }
        for method in [HTTPMethod.get, .head, .delete] {
            let request = BackendRequest(method: method, path: path, query: query)
            let label = "\(method) \(path.debugDescription)"
            switch harness.outcome(backend.send(request), label) {
            case .success(let response):
                harness.check((200..<300).contains(response.status), "\(label): answered \(response.status)")
            case .failure(let error): DatabaseTarget.expectAnswerFailure(error, label, harness)
            case nil: break
            }
        }
        let posts = FuzzRepository<Loose>(name: "posts", backend: backend)
        let built = query.reduce(Query()) { $0.adding($1.name, $1.value ?? "") }
        let listed = harness.outcome(posts.findAll(query: built), "findAll(query:)")
        DatabaseTarget.expectRead(listed, "findAll(query:)", harness)
        let paged = harness.outcome(posts.findPage(2, size: 1, query: built), "findPage(query:)")
        DatabaseTarget.expectRead(paged, "findPage(query:)", harness)
    }
}
