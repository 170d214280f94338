import Foundation
import Testing

@testable import Depot

@Suite("Query")
struct QueryTests {
    private static func rendered(_ query: Query) -> String {
        query.items.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
    }

    @Test func dictionaryLiteralWithStringIntDoubleAndBoolValues() {
        let query: Query = ["userId": 1, "title": "hello", "rating": 4.5, "published": true]
        #expect(Self.rendered(query) == "userId=1&title=hello&rating=4.5&published=true")
        #expect(!query.isEmpty)
        let empty: Query = [:]
        #expect(empty.isEmpty)
        #expect(empty == Query())
        #expect(empty.items.isEmpty)
    }

    @Test func repeatedFilterIsAnOr() {
        #expect(Self.rendered(Query().filter("id", 1, 2, 3)) == "id=1&id=2&id=3")
        #expect(Self.rendered(Query().filter("userId", 1).filter("userId", 2)) == "userId=1&userId=2")
    }

    @Test(
        arguments: [
            (Query.Comparison.atLeast, "views_gte=100"), (.atMost, "views_lte=100"),
            (.notEqual, "views_ne=100"), (.like, "views_like=100"),
        ]
    )
    func comparisonsAreSuffixes(comparison: Query.Comparison, expected: String) {
        #expect(Self.rendered(Query().filter("views", comparison, 100)) == expected)
    }

    @Test func sortKeysRenderAsOneSortAndOneOrder() {
        #expect(Self.rendered(Query().sorted(by: "title")) == "_sort=title&_order=asc")
        let query = Query().filter("userId", 1).sorted(by: "a").sorted(by: "b", .descending).search("x")
        #expect(Self.rendered(query) == "userId=1&q=x&_sort=a,b&_order=asc,desc")
    }

    @Test func searchEmbedExpandAndAdding() {
        let query = Query().search("lorem ipsum").embed("comments").expand("user").adding("_limit", 10)
            .adding("flag", false).adding("ratio", 0.25)
        #expect(
            Self.rendered(query)
                == "q=lorem ipsum&_embed=comments&_expand=user&_limit=10&flag=false&ratio=0.25")
    }

    @Test func mergingAppendsTheOthersItemsAndSortKeys() {
        let base = Query().filter("userId", 1).sorted(by: "id", .descending)
        let extra: Query = ["tag": "swift"]
        let merged = base.merging(extra.sorted(by: "title"))
        #expect(Self.rendered(merged) == "userId=1&tag=swift&_sort=id,title&_order=desc,asc")
        #expect(Self.rendered(base) == "userId=1&_sort=id&_order=desc")
    }

    @Test func builderReturnsCopies() {
        let base = Query().filter("a", 1)
        _ = base.filter("b", 2).sorted(by: "c").search("d")
        #expect(Self.rendered(base) == "a=1")
    }

    @Test func equalityComparesTheItemsSent() {
        let built = Query().filter("userId", 1).sorted(by: "title")
        #expect(built == Query().adding("userId", "1").sorted(by: "title", .ascending))
        #expect(built != Query().filter("userId", 1).sorted(by: "title", .descending))
        #expect(built.hashValue == Query().adding("userId", 1).sorted(by: "title").hashValue)
    }

    @Test(
        "a collection value is one item per element, text stays whole",
        arguments: [
            (Query().filter("id", [3, 1, 2]), "id=3&id=1&id=2"),
            (Query().filter("id", Set([7])), "id=7"),
            (Query().filter("id", [Int]()), ""),
            (Query().filter("id", [1, 2], 3), "id=1&id=2&id=3"),
            (Query().adding("tag", ["a", "b"]), "tag=a&tag=b"),
            (Query().filter("title", "abc"), "title=abc"),
            (Query().filter("title", "a,b"), "title=a,b"),
            (Query().filter("views", .atLeast, [10, 20]), "views_gte=10&views_gte=20"),
            (["id": [1, 2], "userId": 3] as Query, "id=1&id=2&userId=3"),
        ] as [(Query, String)])
    func collectionValues(query: Query, expected: String) {
        #expect(Self.rendered(query) == expected)
    }

    @Test(
        "floating-point values are written as JavaScript writes them when whole",
        arguments: [
            (Query().filter("price", 4.0), "price=4"),
            (Query().filter("price", -0.0), "price=0"),
            (Query().filter("price", 2.5), "price=2.5"),
            (Query().filter("price", Float(3)), "price=3"),
            (Query().filter("price", 1e20), "price=1e+20"),
            (Query().filter("price", -Double.infinity), "price=-Infinity"),
            (Query().filter("price", Double.nan), "price=NaN"),
        ] as [(Query, String)])
    func floatingPoint(query: Query, expected: String) {
        #expect(Self.rendered(query) == expected)
    }

    @Test func rangeLimitAndSeveralRelations() {
        #expect(Self.rendered(Query().range(10..<20)) == "_start=10&_end=20")
        #expect(Self.rendered(Query().limit(5)) == "_limit=5")
        #expect(
            Self.rendered(Query().embed("comments", "likes").expand("user"))
                == "_embed=comments&_embed=likes&_expand=user")
        #expect(Self.rendered(Query().filter("author.name", .like, "^a")) == "author.name_like=^a")
    }
}

@Suite("Query items lookup")
struct QueryItemsLookupTests {
    @Test("request.query[name] is the first value, \"\" for a bare name, nil when absent")
    func subscriptReadsTheFirstValue() {
        let request = BackendRequest(
            path: "posts",
            query: [
                URLQueryItem(name: "_page", value: "2"), URLQueryItem(name: "id", value: "1"),
                URLQueryItem(name: "id", value: "2"), URLQueryItem(name: "flag", value: nil),
            ])
        #expect(request.query["_page"] == "2")
        #expect(request.query["id"] == "1")
        #expect(request.query["flag"] == "")
        #expect(request.query["_limit"] == nil)
        #expect(request.query.values(for: "id") == ["1", "2"])
        #expect(request.query.values(for: "nothing").isEmpty)
    }

    @Test("a recorded paging request reads back through the lookup")
    func recordedRequest() async throws {
        let backend = try Seed.placeholder()
        _ = try await PostRepository(backend: backend).findPage(3, size: 5).value
        let request = try #require(backend.requests.last)
        #expect(request.query["_page"] == "3")
        #expect(request.query["_limit"] == "5")
    }
}
