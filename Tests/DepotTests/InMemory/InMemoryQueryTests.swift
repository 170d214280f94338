import Depot
import DepotInMemory
import Foundation
import Testing

/// json-server 0.17's query operators, one row per URL, against the generated
/// JSONPlaceholder-shaped data: post `id` has `userId` `(id - 1) / 10 + 1`, title
/// `post <id>` (+ ` Lorem` for multiples of 25), `views` `(id * 37) % 101`; user `id`
/// lives in `cities[(id - 1) % 5]`; comment `id` belongs to post `(id - 1) / 3 + 1`.
@Suite("InMemoryBackend queries as json-server 0.17 answers them")
struct InMemoryQueryTests {
    @Test(
        "each operator, and operators combined, on /posts",
        arguments: [
            // _gte and _lte compare numbers as numbers…
            ([("views_gte", "50"), ("views_lte", "52")], [15, 56, 86]),
            ([("id_gte", "98")], [98, 99, 100]),
            ([("id_lte", "2.5")], [1, 2]),
            // …text as text, and text that is not a number never compares with a number.
            ([("title_gte", "post 95")], [95, 96, 97, 98, 99]),
            ([("id_gte", "abc")], []),
            // _ne: repeated, the item differs from every value.
            ([("userId", "1"), ("views_ne", "37"), ("views_ne", "74")], Array(3...10)),
            // _like: a case-insensitive regular expression, found anywhere; repeated, any.
            ([("title_like", "LOREM")], [25, 50, 75, 100]),
            ([("title_like", "^post [0-9]$")], Array(1...9)),
            ([("title_like", "^post 9[89]$"), ("title_like", "lorem")], [25, 50, 75, 98, 99, 100]),
            // Equality repeated is an OR; a name sent as `id[]` (jQuery, Axios) is `id`.
            ([("userId", "3"), ("userId", "5")], Array(21...30) + Array(41...50)),
            ([("id[]", "3"), ("id[]", "1")], [1, 3]),
            // A plain filter on a field no record has is dropped; a suffixed one is not.
            ([("nope", "1"), ("id_lte", "2")], [1, 2]),
            ([("nope_gte", "1")], []),
            // q: any value, any case, numbers included.
            ([("q", "post 10")], [10, 100]),
            ([("q", "LOREM"), ("id_ne", "50")], [25, 75, 100]),
            // Everything together: filter, then sort, then slice.
            (
                [("userId", "2"), ("views_gte", "50"), ("_sort", "views"), ("_order", "desc")],
                [19, 16, 13, 18, 15]
            ),
            ([("q", "lorem"), ("_sort", "id"), ("_order", "desc"), ("_limit", "2")], [100, 75]),
            ([("_sort", "userId,views"), ("_order", "desc,asc"), ("_limit", "3")], [93, 96, 99]),
            (
                [("userId", "2"), ("_sort", "views"), ("_order", "DESC"), ("_start", "1"), ("_end", "3")],
                [16, 13]
            ),
        ] as [([(String, String)], [Int])])
    func postOperators(query: [(String, String)], expected: [Int]) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, "posts", query: query)
        #expect(answer.memoryIDs == expected)
    }

    @Test(
        "dotted keys reach into nested objects for filters, sorting and full text",
        arguments: [
            ([("address.city", "Gwenborough")], [1, 6]),
            ([("address.city_like", "^s")], [4, 9]),
            ([("address.zipcode_ne", "00001")], Array(2...10)),
            ([("address.city_gte", "S")], [2, 4, 7, 9]),
            ([("q", "ELVIS")], [4, 9]),
            ([("_sort", "address.city,id"), ("_order", "desc,desc")], [7, 2, 9, 4, 10, 5, 8, 3, 6, 1]),
        ] as [([(String, String)], [Int])])
    func deepKeys(query: [(String, String)], expected: [Int]) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, "users", query: query)
        #expect(answer.memoryIDs == expected)
    }

    @Test(
        "GET /parent/:id/children is the children filtered by <parent>Id, with every other parameter",
        arguments: [
            ("users/1/posts", [], Array(1...10)),
            // The route's userId replaces the query's; other userId operators still apply.
            ("users/1/posts", [("userId", "2")], Array(1...10)),
            ("users/1/posts", [("userId_ne", "1")], []),
            ("users/2/posts", [("views_gte", "50")], [13, 15, 16, 18, 19]),
            ("users/2/posts", [("_sort", "views"), ("_order", "desc"), ("_limit", "3")], [19, 16, 13]),
            ("users/2/posts", [("q", "post 15")], [15]),
            ("users/1/posts", [("_start", "8"), ("_end", "20")], [9, 10]),
            ("posts/4/comments", [("id_ne", "11")], [10, 12]),
            ("users/99/posts", [], []),
            // Comments have no userId at all, so json-server drops the route's filter.
            ("users/1/comments", [("id_lte", "3")], [1, 2, 3]),
        ] as [(String, [(String, String)], [Int])])
    func nestedListing(path: String, query: [(String, String)], expected: [Int]) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, path, query: query)
        #expect(answer.memoryIDs == expected)
    }

    @Test("a nested page counts the parent's children and links back to the nested URL")
    func nestedPage() async throws {
        let answer = await memorySend(
            try MemoryFixture.backend(), .get, "users/3/posts",
            query: [("_page", "2"), ("_limit", "3"), ("_sort", "id"), ("_order", "desc")])
        let response = try #require(answer.memoryResponse)
        #expect(answer.memoryIDs == [27, 26, 25])
        #expect(response.headers["X-Total-Count"] == "10")
        let links = try LinkHeader.parse(response.headers["Link"] ?? "")
        #expect(links.map(\.rel) == ["first", "prev", "next", "last"])
        #expect(
            links[rel: "last"]?.href == "http://localhost/users/3/posts?_page=4&_limit=3&_sort=id&_order=desc"
        )
    }

    @Test(
        "_page reads _limit as json-server does: missing, 0 or not a number is 10, negative slices from the end",
        arguments: [
            ([("_page", "2"), ("_limit", "abc")], Array(11...20), "100", ["first", "prev", "next", "last"]),
            ([("_page", "-3")], Array(1...10), "100", ["first", "next", "last"]),
            ([("_page", "1"), ("_limit", "-5")], Array(1...95), "100", ["first", "next", "last"]),
        ] as [([(String, String)], [Int], String, [String])])
    func pageLimits(query: [(String, String)], expected: [Int], total: String, rels: [String]) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, "posts", query: query)
        let response = try #require(answer.memoryResponse)
        #expect(answer.memoryIDs == expected)
        #expect(response.headers["X-Total-Count"] == total)
        #expect(try LinkHeader.parse(response.headers["Link"] ?? "").map(\.rel) == rels)
    }

    @Test("_embed and _expand on a filtered page, on a nested listing and on one record")
    func embedAndExpand() async throws {
        let backend = try MemoryFixture.backend()
        let page = try #require(
            await memorySend(
                backend, .get, "posts",
                query: [
                    ("userId", "2"), ("_embed", "comments"), ("_expand", "user"), ("_page", "1"),
                    ("_limit", "2"),
                ]
            ).memoryJSON?.arrayValue)
        #expect(page.map { $0["id"] } == [11, 12])
        #expect(page[0]["comments"]?.arrayValue?.compactMap { $0["id"]?.intValue } == [31, 32, 33])
        #expect(page[1]["user"]?["name"] == "User 2")

        let nested = try #require(
            await memorySend(
                backend, .get, "users/1/posts",
                query: [("_embed", "comments"), ("_sort", "id"), ("_order", "desc")]
            ).memoryJSON?.arrayValue)
        #expect(nested.count == 10)
        #expect(nested.first?["comments"]?.arrayValue?.compactMap { $0["postId"]?.intValue } == [10, 10, 10])

        let user = await memorySend(backend, .get, "users/1", query: [("_embed", "posts")]).memoryJSON
        #expect(user?["posts"]?.arrayValue?.compactMap { $0["id"]?.intValue } == Array(1...10))
        let comment = await memorySend(backend, .get, "comments/4", query: [("_expand", "post")]).memoryJSON
        #expect(comment?["post"]?["title"] == "post 2")
    }

    @Test("_embed matches ids strictly (postId \"1\" is not post 1), while a nested route compares text")
    func embedIsStrict() async throws {
        let backend = try InMemoryBackend(
            database: Data(
                #"{"posts": [{"id": 1}], "comments": [{"id": 1, "postId": 1}, {"id": 2, "postId": "1"}]}"#
                    .utf8))
        let post = await memorySend(backend, .get, "posts/1", query: [("_embed", "comments")]).memoryJSON
        #expect(post?["comments"]?.arrayValue?.compactMap { $0["id"]?.intValue } == [1])
        #expect(await memorySend(backend, .get, "posts/1/comments").memoryIDs == [1, 2])
    }

    @Test("_expand of a parent that does not exist removes a field of that name, as json-server does")
    func expandMissingParent() async throws {
        let backend = try InMemoryBackend(
            database: Data(
                #"{"posts": [{"id": 1, "userId": 9, "user": "stale"}, {"id": 2, "userId": 1}], "users": [{"id": 1, "name": "Ada"}]}"#
                    .utf8))
        let posts = await memorySend(backend, .get, "posts", query: [("_expand", "user")]).memoryJSON
        #expect(
            posts == [["id": 1, "userId": 9], ["id": 2, "userId": 1, "user": ["id": 1, "name": "Ada"]]])
        let post = await memorySend(backend, .get, "posts/1", query: [("_expand", "user")]).memoryJSON
        #expect(post == ["id": 1, "userId": 9])
    }

    @Test("a post through the nested route is found by the parent's _embed and by the nested listing")
    func nestedCreateThenEmbed() async throws {
        let backend = try MemoryFixture.backend()
        let created = await memorySend(
            backend, .post, "users/2/posts", body: #"{"title": "new", "userId": 5}"#)
        #expect(created.memoryJSON?["userId"] == 2)
        let user = await memorySend(backend, .get, "users/2", query: [("_embed", "posts")]).memoryJSON
        #expect(user?["posts"]?.arrayValue?.last?["title"] == "new")
        #expect(
            await memorySend(backend, .get, "users/2/posts", query: [("title", "new")]).memoryIDs == [101])
    }

    @Test("a nested route to a singular object answers it as /profile does")
    func nestedSingular() async throws {
        let backend = try MemoryFixture.backend()
        #expect(
            await memorySend(backend, .get, "users/1/profile").memoryJSON == ["name": "Ada", "theme": "dark"])
        let posted = await memorySend(backend, .post, "users/3/profile", body: #"{"name": "Grace"}"#)
        #expect(posted.memoryResponse?.status == 201)
        #expect(backend.object("profile") == ["name": "Grace", "userId": 3])
    }
}
