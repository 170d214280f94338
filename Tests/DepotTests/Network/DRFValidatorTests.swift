import Depot
import DepotBackendConformance
import Foundation
import Testing

/// The DRF app's validators over real HTTP (RFC 9110 §8.8.3, §13.1.1): one record's `GET`,
/// `PUT` and `PATCH` answers carry a strong `ETag` (the SHA-1 of its JSON, quoted), and a
/// `PUT`, `PATCH` or `DELETE` whose `If-Match` names neither `*` nor the current tag fails
/// with `412`, which ``ServiceError/isPreconditionFailed`` reads, and changes nothing.
///
/// Every test works in a private space (`LiveServer.drfSpace()`) on a post it creates, so
/// no other test sees its writes, and no other test's writes change its tags.
@Suite(.liveServers) struct DRFValidatorTests {
    /// A post repository on a fresh private space.
    private func posts() throws -> PostRepository {
        PostRepository(backend: URLSessionBackend(baseURL: try LiveServer.drfSpace()))
    }

    /// Creates a post of the test's own.
    private func created(in posts: PostRepository, title: String = "Tagged") async throws -> Post {
        try await posts.create(NewPost(userId: 2, title: title, body: "Has an ETag.")).value
    }

    /// `GET /posts/{id}`: the post and its `ETag`.
    private func read(_ id: Int, in posts: PostRepository) async throws -> (post: Post, tag: String) {
        let response = try await posts.send(.get, posts.segments(for: id)).value
        let tag = try #require(response.headers["ETag"], "GET /posts/\(id) has no ETag")
        return (try posts.coding.decode(Post.self, from: response.body), tag)
    }

    /// Whether `tag` is a strong entity-tag of the app's form: `"` + 40 hex digits + `"`.
    private func isStrongSHA1Tag(_ tag: String) -> Bool {
        guard !tag.hasPrefix("W/"), tag.count == 42, tag.hasPrefix("\""), tag.hasSuffix("\"") else {
            return false
        }
        return tag.dropFirst().dropLast().allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    @Test func aRecordHasAStrongETagThatOnlyItsContentChanges() async throws {
        let posts = try posts()
        let first = try await read(1, in: posts)
        #expect(isStrongSHA1Tag(first.tag), "\(first.tag)")
        let again = try await read(1, in: posts)
        #expect(again.tag == first.tag)
        #expect(again.post == first.post)
        // Another record, another tag; the same record in another space, the same tag.
        #expect(try await read(2, in: posts).tag != first.tag)
        #expect(try await read(1, in: self.posts()).tag == first.tag)
    }

    @Test func listingsAndCreatesCarryNoETag() async throws {
        let posts = try posts()
        let listing = try await posts.send(.get, ["posts"], query: ["userId": 1]).value
        #expect(listing.headers["ETag"] == nil)
        let page = try await posts.send(.get, ["posts"], query: ["_page": 1]).value
        #expect(page.headers["ETag"] == nil)
        let create = try await posts.send(
            .post, ["posts"], body: .json(NewPost(userId: 1, title: "New", body: "No tag."))
        ).value
        #expect(create.status == 201)
        #expect(create.headers["ETag"] == nil)
    }

    @Test func aPutWithTheCurrentTagSucceedsAndAnswersTheTagOfTheNewRecord() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let before = try await read(post.id, in: posts)
        #expect(before.post == post)

        var edited = post
        edited.title = "Edited under If-Match"
        let response = try await posts.send(
            .put, posts.segments(for: post.id), body: .json(edited), headers: ["If-Match": before.tag]
        ).value
        #expect(response.status == 200)
        #expect(try posts.coding.decode(Post.self, from: response.body) == edited)
        let tag = try #require(response.headers["ETag"])
        #expect(isStrongSHA1Tag(tag), "\(tag)")
        #expect(tag != before.tag)

        let after = try await read(post.id, in: posts)
        #expect(after.post == edited)
        #expect(after.tag == tag)

        // The new tag is current: the repository's conditional update passes with it.
        edited.body = "Edited again."
        #expect(try await posts.update(edited, ifMatch: tag).value == edited)
        #expect(try await read(post.id, in: posts).tag != tag)
    }

    @Test func aPatchWithTheCurrentTagAnswersTheTagOfTheRecordAfterTheWrite() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let before = try await read(post.id, in: posts)
        let response = try await posts.send(
            .patch, posts.segments(for: post.id), body: .json(["body": "Patched."]),
            headers: ["If-Match": before.tag]
        ).value
        #expect(response.status == 200)
        let tag = try #require(response.headers["ETag"])
        #expect(tag != before.tag)

        let after = try await read(post.id, in: posts)
        #expect(after.post.body == "Patched.")
        #expect(after.post.title == post.title)
        #expect(after.tag == tag)
    }

    @Test func ifMatchStarAndAListHoldingTheCurrentTagMatch() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let star = try await posts.send(
            .patch, posts.segments(for: post.id), body: .json(["title": "Any version"]),
            headers: ["If-Match": "*"]
        ).value
        #expect(star.status == 200)
        let current = try #require(star.headers["ETag"])
        let listed = try await posts.send(
            .patch, posts.segments(for: post.id), body: .json(["title": "One of these"]),
            headers: ["If-Match": #""0000000000000000000000000000000000000000", \#(current)"#]
        ).value
        #expect(listed.status == 200)
        #expect(try await read(post.id, in: posts).post.title == "One of these")
    }

    @Test func aPutWithAStaleTagFailsWithPreconditionFailedAndChangesNothing() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let seen = try await read(post.id, in: posts)
        // Someone else writes meanwhile (no If-Match): the tag the user read is stale.
        let theirs = try await posts.patch(post.id, with: ["title": "Their title"]).value
        let current = try await read(post.id, in: posts)
        #expect(current.tag != seen.tag)

        var mine = post
        mine.body = "My body"
        let error = try #require(await posts.update(mine, ifMatch: seen.tag).result.failure)
        #expect(error.isPreconditionFailed, "\(error)")
        #expect(error.statusCode == 412)
        #expect(error.message?.hasPrefix("The post changed since it was read") == true, "\(error)")

        let after = try await read(post.id, in: posts)
        #expect(after.post == theirs)
        #expect(after.tag == current.tag)
    }

    @Test func aPatchWithAStaleTagFailsWithPreconditionFailedAndChangesNothing() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let seen = try await read(post.id, in: posts)
        let theirs = try await posts.patch(post.id, with: ["body": "Their body"]).value
        let current = try await read(post.id, in: posts)

        let result = await posts.send(
            .patch, posts.segments(for: post.id), body: .json(["title": "My title"]),
            headers: ["If-Match": seen.tag]
        ).result
        let error = try #require(result.failure)
        #expect(error.isPreconditionFailed, "\(error)")

        let after = try await read(post.id, in: posts)
        #expect(after.post == theirs)
        #expect(after.tag == current.tag)
    }

    @Test func aDeleteWithAStaleTagFailsWithPreconditionFailedAndKeepsTheRecord() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let seen = try await read(post.id, in: posts)
        _ = try await posts.patch(post.id, with: ["title": "Changed before the delete"]).value
        let current = try await read(post.id, in: posts)

        let stale = await posts.send(.delete, posts.segments(for: post.id), headers: ["If-Match": seen.tag])
            .result
        let error = try #require(stale.failure)
        #expect(error.isPreconditionFailed, "\(error)")
        let after = try await read(post.id, in: posts)
        #expect(after.post == current.post)
        #expect(after.tag == current.tag)

        // With the current tag the delete goes through.
        let deleted = try await posts.send(
            .delete, posts.segments(for: post.id), headers: ["If-Match": current.tag]
        ).value
        #expect(deleted.status == 200)
        #expect(deleted.headers["ETag"] == nil)
        #expect(await posts.findByID(post.id).result.failure?.caseName == "notFound")
    }

    @Test func aWeakTagNeverMatches() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let current = try await read(post.id, in: posts)
        var edited = post
        edited.title = "Weakly tagged"
        let error = try #require(await posts.update(edited, ifMatch: "W/" + current.tag).result.failure)
        #expect(error.isPreconditionFailed, "\(error)")
        #expect(try await read(post.id, in: posts) == current)
    }

    @Test func aMissingRecordIsNotFoundWhateverIfMatchSays() async throws {
        let posts = try posts()
        let ghost = Post(id: 9999, userId: 1, title: "Ghost", body: "Never stored.")
        for tag in ["*", #""0000000000000000000000000000000000000000""#] {
            let put = await posts.update(ghost, ifMatch: tag).result
            #expect(put.failure?.caseName == "notFound", "If-Match: \(tag)")
            let delete = await posts.send(.delete, posts.segments(for: 9999), headers: ["If-Match": tag])
                .result
            #expect(delete.failure?.caseName == "notFound", "If-Match: \(tag)")
        }
        #expect(await posts.findByID(9999).result.failure?.caseName == "notFound")
    }

    @Test func aReplayedWriteAnswersItsETagAgain() async throws {
        let posts = try posts()
        let post = try await created(in: posts)
        let before = try await read(post.id, in: posts)
        let headers: HTTPHeaders = ["If-Match": before.tag, "Idempotency-Key": UUID().uuidString]
        let patch = { () async throws -> BackendResponse in
            try await posts.send(
                .patch, posts.segments(for: post.id), body: .json(["title": "Once"]), headers: headers
            ).value
        }
        let first = try await patch()
        #expect(first.headers["Idempotent-Replayed"] == nil)
        let tag = try #require(first.headers["ETag"])
        // The same key and body again: the stored answer, its tag included, although the
        // If-Match it carries is stale now; nothing is written twice.
        let second = try await patch()
        #expect(second.headers["Idempotent-Replayed"] == "true")
        #expect(second.headers["ETag"] == tag)
        #expect(second.body == first.body)
        #expect(try await read(post.id, in: posts).tag == tag)
    }
}
