import Depot
import DepotInMemory
import Foundation

/// 2xx response bodies through every reading path a repository has.
enum ResponseBodyTarget {
    static let headers: HTTPHeaders = [
        "Content-Type": "application/json; charset=utf-8", "X-Total-Count": "100", "X-Total": "100",
        "Link": "<http://localhost/posts?_page=2&_limit=10>; rel=\"next\"",
    ]

    static func run(_ input: [UInt8], _ harness: Harness) {
        let body = Data(input)
        let backend = FixedBackend(response: BackendResponse(status: 200, headers: headers, body: body))
        readAll(through: backend, harness)
        page(through: backend, harness)
        follow(through: backend, harness)

        // The same body, completed on another thread, and through the async bridge.
        let later = FixedBackend(response: backend.response, asynchronous: true)
        let posts = FuzzRepository<Post>(name: "posts", backend: later)
        expectDecoded(harness.outcome(posts.findAll(), "findAll (async backend)"), "findAll (async)", harness)
        expectDecoded(
            harness.awaitedOutcome(posts.findByID(1), "findByID (await)"), "findByID (await)", harness)
    }

    static func readAll(through backend: some Backend, writes: Bool = true, _ harness: Harness) {
        let posts = FuzzRepository<Post>(name: "posts", backend: backend)
        let loose = FuzzRepository<Loose>(name: "posts", backend: backend)
        expectDecoded(harness.outcome(posts.findAll(), "findAll [Post]"), "findAll [Post]", harness)
        expectDecoded(harness.outcome(posts.findByID(1), "findByID Post"), "findByID Post", harness)
        expectDecoded(harness.outcome(loose.findAll(), "findAll [Loose]"), "findAll [Loose]", harness)
        expectDecoded(harness.outcome(loose.findByID("1"), "findByID Loose"), "findByID Loose", harness)
        if writes {
            let draft = Post(id: 1, userId: 1, title: "t", body: "b")
            expectDecoded(harness.outcome(posts.create(draft), "create Post"), "create Post", harness)
            expectDecoded(harness.outcome(posts.update(draft), "update Post"), "update Post", harness)
            expectDecoded(harness.outcome(posts.delete(id: 1), "delete"), "delete", harness)
        }
        let enveloped = FuzzRepositoryWithCoding<Loose>(
            name: "posts", backend: backend, coding: JSONCoding.default.envelope("data"))
        expectDecoded(
            harness.outcome(enveloped.findAll(), "findAll (envelope data)"), "envelope data", harness)
    }

    static func page(through backend: some Backend, _ harness: Harness) {
        for style in paginationStyles {
            let label = "findPage(\(style.name))"
            let posts = FuzzRepository<Post>(name: "posts", backend: backend, pagination: style.pagination)
            let result = harness.outcome(posts.findPage(1, size: 10), label)
            expectDecoded(result, label, harness)
            if case .success(let page) = result {
                harness.check(
                    page.number == 1 && page.size == 10, "\(label): page \(page.number) size \(page.size)")
                if page.hasNext {
                    let after = harness.outcome(posts.findPage(after: page), "\(label) next")
                    expectDecoded(after, "\(label) next", harness)
                }
            }
            let loose = FuzzRepository<Loose>(name: "posts", backend: backend, pagination: style.pagination)
            expectDecoded(harness.outcome(loose.findPage(2, size: 3), "\(label) [Loose]"), label, harness)
        }
    }

    static func follow(through backend: some Backend, _ harness: Harness) {
        let root = URL(string: "https://api.example.com/v1/")!
        let client = HypermediaClient(backend: backend, root: root)
        let link = Link(rel: "self", href: "https://api.example.com/v1/posts/1")
        let typed = harness.outcome(client.follow(link, as: Post.self), "follow as Post")
        expectDecoded(typed, "follow as Post", harness)
        let result = harness.outcome(
            backend.follow(Link(rel: "self", href: "posts/1"), as: JSONValue.self), "follow")
        expectDecoded(result, "follow as JSONValue", harness)
        guard case .success(let resource) = result else { return }
        _ = resource.relations
        for rel in resource.embeddedRelations.prefix(4) {
            do {
                _ = try resource.embedded(rel, as: JSONValue.self)
                _ = try resource.embedded(rel, as: Post.self)
            } catch {
                harness.inspect(error, "embedded \(rel)")
            }
        }
        let values: [String: JSONValue] = ["id": 1, "page": 2, "q": "a b", "list": ["x", "y"]]
        for link in resource.links.prefix(6) {
            do {
                _ = try client.request(for: link, with: values)
            } catch {
                harness.inspect(error, "request for \(link.rel)")
                harness.check(isInvalidRequest(error), "request for a link: \(error)")
            }
            let sent = harness.outcome(
                client.follow(link, with: values, as: JSONValue.self), "follow \(link.rel)")
            expectDecoded(sent, "follow \(link.rel)", harness)
        }
    }
}

/// A repository with its own coding (an envelope, say).
struct FuzzRepositoryWithCoding<Entity: Codable & Identifiable & Sendable>: Readable {
    let name: String
    let backend: any Backend
    let coding: JSONCoding
}

func isInvalidRequest(_ error: ServiceError) -> Bool {
    if case .invalidRequest = error { return true }
    return false
}

/// 4xx/5xx (and 1xx/3xx) bodies: every failure is classified by its status and keeps the
/// server's message when there is one.
enum ErrorBodyTarget {
    static let statuses = [400, 401, 403, 404, 409, 410, 412, 422, 428, 429, 500, 502, 503, 302, 101, 304]
    static let contentTypes: [String?] = [
        "application/json", "application/problem+json", "text/plain; charset=utf-8", nil, "text/html",
    ]

    static func run(_ input: [UInt8], _ harness: Harness) {
        let body = Data(input)
        for (index, status) in statuses.enumerated() {
            var headers: HTTPHeaders = ["Retry-After": "1", "WWW-Authenticate": "Bearer realm=\"api\""]
            if let type = contentTypes[index % contentTypes.count] { headers["Content-Type"] = type }
            let response = BackendResponse(status: status, headers: headers, body: body)
            let label = "status \(status)"
            let request = BackendRequest(path: "posts/1")
            guard let error = ServiceError(response: response, for: request) else {
                harness.fail("\(label): classified as a success")
                continue
            }
            harness.expectFailure(error, status: status, label)
            if let message = error.message {
                harness.check(!message.isEmpty, "\(label): an empty message")
            }
            let backend = FixedBackend(response: response)
            let posts = FuzzRepository<Post>(name: "posts", backend: backend)
            expectFailure(harness.outcome(posts.findByID(1), "\(label) findByID"), status, label, harness)
            let paged = FuzzRepository<Post>(name: "posts", backend: backend, pagination: .envelope)
            let page = harness.outcome(paged.findPage(2, size: 10), "\(label) findPage(envelope) 2")
            if status == 404 || status == 410, case .success(let page) = page {
                harness.check(page.items.isEmpty && !page.hasNext, "\(label): a page past the end has items")
            } else {
                expectFailure(page, status, "\(label) findPage", harness)
            }
        }
        // The in-memory backend's injected faults go through the same classifier.
        let memory = InMemoryBackend()
        for status in [400, 401, 404, 429, 500, 503] {
            memory.failNext(1, status: status, headers: ["Content-Type": "application/json"], body: body)
            let posts = FuzzRepository<Loose>(name: "posts", backend: memory)
            expectFailure(
                harness.outcome(posts.findAll(), "InMemory fault \(status)"), status, "fault", harness)
        }
    }

    static func expectFailure<Value>(
        _ result: Result<Value, ServiceError>?, _ status: Int, _ label: String, _ harness: Harness
    ) {
        switch result {
        case .success: harness.fail("\(label): status \(status) ended in a success")
        case .failure(let error): harness.expectFailure(error, status: status, label)
        case nil: break
        }
    }
}

/// Bodies answered by route stubs on InMemoryBackend: the in-memory side of the classifier,
/// plus the conditional GET every in-memory GET answer goes through.
enum RouteTarget {
    static func run(_ input: [UInt8], _ harness: Harness) {
        let body = Data(input)
        let backend = InMemoryBackend()
        let headers: HTTPHeaders = [
            "Content-Type": "application/json", "X-Total-Count": "25",
            "Link": "<http://localhost/x?_page=2&_limit=10>; rel=\"next\", <x?_page=3>; rel=\"last\"",
        ]
        backend.route(.get, "x") { _ throws(ServiceError) in
            BackendResponse(status: 200, headers: headers, body: body)
        }
        backend.route(.get, "x/:id") { _ throws(ServiceError) in BackendResponse(status: 200, body: body) }
        backend.route(.get, "e") { _ throws(ServiceError) in BackendResponse(status: 422, body: body) }
        backend.route(.get, "t") { _ throws(ServiceError) in
            throw .decoding(DecodingFailure(type: "T", codingPath: "", description: text(input.prefix(64))))
        }
        ResponseBodyTarget.readAll(
            through: RenamedBackend(backend: backend, name: "x"), writes: false, harness)
        let paged = FuzzRepository<Post>(name: "x", backend: backend)
        let page = harness.outcome(paged.findPage(1, size: 10), "route findPage")
        expectDecoded(page, "route findPage", harness)
        if case .success(let first) = page, first.hasNext {
            expectDecoded(harness.outcome(paged.findPage(after: first), "route next"), "route next", harness)
        }
        let errors = FuzzRepository<Loose>(name: "e", backend: backend)
        ErrorBodyTarget.expectFailure(
            harness.outcome(errors.findAll(), "route 422"), 422, "route 422", harness)
        let thrown = harness.outcome(
            FuzzRepository<Loose>(name: "t", backend: backend).findAll(), "route throws")
        if case .success = thrown { harness.fail("a throwing route ended in a success") }

        // Revalidation: the entity tag the backend sent must answer 304 when sent back.
        guard case .success(let first) = harness.outcome(backend.send(BackendRequest(path: "x")), "GET x")
        else {
            harness.fail("GET x failed")
            return
        }
        guard let tag = first.headers["ETag"] else { return harness.fail("GET x: no ETag") }
        let again = BackendRequest(path: "x", headers: ["If-None-Match": tag])
        switch harness.outcome(backend.send(again), "GET x If-None-Match") {
        case .success(let response):
            harness.check(response.status == 304, "revalidation answered \(response.status)")
        case .failure(let error): harness.fail("revalidation failed: \(error)")
        case nil: break
        }
    }
}

/// Sends every request of a repository named "posts" to the collection `name` instead.
struct RenamedBackend: Backend {
    let backend: any Backend
    let name: String

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        var request = request
        if request.path.hasPrefix("posts") { request.path = name + request.path.dropFirst(5) }
        return backend.send(request)
    }
}
