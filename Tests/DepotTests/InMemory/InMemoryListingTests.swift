import Depot
import DepotInMemory
import Foundation
import Testing

@Suite("InMemoryBackend listings")
struct InMemoryListingTests {
    @Test(
        "filters, full text and their combinations select what json-server selects",
        arguments: [
            ([("userId", "1")], Array(1...10)),
            ([("userId", "1"), ("userId", "3")], Array(1...10) + Array(21...30)),
            ([("id", "7")], [7]),
            ([("id_gte", "95")], Array(95...100)),
            ([("id_lte", "3")], [1, 2, 3]),
            ([("id_gte", "5"), ("id_lte", "7")], [5, 6, 7]),
            ([("views_gte", "99")], [30, 60]),
            ([("views_lte", "2")], [41, 71]),
            ([("userId", "1"), ("id_ne", "1"), ("id_ne", "2")], Array(3...10)),
            ([("title_like", "^POST 1.$")], Array(10...19)),
            ([("title_like", "lorem$")], [25, 50, 75, 100]),
            ([("title_like", "^post 2"), ("title_like", "^post 3")], [2, 3] + Array(20...39)),
            ([("q", "LOREM")], [25, 50, 75, 100]),
            ([("q", "body of post 7")], [7] + Array(70...79)),
            ([("q", "")], Array(1...100)),
            ([("nope", "1")], Array(1...100)),
            ([("userId", "2"), ("nope", "x")], Array(11...20)),
            ([("userId", "2"), ("q", "post 15")], [15]),
            ([("callback", "f"), ("_", "123"), ("userId", "10")], Array(91...100)),
        ] as [([(String, String)], [Int])])
    func filters(query: [(String, String)], expected: [Int]) async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .get, "posts", query: query)
        #expect(answer.memoryIDs == expected)
        #expect(answer.memoryResponse?.headers["X-Total-Count"] == nil)
    }

    @Test("a filter compares with the field's text, and reads dotted paths into nested objects")
    func textAndPaths() async throws {
        let backend = try InMemoryBackend(
            database: Data(
                #"{"items": [{"id": 1, "on": true, "tags": ["a", "b"], "author": {"name": "Ada"}}, {"id": "2", "on": false, "author": {"name": "Bob"}}, {"id": 3, "on": null}]}"#
                    .utf8))
        let cases: [([(String, String)], [JSONValue])] = [
            ([("on", "true")], [1]),
            ([("on", "false")], ["2"]),
            ([("id", "2")], ["2"]),
            ([("tags", "a,b")], [1]),
            ([("author.name", "Bob")], ["2"]),
            ([("author.name_like", "^a")], [1]),
            ([("tags.1", "b")], [1]),
            ([("on_ne", "true")], ["2"]),  // null never passes a filter, even _ne
            ([("q", "bo")], ["2"]),  // full text reaches nested objects
        ]
        for (query, expected) in cases {
            let ids = await memorySend(backend, .get, "items", query: query).memoryJSON?.arrayValue?
                .compactMap { $0["id"] }
            #expect(ids == expected, "\(query)")
        }
    }

    @Test("a _like that is not a regular expression is a 400 naming it")
    func invalidLike() async throws {
        let error = await memorySend(try MemoryFixture.backend(), .get, "posts", query: [("title_like", "(")])
            .memoryError
        #expect(error?.statusCode == 400)
        #expect(error?.message?.contains("title_like") == true)
    }

    @Test(
        "_sort and _order as lodash orders: null, then missing fields, last ascending and first descending",
        arguments: [
            ([("_sort", "price")], [2, 1, 3, 5, 4]),
            ([("_sort", "price"), ("_order", "desc")], [4, 5, 3, 1, 2]),
            ([("_sort", "title")], [3, 2, 4, 5, 1]),
            ([("_sort", "title,price"), ("_order", "asc,desc")], [3, 4, 5, 2, 1]),
            ([("_sort", "title,id"), ("_order", "desc,desc")], [1, 5, 4, 2, 3]),
            ([("_sort", "meta.rank")], [4, 1, 2, 3, 5]),
            ([("_sort", "nothing")], [1, 2, 3, 4, 5]),
        ] as [([(String, String)], [Int])])
    func sorting(query: [(String, String)], expected: [Int]) async throws {
        let backend = try InMemoryBackend(
            database: Data(
                #"{"books": [{"id": 1, "title": "b", "price": 10, "meta": {"rank": 2}}, {"id": 2, "title": "a", "price": 9.5, "meta": {"rank": 3}}, {"id": 3, "title": "C", "price": 100}, {"id": 4, "title": "a", "meta": {"rank": 1}}, {"id": 5, "title": "a", "price": null}]}"#
                    .utf8))
        #expect(await memorySend(backend, .get, "books", query: query).memoryIDs == expected)
    }

    @Test("the order of operations is json-server's: filter, full text, sort, then page")
    func orderOfOperations() async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(
            backend, .get, "posts",
            query: [("_page", "2"), ("_limit", "3"), ("userId", "2"), ("_sort", "views"), ("q", "post")])
        #expect(answer.memoryIDs == [20, 12, 15])
        #expect(answer.memoryResponse?.headers["X-Total-Count"] == "10")
        let top = await memorySend(
            backend, .get, "posts", query: [("_sort", "views"), ("_order", "desc"), ("_limit", "5")])
        #expect(top.memoryIDs == [30, 60, 90, 19, 49])
    }

    @Test(
        "_page and _limit answer the page with X-Total-Count and a Link header",
        arguments: [
            (
                [("_page", "2"), ("_limit", "10")], Array(11...20),
                #"<http://localhost/posts?_page=1&_limit=10>; rel="first", <http://localhost/posts?_page=1&_limit=10>; rel="prev", <http://localhost/posts?_page=3&_limit=10>; rel="next", <http://localhost/posts?_page=10&_limit=10>; rel="last""#
            ),
            (
                [("_page", "1"), ("_limit", "25")], Array(1...25),
                #"<http://localhost/posts?_page=1&_limit=25>; rel="first", <http://localhost/posts?_page=2&_limit=25>; rel="next", <http://localhost/posts?_page=4&_limit=25>; rel="last""#
            ),
            (
                [("_limit", "30"), ("_page", "4")], Array(91...100),
                #"<http://localhost/posts?_limit=30&_page=1>; rel="first", <http://localhost/posts?_limit=30&_page=3>; rel="prev", <http://localhost/posts?_limit=30&_page=4>; rel="last""#
            ),
            (
                [("_page", "3")], Array(21...30),
                #"<http://localhost/posts?_page=1>; rel="first", <http://localhost/posts?_page=2>; rel="prev", <http://localhost/posts?_page=4>; rel="next", <http://localhost/posts?_page=10>; rel="last""#
            ),
            (
                [("q", "post 1"), ("_page", "2"), ("_limit", "5")], [14, 15, 16, 17, 18],
                #"<http://localhost/posts?q=post%201&_page=1&_limit=5>; rel="first", <http://localhost/posts?q=post%201&_page=1&_limit=5>; rel="prev", <http://localhost/posts?q=post%201&_page=3&_limit=5>; rel="next", <http://localhost/posts?q=post%201&_page=3&_limit=5>; rel="last""#
            ),
        ] as [([(String, String)], [Int], String)])
    func paging(query: [(String, String)], expected: [Int], link: String) async throws {
        let backend = try MemoryFixture.backend()
        let answer = await memorySend(backend, .get, "posts", query: query)
        let response = try #require(answer.memoryResponse)
        #expect(answer.memoryIDs == expected)
        #expect(response.headers["Link"] == link)
        let total = query.contains { $0.0 == "q" } ? "12" : "100"
        #expect(response.headers["X-Total-Count"] == total)
        #expect(response.headers["Access-Control-Expose-Headers"] == "X-Total-Count, Link")
        #expect(try LinkHeader.parse(link).count >= 3)
    }

    @Test(
        "a page past the end, or one that holds everything, has no Link header",
        arguments: [
            ([("_page", "11"), ("_limit", "10")], [Int](), "100"),
            ([("_page", "1"), ("_limit", "100")], Array(1...100), "100"),
            ([("userId", "4"), ("_page", "1"), ("_limit", "20")], Array(31...40), "10"),
            ([("_page", "0"), ("_limit", "0"), ("userId", "5")], Array(41...50), "10"),
        ] as [([(String, String)], [Int], String)])
    func pagingWithoutLinks(query: [(String, String)], expected: [Int], total: String) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, "posts", query: query)
        #expect(answer.memoryIDs == expected)
        #expect(answer.memoryResponse?.headers["Link"] == nil)
        #expect(answer.memoryResponse?.headers["X-Total-Count"] == total)
    }

    @Test("following each next link from page 1 walks every page of a custom base URL")
    func followLinks() async throws {
        let backend = try MemoryFixture.backend()
        backend.baseURL = try #require(URL(string: "https://api.example.com/v1/"))
        var next: String? = nil
        var answer = await memorySend(
            backend, .get, "users/3/posts", query: [("_page", "1"), ("_limit", "4")])
        var ids: [Int] = []
        var pages = 0
        repeat {
            let response = try #require(answer.memoryResponse)
            ids += answer.memoryIDs ?? []
            pages += 1
            let links = try LinkHeader.parse(response.headers["Link"] ?? "")
            #expect(links[rel: "first"]?.href == "https://api.example.com/v1/users/3/posts?_page=1&_limit=4")
            next = links[rel: "next"]?.href
            if let next { answer = await memorySend(backend, .get, next) }
        } while next != nil && pages < 10
        #expect(ids == Array(21...30))
        #expect(pages == 3)
    }

    @Test(
        "_start, _end and _limit slice as lodash does and set X-Total-Count",
        arguments: [
            ([("_start", "5"), ("_end", "8")], [6, 7, 8], "100"),
            ([("_end", "3")], [1, 2, 3], "100"),
            ([("_start", "95"), ("_limit", "10")], Array(96...100), "100"),
            ([("_limit", "2")], [1, 2], "100"),
            ([("_start", "-2"), ("_end", "100")], [99, 100], "100"),
            ([("_start", "3"), ("_end", "-95")], [4, 5], "100"),
            ([("_start", "8"), ("_end", "2")], [], "100"),
            ([("userId", "3"), ("_start", "8"), ("_limit", "5")], [29, 30], "10"),
        ] as [([(String, String)], [Int], String)])
    func slicing(query: [(String, String)], expected: [Int], total: String) async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, "posts", query: query)
        #expect(answer.memoryIDs == expected)
        #expect(answer.memoryResponse?.headers["X-Total-Count"] == total)
        #expect(answer.memoryResponse?.headers["Link"] == nil)
    }

    @Test("_start alone slices nothing and sets no X-Total-Count, as in json-server")
    func startAlone() async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .get, "posts", query: [("_start", "10")])
        #expect(answer.memoryIDs == Array(1...100))
        #expect(answer.memoryResponse?.headers["X-Total-Count"] == nil)
    }

    @Test("_embed adds the children that point at each record; _expand adds the parent")
    func embedAndExpand() async throws {
        let backend = try MemoryFixture.backend()
        let posts = await memorySend(
            backend, .get, "posts", query: [("_embed", "comments"), ("_limit", "2")])
        let first = try #require(posts.memoryJSON?.arrayValue)
        #expect(first.count == 2)
        #expect(first[0]["comments"]?.arrayValue?.compactMap { $0["id"]?.intValue } == [1, 2, 3])
        #expect(first[1]["comments"]?.arrayValue?.compactMap { $0["id"]?.intValue } == [4, 5, 6])
        #expect(first[0]["title"] == "post 1")

        let post = await memorySend(
            backend, .get, "posts/2", query: [("_embed", "comments"), ("_expand", "user")])
        #expect(post.memoryJSON?["comments"]?.arrayValue?.count == 3)
        #expect(post.memoryJSON?["user"]?["name"] == "User 1")

        let comments = await memorySend(backend, .get, "comments", query: [("_expand", "post"), ("id", "7")])
        #expect(comments.memoryJSON?.arrayValue?.first?["post"]?["id"] == .int(3))

        let user = await memorySend(
            backend, .get, "users/10", query: [("_embed", "posts"), ("_embed", "nothing")])
        #expect(user.memoryJSON?["posts"]?.arrayValue?.count == 10)
        #expect(user.memoryJSON?["nothing"] == [])
    }

    @Test("_embed replaces a field of the same name rather than writing it twice")
    func embedOverField() async throws {
        let backend = try InMemoryBackend(
            database: Data(
                #"{"posts": [{"id": 1, "comments": "old"}], "comments": [{"id": 9, "postId": 1}]}"#.utf8))
        let answer = await memorySend(backend, .get, "posts/1", query: [("_embed", "comments")])
        #expect(answer.memoryJSON == ["id": 1, "comments": [["id": 9, "postId": 1]]])
    }

    @Test("HEAD answers a listing's status and headers without its body")
    func head() async throws {
        let answer = await memorySend(try MemoryFixture.backend(), .head, "posts", query: [("_page", "1")])
        let response = try #require(answer.memoryResponse)
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.headers["X-Total-Count"] == "100")
        #expect(response.headers["Link"] != nil)
    }

    @Test("the cached listing follows every write")
    func cacheInvalidation() async throws {
        let backend = try MemoryFixture.backend()
        #expect(await memorySend(backend, .get, "posts").memoryIDs?.count == 100)
        _ = await memorySend(backend, .post, "posts", body: #"{"title": "new"}"#)
        #expect(await memorySend(backend, .get, "posts").memoryIDs?.last == 101)
        _ = await memorySend(backend, .delete, "posts/1")
        #expect(await memorySend(backend, .get, "posts").memoryIDs?.first == 2)
        _ = await memorySend(backend, .patch, "posts/2", body: #"{"title": "changed"}"#)
        #expect(await memorySend(backend, .get, "posts").memoryJSON?.arrayValue?.first?["title"] == "changed")
        #expect(
            await memorySend(backend, .get, "posts", query: [("_page", "1"), ("_limit", "2")]).memoryIDs == [
                2, 3,
            ])
    }
}
