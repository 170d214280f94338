import Depot
import DepotInMemory
import Foundation
import Testing

@testable import DepotOffline

/// Where a local id sits in a request's path, and how it is replaced once the server named
/// the record: every segment up to the record's id, never what an action names past it, and
/// in place in a path that says more than its resource.
@Suite("Local ids in a request's path")
struct LocalIDPathTests {
    /// Post `-1` is `101` on the server.
    private let ids: LocalIDs = {
        var ids = LocalIDs()
        ids.map(.int(-1), to: .int(101))
        return ids
    }()

    private func rewritten(_ request: BackendRequest) -> String {
        ids.rewriting(request).path
    }

    @Test("a parent record created offline, however the repository names its collection")
    func parentsCreatedOffline() {
        // A repository whose collectionPath names its parent (`["users", "-1", "posts"]`).
        let record = RequestResource.record(at: ["users", "-1", "posts", "7"], parentCount: 2)
        #expect(rewritten(BackendRequest(method: .patch, resource: record)) == "users/101/posts/7")
        // The same path with the parent count json-server's convention cannot see (a prefix).
        let prefixed = RequestResource.collection(atPath: ["v1", "users", "-1", "posts"])
        #expect(rewritten(BackendRequest(method: .post, resource: prefixed)) == "v1/users/101/posts")
        let scoped = RequestResource.collection(["comments"], under: ["posts", "-1"])
        #expect(rewritten(BackendRequest(method: .post, resource: scoped)) == "posts/101/comments")
    }

    @Test("an action on a record created offline: the record's id, not the action")
    func actions() {
        let publish = RequestResource.record("-1", in: ["posts"]).appending("publish")
        let request = ids.rewriting(BackendRequest(method: .post, resource: publish))
        #expect(request.path == "posts/101/publish")
        #expect(request.resource == RequestResource.record("101", in: ["posts"]).appending("publish"))
    }

    @Test("a path that says more than its resource is rewritten in place, its query kept")
    func barePaths() {
        #expect(rewritten(BackendRequest(method: .patch, path: "/posts/-1")) == "/posts/101")
        #expect(
            rewritten(BackendRequest(method: .patch, path: "http://localhost/api/posts/-1?x=-1"))
                == "http://localhost/api/posts/101?x=-1")
        #expect(rewritten(BackendRequest(method: .patch, path: "posts/-1")) == "posts/101")
        // Nothing mapped in it: the request as it was.
        #expect(rewritten(BackendRequest(method: .patch, path: "/posts/-2")) == "/posts/-2")
    }

    @Test("a create sent from a bare path gets a local id, whatever json-server's convention reads it as")
    func barePathCreates() async throws {
        let folder = try TemporaryFolder()
        let server = InMemoryBackend(collections: ["posts"])
        let backend = server.with(.offline(try OfflineStore(at: folder.file("depot.sqlite"))))
        server.failAll(with: .noConnection)
        // `api/posts` reads as record `posts` of `api`: no action, so a create all the same.
        let created = await backend.send(
            BackendRequest(method: .post, path: "api/posts", body: Data(#"{"title": "A"}"#.utf8))
        ).result
        guard case .failure(.queued(let write)) = created else {
            Issue.record("the create was not queued: \(created)")
            return
        }
        #expect(write.localID == .int(-1))
    }
}
