import Foundation
import Testing

@testable import Depot

@Suite("CacheMiddleware")
struct CacheMiddlewareTests {
    private static func get(
        _ path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:]
    ) -> BackendRequest {
        BackendRequest(path: path, query: query, headers: headers)
    }

    /// A server for one path at a time: every `GET` of `path` answers `200` with `body` and
    /// the tag `"<path>"`, or `304` when `If-None-Match` carries that tag.
    private static func taggingServer() -> ScriptedBackend {
        ScriptedBackend { request in
            let tag = "\"\(request.path)\""
            if request.headers["If-None-Match"] == tag { return .status(304, headers: ["ETag": tag]) }
            return .status(200, headers: ["ETag": tag], body: "body of \(request.path)")
        }
    }

    // MARK: - Revalidation

    @Test func revalidatesWithTheStoredETagAndAnswersA304FromTheStore() async throws {
        let backend = ScriptedBackend([
            .status(
                200, headers: ["ETag": "\"v1\"", "Content-Type": "application/json"], body: #"{"id":1}"#),
            .status(304, headers: ["ETag": "\"v1\""]),
        ])
        let client = backend.with(CacheMiddleware())

        let first = try await client.send(Self.get("posts/1")).value
        let second = try await client.send(Self.get("posts/1")).value

        #expect(backend.requests.count == 2)
        #expect(backend.requests[0].headers["If-None-Match"] == nil)
        #expect(backend.requests[1].headers["If-None-Match"] == "\"v1\"")
        #expect(second.status == 200)
        #expect(second.body == Data(#"{"id":1}"#.utf8))
        #expect(second.body == first.body)
        #expect(second.headers["Content-Type"] == "application/json")
    }

    @Test("a 304 naming another ETag does not validate the stored body: it is dropped and asked for again")
    func a304ForAnotherTagIsNotServedFromTheStore() async throws {
        let date = "Tue, 15 Nov 1994 12:45:26 GMT"
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\"", "Last-Modified": date], body: "one"),
            // A server that honours If-Modified-Since but not If-None-Match, after a change.
            .status(304, headers: ["ETag": "\"v2\""]),
            .status(200, headers: ["ETag": "\"v2\""], body: "two"),
        ])
        let client = backend.with(.cache())

        _ = try await client.send(Self.get("posts/1")).value
        let second = try await client.send(Self.get("posts/1")).value

        #expect(second.status == 200)
        #expect(second.body == Data("two".utf8))
        #expect(backend.requests.count == 3)
        #expect(backend.requests[2].headers["If-None-Match"] == nil)
        #expect(backend.requests[2].headers["If-Modified-Since"] == nil)
    }

    @Test("a 304 with the stored tag, weak or strong, refreshes the entry")
    func weakAndStrongTagsBothValidate() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: "one"),
            .status(304, headers: ["ETag": "W/\"v1\""]),
        ])
        let client = backend.with(.cache())
        _ = try await client.send(Self.get("posts/1")).value
        let second = try await client.send(Self.get("posts/1")).value
        #expect(second.body == Data("one".utf8))
        #expect(backend.requests.count == 2)
    }

    @Test func lastModifiedIsSentBackAsIfModifiedSince() async throws {
        let date = "Tue, 15 Nov 1994 12:45:26 GMT"
        let backend = ScriptedBackend([
            .status(200, headers: ["Last-Modified": date], body: "v1"),
            .status(304),
        ])
        let client = backend.with(.cache())

        _ = try await client.send(Self.get("notes/1")).value
        let second = try await client.send(Self.get("notes/1")).value

        #expect(backend.requests[1].headers["If-Modified-Since"] == date)
        #expect(backend.requests[1].headers["If-None-Match"] == nil)
        #expect(second.status == 200)
        #expect(second.body == Data("v1".utf8))
    }

    @Test func aNewRepresentationReplacesTheStoredOne() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: "one"),
            .status(200, headers: ["ETag": "\"v2\""], body: "two"),
            .status(304),
        ])
        let client = backend.with(.cache())

        _ = try await client.send(Self.get("posts/1")).value
        let changed = try await client.send(Self.get("posts/1")).value
        let again = try await client.send(Self.get("posts/1")).value

        #expect(changed.body == Data("two".utf8))
        #expect(backend.requests[2].headers["If-None-Match"] == "\"v2\"")
        #expect(again.body == Data("two".utf8))
    }

    @Test func a304UpdatesTheStoredHeadersButNotTheBodysFraming() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\"", "Content-Length": "3", "X-Rate": "10"], body: "abc"),
            .status(304, headers: ["ETag": "\"v1\"", "Content-Length": "0", "X-Rate": "9", "X-New": "yes"]),
            .status(304),
        ])
        let client = backend.with(.cache())

        _ = try await client.send(Self.get("posts/1")).value
        let refreshed = try await client.send(Self.get("posts/1")).value
        let later = try await client.send(Self.get("posts/1")).value

        #expect(refreshed.headers["X-Rate"] == "9")
        #expect(refreshed.headers["X-New"] == "yes")
        #expect(refreshed.headers["Content-Length"] == "3")
        #expect(refreshed.body == Data("abc".utf8))
        // The update is stored: a later 304 without headers answers the updated fields.
        #expect(later.headers["X-Rate"] == "9")
    }

    @Test func theCallersOwnValidatorsAreSentAsTheyAreAndItGetsThe304() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: "one"),
            .status(304, headers: ["ETag": "\"mine\""]),
        ])
        let client = backend.with(.cache())

        _ = try await client.send(Self.get("posts/1")).value
        let answer = try await client.send(Self.get("posts/1", headers: ["If-None-Match": "\"mine\""])).value

        #expect(backend.requests[1].headers.values(for: "If-None-Match") == ["\"mine\""])
        #expect(answer.status == 304)
        #expect(answer.body.isEmpty)
    }

    @Test func aFailedRevalidationIsTheCallersFailureAndA404DropsTheEntry() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: "one"),
            .status(503),
            .status(404),
            .status(200, headers: ["ETag": "\"v2\""], body: "two"),
        ])
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(Self.get("posts/1")).value
        let unavailable = await client.send(Self.get("posts/1")).result
        #expect(unavailable.failure?.caseName == "serviceUnavailable")
        #expect(cache.count == 1)

        let gone = await client.send(Self.get("posts/1")).result
        #expect(gone.failure?.caseName == "notFound")
        #expect(cache.count == 0)

        _ = try await client.send(Self.get("posts/1")).value
        #expect(backend.requests[3].headers["If-None-Match"] == nil)
    }

    // MARK: - What is not stored

    enum Unstorable: String, CaseIterable, Sendable {
        case responseNoStore, requestNoStore, varyStar, noValidator, notA200

        var request: BackendRequest {
            self == .requestNoStore
                ? BackendRequest(path: "posts/1", headers: ["Cache-Control": "no-store"])
                : BackendRequest(path: "posts/1")
        }

        var reply: ScriptedBackend.Reply {
            switch self {
            case .responseNoStore:
                return .status(
                    200, headers: ["ETag": "\"v1\"", "Cache-Control": "private, no-store"], body: "x")
            case .requestNoStore: return .status(200, headers: ["ETag": "\"v1\""], body: "x")
            case .varyStar: return .status(200, headers: ["ETag": "\"v1\"", "Vary": "*"], body: "x")
            case .noValidator: return .status(200, headers: ["Cache-Control": "max-age=60"], body: "x")
            case .notA200: return .status(203, headers: ["ETag": "\"v1\""], body: "x")
            }
        }
    }

    @Test(arguments: Unstorable.allCases)
    func responsesThatMustNotOrNeedNotBeStoredAreNot(_ kind: Unstorable) async throws {
        let backend = ScriptedBackend([kind.reply, kind.reply])
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(kind.request).value
        _ = try await client.send(kind.request).value

        #expect(cache.count == 0)
        #expect(backend.requests[1].isConditional == false)
    }

    @Test func aNoStoreAnswerDropsWhatWasStored() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: "one"),
            .status(200, headers: ["ETag": "\"v2\"", "Cache-Control": "no-store"], body: "two"),
            .status(200),
        ])
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(Self.get("posts/1")).value
        _ = try await client.send(Self.get("posts/1")).value
        _ = try await client.send(Self.get("posts/1")).value

        #expect(cache.count == 0)
        #expect(backend.requests[2].isConditional == false)
    }

    @Test func headAndOptionsPassThroughUntouched() async throws {
        let backend = Self.taggingServer()
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(Self.get("posts/1")).value
        _ = try await client.send(BackendRequest(method: .head, path: "posts/1")).value
        _ = try await client.send(BackendRequest(method: .options, path: "posts/1")).value

        #expect(backend.requests[1].isConditional == false)
        #expect(backend.requests[2].isConditional == false)
        #expect(cache.count == 1)
    }

    // MARK: - Keys

    @Test func entriesAreKeptPerFullTargetWithTheQueryInOrder() async throws {
        let backend = ScriptedBackend { request in
            let target = request.path + "?" + QueryString.encode(request.query)
            let tag = "\"\(target)\""
            if request.headers["If-None-Match"] == tag { return .status(304) }
            return .status(200, headers: ["ETag": tag], body: target)
        }
        let cache = CacheMiddleware()
        let client = backend.with(cache)
        let targets: [[URLQueryItem]] = [
            [URLQueryItem(name: "_page", value: "1")],
            [URLQueryItem(name: "_page", value: "2")],
            [URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "b", value: "2")],
            [URLQueryItem(name: "b", value: "2"), URLQueryItem(name: "a", value: "1")],
        ]

        for query in targets { _ = try await client.send(Self.get("posts", query: query)).value }
        #expect(cache.count == 4)
        for query in targets {
            let answer = try await client.send(Self.get("posts", query: query)).value
            #expect(answer.body == Data(("posts?" + QueryString.encode(query)).utf8))
        }

        #expect(backend.requests.prefix(4).allSatisfy { !$0.isConditional })
        #expect(backend.requests.suffix(4).allSatisfy { $0.isConditional })
    }

    @Test func aResponseFetchedWithOneCredentialNeverAnswersAnother() async throws {
        let backend = ScriptedBackend { request in
            let user = request.headers["Authorization"] ?? "anonymous"
            if request.headers["If-None-Match"] == "\"same\"" { return .status(304) }
            return .status(200, headers: ["ETag": "\"same\""], body: "profile of \(user)")
        }
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(Self.get("me", headers: ["Authorization": "Bearer alice"])).value
        let bob = try await client.send(Self.get("me", headers: ["Authorization": "Bearer bob"])).value
        let alice = try await client.send(Self.get("me", headers: ["Authorization": "Bearer alice"])).value

        #expect(backend.requests[1].isConditional == false)
        #expect(bob.body == Data("profile of Bearer bob".utf8))
        #expect(backend.requests[2].isConditional)
        #expect(alice.body == Data("profile of Bearer alice".utf8))
        #expect(cache.count == 2)
    }

    @Test func aStoredAnswerIsUsedOnlyForTheSameValuesOfTheFieldsItVariesOn() async throws {
        let backend = ScriptedBackend { request in
            let language = request.headers["Accept-Language"] ?? "en"
            let tag = "\"\(language)\""
            if request.headers["If-None-Match"] == tag { return .status(304) }
            return .status(
                200, headers: ["ETag": tag, "Vary": "Accept-Language"], body: "hello in \(language)")
        }
        let client = backend.with(.cache())

        _ = try await client.send(Self.get("greeting", headers: ["Accept-Language": "en"])).value
        let french = try await client.send(Self.get("greeting", headers: ["Accept-Language": "fr"])).value
        let again = try await client.send(Self.get("greeting", headers: ["Accept-Language": "fr"])).value

        #expect(backend.requests[1].isConditional == false)
        #expect(french.body == Data("hello in fr".utf8))
        #expect(backend.requests[2].headers["If-None-Match"] == "\"fr\"")
        #expect(again.body == Data("hello in fr".utf8))
    }

    // MARK: - Bounds

    @Test func evictsTheLeastRecentlyUsedBeyondMaxEntries() async throws {
        let backend = Self.taggingServer()
        let cache = CacheMiddleware(maxEntries: 2)
        let client = backend.with(cache)

        for path in ["a", "b", "a", "c"] { _ = try await client.send(Self.get(path)).value }
        #expect(cache.count == 2)

        _ = try await client.send(Self.get("a")).value  // kept: used after b
        _ = try await client.send(Self.get("b")).value  // evicted by c

        let sent = backend.requests.suffix(2)
        #expect(sent.first?.headers["If-None-Match"] == "\"a\"")
        #expect(sent.last?.isConditional == false)
    }

    @Test func evictsTheLeastRecentlyUsedBeyondMaxBytesAndNeverStoresATooLargeBody() async throws {
        let body = String(repeating: "x", count: 1_000)
        let backend = ScriptedBackend { request in
            if request.path == "huge" {
                return .status(200, headers: ["ETag": "\"h\""], body: body + body + body)
            }
            let tag = "\"\(request.path)\""
            if request.headers["If-None-Match"] == tag { return .status(304) }
            return .status(200, headers: ["ETag": tag], body: body)
        }
        let cache = CacheMiddleware(maxEntries: 100, maxBytes: 2_500)
        let client = backend.with(cache)

        _ = try await client.send(Self.get("a")).value
        _ = try await client.send(Self.get("b")).value
        #expect(cache.count == 2)
        #expect(cache.byteCount >= 2_000 && cache.byteCount <= 2_500)

        _ = try await client.send(Self.get("c")).value
        #expect(cache.count == 2)
        _ = try await client.send(Self.get("a")).value
        #expect(backend.requests.last?.isConditional == false)  // a was the oldest

        let before = cache.byteCount
        _ = try await client.send(Self.get("huge")).value
        #expect(cache.count == 2)
        #expect(cache.byteCount == before)
        #expect(cache.byteCount <= cache.maxBytes)
    }

    @Test func aCacheOfNoEntriesStoresNothing() async throws {
        let backend = Self.taggingServer()
        let cache = CacheMiddleware(maxEntries: 0)
        let client = backend.with(cache)

        _ = try await client.send(Self.get("a")).value
        _ = try await client.send(Self.get("a")).value

        #expect(cache.count == 0)
        #expect(backend.requests.allSatisfy { !$0.isConditional })
    }

    @Test func removeAllForgetsEverything() async throws {
        let backend = Self.taggingServer()
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(Self.get("a")).value
        cache.removeAll()
        _ = try await client.send(Self.get("a")).value

        #expect(backend.requests[1].isConditional == false)
        #expect(cache.count == 1)
    }

    // MARK: - Writes

    @Test(arguments: [HTTPMethod.post, .put, .patch, .delete])
    func aSuccessfulWriteDropsItsPathAndItsCollection(method: HTTPMethod) async throws {
        let backend = Self.taggingServer()
        let cache = CacheMiddleware()
        let client = backend.with(cache)
        let reads = [
            Self.get("posts/1"), Self.get("posts", query: [URLQueryItem(name: "_page", value: "2")]),
            Self.get("posts/2"), Self.get("users/1"),
        ]
        for request in reads { _ = try await client.send(request).value }

        let path = method == .post ? "posts" : "posts/1"
        _ = try await client.send(BackendRequest(method: method, path: path, body: Data("{}".utf8))).value
        let sentBefore = backend.requests.count
        for request in reads { _ = try await client.send(request).value }

        let conditional = backend.requests.dropFirst(sentBefore).map(\.isConditional)
        if method == .post {
            // POST /posts: the collection goes, its members stay.
            #expect(conditional == [true, false, true, true])
        } else {
            #expect(conditional == [false, false, true, true])
        }
    }

    @Test(
        "an action through a custom endpoint (POST posts/7/publish) drops the record it is on and its collection"
    )
    func anActionDropsItsRecordAndItsCollection() async throws {
        let backend = Self.taggingServer()
        let client = backend.with(CacheMiddleware())
        let posts = CountedPostRepository(backend: client, coding: .default)
        let reads = [
            Self.get("posts/7"), Self.get("posts", query: [URLQueryItem(name: "_page", value: "2")]),
            Self.get("posts/8"), Self.get("users/1/posts"), Self.get("users/1"),
        ]
        for request in reads { _ = try await client.send(request).value }

        _ = try await posts.send(.post, posts.resource(for: 7).appending("publish")).value
        #expect(backend.requests.last?.path == "posts/7/publish")
        let sentBefore = backend.requests.count
        for request in reads { _ = try await client.send(request).value }

        // posts/7 and the posts listing are asked for afresh; the rest revalidate.
        let conditional = backend.requests.dropFirst(sentBefore).map(\.isConditional)
        #expect(conditional == [false, false, true, true, true])
    }

    @Test(
        "an action under a parent (POST users/1/posts/7/publish) drops the record and the nested listing, not the flat ones"
    )
    func aNestedActionDropsItsRecordAndItsNestedCollection() async throws {
        let backend = Self.taggingServer()
        let client = backend.with(CacheMiddleware())
        let posts = CountedPostRepository(backend: client, coding: .default).scoped(
            under: ["users", "1"], shallow: false)
        let reads = [
            Self.get("users/1/posts/7"), Self.get("users/1/posts"), Self.get("posts/7"), Self.get("posts"),
        ]
        for request in reads { _ = try await client.send(request).value }

        _ = try await posts.send(.post, posts.resource(for: 7).appending("publish")).value
        #expect(backend.requests.last?.path == "users/1/posts/7/publish")
        let sentBefore = backend.requests.count
        for request in reads { _ = try await client.send(request).value }

        let conditional = backend.requests.dropFirst(sentBefore).map(\.isConditional)
        #expect(conditional == [false, false, true, true])
    }

    @Test func aFailedWriteKeepsTheEntries() async throws {
        let backend = ScriptedBackend([.status(200, headers: ["ETag": "\"v1\""], body: "one"), .status(500)])
        let cache = CacheMiddleware()
        let client = backend.with(cache)

        _ = try await client.send(Self.get("posts/1")).value
        _ = await client.send(BackendRequest(method: .put, path: "posts/1")).result

        #expect(cache.count == 1)
    }

    @Test func conditionalWritesSendIfMatchWithAStrongETag() async throws {
        let backend = ScriptedBackend([.status(200, headers: ["ETag": "\"v7\""], body: "one"), .status(200)])
        let client = backend.with(.cache(conditionalWrites: true))

        _ = try await client.send(Self.get("posts/1")).value
        _ = try await client.send(BackendRequest(method: .put, path: "posts/1", body: Data("{}".utf8))).value

        #expect(backend.requests[1].headers["If-Match"] == "\"v7\"")
        #expect(backend.requests[1].headers["If-Unmodified-Since"] == nil)
    }

    @Test func conditionalWritesFallBackToIfUnmodifiedSinceForAWeakETag() async throws {
        let date = "Tue, 15 Nov 1994 12:45:26 GMT"
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "W/\"v7\"", "Last-Modified": date], body: "one"),
            .status(200),
        ])
        let client = backend.with(.cache(conditionalWrites: true))

        _ = try await client.send(Self.get("posts/1")).value
        _ = try await client.send(BackendRequest(method: .delete, path: "posts/1")).value

        #expect(backend.requests[1].headers["If-Match"] == nil)
        #expect(backend.requests[1].headers["If-Unmodified-Since"] == date)
    }

    @Test func writesStayUnconditionalByDefaultForPostsAndWhenTheCallerSetsItsOwn() async throws {
        let backend = ScriptedBackend { request in
            request.method == .get ? .status(200, headers: ["ETag": "\"v1\""], body: "one") : .status(200)
        }
        let plain = backend.with(.cache())
        let conditional = backend.with(.cache(conditionalWrites: true))

        _ = try await plain.send(Self.get("posts/1")).value
        _ = try await plain.send(BackendRequest(method: .patch, path: "posts/1")).value
        _ = try await conditional.send(Self.get("posts")).value
        _ = try await conditional.send(BackendRequest(method: .post, path: "posts")).value
        _ = try await conditional.send(Self.get("posts/1")).value
        _ = try await conditional.send(
            BackendRequest(method: .put, path: "posts/1", headers: ["If-Match": "*"])
        )
        .value

        let writes = backend.requests.filter { $0.method != .get }
        #expect(writes[0].headers["If-Match"] == nil)
        #expect(writes[1].headers["If-Match"] == nil)
        #expect(writes[2].headers.values(for: "If-Match") == ["*"])
    }

    @Test func aFailedPreconditionIsAClearErrorAndDropsTheStaleEntry() async throws {
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: "one"),
            .status(412, body: ""),
        ])
        let cache = CacheMiddleware(conditionalWrites: true)
        let client = backend.with(cache)

        _ = try await client.send(Self.get("posts/1")).value
        let error = try #require(
            await client.send(BackendRequest(method: .put, path: "posts/1", body: Data("{}".utf8))).result
                .failure)

        #expect(error.isPreconditionFailed)
        #expect(error.statusCode == 412)
        #expect(error.caseName == "clientError")
        #expect(
            error.localizedDescription == "Precondition failed (412): the resource changed since it was read")
        #expect(cache.count == 0)
    }

    @Test func preconditionErrorsAreToldApart() {
        let failed = ServiceError(response: BackendResponse(status: 412), for: BackendRequest(path: "x"))
        let required = ServiceError(
            response: BackendResponse(status: 428, body: Data(#"{"detail":"send If-Match"}"#.utf8)),
            for: BackendRequest(path: "x"))
        let other = ServiceError(response: BackendResponse(status: 422), for: BackendRequest(path: "x"))

        #expect(failed?.isPreconditionFailed == true)
        #expect(failed?.isPreconditionRequired == false)
        #expect(required?.isPreconditionRequired == true)
        #expect(required?.errorDescription?.hasPrefix("Precondition required (428)") == true)
        #expect(required?.errorDescription?.hasSuffix(": send If-Match") == true)
        #expect(other?.isPreconditionFailed == false)
        #expect(ServiceError.notFound(FailureResponse(status: 412)).isPreconditionFailed == false)
    }

    // MARK: - Repositories

    @Test func aRepositoryDecodesA304OnceFromTheStoredBytesAndTheServerSendsNoBody() async throws {
        let counter = DecodeCounter()
        let tap = NetworkTap()
        let backend = ScriptedBackend([
            .status(200, headers: ["ETag": "\"v1\""], body: #"{"id":1,"title":"Hello"}"#),
            .status(304, headers: ["ETag": "\"v1\""]),
        ])
        let posts = CountedPostRepository(backend: backend.with(.cache(), tap), coding: counter.coding)

        let first = try await posts.findByID(1).value
        #expect(counter.count == 1)
        let second = try await posts.findByID(1).value

        #expect(counter.count == 2)  // once per call, from the stored bytes
        #expect(second == first)
        #expect(tap.responses.map(\.status) == [200, 304])
        #expect(tap.responses.map(\.body.count) == [24, 0])
    }

    @Test func updateIfMatchSendsTheTagAndAConflictIsPreconditionFailed() async throws {
        let backend = ScriptedBackend { request in
            request.headers["If-Match"] == "\"v1\""
                ? .status(200, body: #"{"id":1,"title":"New"}"#) : .status(412)
        }
        let posts = CountedPostRepository(backend: backend, coding: .default)

        let saved = try await posts.update(CountedPost(id: 1, title: "New"), ifMatch: "\"v1\"").value
        let refused = await posts.update(CountedPost(id: 1, title: "Newer"), ifMatch: "\"v0\"").result

        #expect(saved.title == "New")
        #expect(backend.requests[0].method == .put)
        #expect(backend.requests[0].path == "posts/1")
        #expect(refused.failure?.isPreconditionFailed == true)
    }

    // MARK: - Threads

    @Test func concurrentRequestsKeepTheStoreConsistent() async throws {
        let backend = Self.taggingServer()
        let cache = CacheMiddleware(maxEntries: 4)
        let client = backend.with(cache)
        let paths = (0..<8).map { "items/\($0)" }

        let mismatches = await withTaskGroup(of: Int.self) { group in
            for round in 0..<200 {
                let path = paths[round % paths.count]
                group.addTask {
                    let request =
                        round % 10 == 9
                        ? BackendRequest(method: .put, path: path) : BackendRequest(path: path)
                    guard let answer = try? await client.send(request).value else { return 1 }
                    if request.method == .put { return answer.status == 200 ? 0 : 1 }
                    return answer.status == 200 && answer.body == Data("body of \(path)".utf8) ? 0 : 1
                }
            }
            return await group.reduce(0, +)
        }

        #expect(mismatches == 0)
        #expect(cache.count <= 4)
        #expect(backend.requests.count == 200)
    }
}

@Suite("LRUStore")
struct LRUStoreTests {
    @Test func readingAnEntryMakesItTheMostRecent() {
        var store = LRUStore<String, Int>(maxCount: 3, maxCost: 100)
        store.insert(1, cost: 1, for: "a")
        store.insert(2, cost: 1, for: "b")
        store.insert(3, cost: 1, for: "c")

        #expect(store.value(for: "a") == 1)
        #expect(store.keysByRecency == ["a", "c", "b"])
        #expect(store.insert(4, cost: 1, for: "d") == 1)
        #expect(store.peek("b") == nil)
        #expect(store.keysByRecency == ["d", "a", "c"])
    }

    @Test func theCostBoundEvictsAsManyAsNeeded() {
        var store = LRUStore<String, Int>(maxCount: 10, maxCost: 10)
        for (index, key) in ["a", "b", "c", "d"].enumerated() { store.insert(index, cost: 3, for: key) }
        #expect(store.keysByRecency == ["d", "c", "b"])
        #expect(store.totalCost == 9)

        #expect(store.insert(9, cost: 8, for: "e") == 3)
        #expect(store.keysByRecency == ["e"])
        #expect(store.insert(0, cost: 11, for: "e") == 0)
        #expect(store.count == 0)
        #expect(store.totalCost == 0)
    }

    @Test func matchesASimpleModelOverAPseudoRandomRun() {
        var store = LRUStore<Int, Int>(maxCount: 5, maxCost: 40)
        var model: [(key: Int, value: Int, cost: Int)] = []  // most recent first
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        for step in 0..<2_000 {
            let key = next(9)
            switch next(4) {
            case 0, 1:
                let cost = next(15)
                store.insert(step, cost: cost, for: key)
                model.removeAll { $0.key == key }
                model.insert((key, step, cost), at: 0)
                while model.count > 5 || model.reduce(0, { $0 + $1.cost }) > 40 { model.removeLast() }
            case 2:
                let expected = model.firstIndex { $0.key == key }
                #expect(store.value(for: key) == expected.map { model[$0].value })
                if let expected { model.insert(model.remove(at: expected), at: 0) }
            default:
                store.removeValue(for: key)
                model.removeAll { $0.key == key }
            }
            #expect(store.keysByRecency == model.map(\.key))
            #expect(store.totalCost == model.reduce(0) { $0 + $1.cost })
        }
    }

    @Test func removingByPredicateKeepsTheRestInOrder() {
        var store = LRUStore<String, Int>(maxCount: 10, maxCost: 100)
        for key in ["x1", "y1", "x2", "y2"] { store.insert(0, cost: 2, for: key) }

        #expect(store.removeAll { $0.hasPrefix("x") } == 2)
        #expect(store.keysByRecency == ["y2", "y1"])
        #expect(store.totalCost == 4)
        store.insert(1, cost: 1, for: "z")
        #expect(store.keysByRecency == ["z", "y2", "y1"])
    }
}
