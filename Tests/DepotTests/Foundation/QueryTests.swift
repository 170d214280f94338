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
}
