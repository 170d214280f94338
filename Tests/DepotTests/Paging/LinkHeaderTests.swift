import Testing

@testable import Depot

@Suite("LinkHeader.parse")
struct LinkHeaderTests {
    private static func relsAndTargets(_ links: [Link]) -> [String] {
        links.map { "\($0.rel) \($0.href)" }
    }

    @Test func gitHubStyleHeaderWithSeveralRelations() throws {
        let value =
            #"<https://api.github.com/repositories/1300192/issues?page=2>; rel="prev", "#
            + #"<https://api.github.com/repositories/1300192/issues?page=4>; rel="next", "#
            + #"<https://api.github.com/repositories/1300192/issues?page=515>; rel="last", "#
            + #"<https://api.github.com/repositories/1300192/issues?page=1>; rel="first""#
        let links = try LinkHeader.parse(value)
        #expect(
            Self.relsAndTargets(links) == [
                "prev https://api.github.com/repositories/1300192/issues?page=2",
                "next https://api.github.com/repositories/1300192/issues?page=4",
                "last https://api.github.com/repositories/1300192/issues?page=515",
                "first https://api.github.com/repositories/1300192/issues?page=1",
            ])
        #expect(links[rel: "NEXT"]?.href == "https://api.github.com/repositories/1300192/issues?page=4")
        #expect(links.allSatisfy { $0.method == .get && !$0.templated })
    }

    @Test func jsonServerHeader() throws {
        let value =
            #"<http://localhost:3000/posts?_page=1&_limit=10>; rel="first", "#
            + #"<http://localhost:3000/posts?_page=1&_limit=10>; rel="prev", "#
            + #"<http://localhost:3000/posts?_page=3&_limit=10>; rel="next", "#
            + #"<http://localhost:3000/posts?_page=10&_limit=10>; rel="last""#
        let links = try LinkHeader.parse(value)
        #expect(links.map(\.rel) == ["first", "prev", "next", "last"])
        #expect(links[rel: "next"]?.href == "http://localhost:3000/posts?_page=3&_limit=10")
    }

    @Test func quotedAndUnquotedRel() throws {
        #expect(
            Self.relsAndTargets(try LinkHeader.parse("<a>; rel=next, <b>; rel=\"last\"")) == [
                "next a", "last b",
            ])
    }

    @Test func severalRelationsForOneTarget() throws {
        let links = try LinkHeader.parse(#"<https://x.test/p/5>; rel="next last""#)
        #expect(Self.relsAndTargets(links) == ["next https://x.test/p/5", "last https://x.test/p/5"])
    }

    @Test func titleAndTypeAreKeptAndOtherParametersIgnored() throws {
        let links = try LinkHeader.parse(
            #"<https://x.test/chapter2>; rel="next"; title="Chapter, the \"second\""; type="text/html"; "#
                + #"title*=UTF-8'de'n%c3%a4chstes%20Kapitel; hreflang=de; crossorigin"#)
        #expect(links.count == 1)
        #expect(links.first?.title == #"Chapter, the "second""#)
        #expect(links.first?.type == "text/html")
        #expect(links.first?.href == "https://x.test/chapter2")
    }

    @Test(
        arguments: [
            "<a>;rel=next,<b>;rel=last",
            "  <a> ; rel = next ,  <b> ;  rel = \"last\"  ",
            "<a>;\trel=next,\t<b>; rel=last",
            "<a>; rel=next, <b>; rel=last,",
        ]
    )
    func whitespaceVariants(value: String) throws {
        #expect(Self.relsAndTargets(try LinkHeader.parse(value)) == ["next a", "last b"])
    }

    @Test func targetsMayHoldCommasAndSemicolons() throws {
        let links = try LinkHeader.parse("<https://x.test/?ids=1,2;v=3>; rel=next")
        #expect(links.first?.href == "https://x.test/?ids=1,2;v=3")
    }

    @Test func emptyValueHasNoLinks() throws {
        #expect(try LinkHeader.parse("").isEmpty)
        #expect(try LinkHeader.parse("   ").isEmpty)
        #expect(try LinkHeader.parse("<a>; title=x").isEmpty)
    }

    @Test(
        arguments: [
            "<a", "a; rel=next", "<a>; =x", "<a> rel=next", "<a>; rel=\"next", "<a>; rel=next <b>; rel=last",
            "<a>; rel=", "<a>; rel=next, junk",
        ]
    )
    func malformedValuesAreDecodingErrorsNamingTheHeader(value: String) {
        let error = #expect(throws: ServiceError.self) { try LinkHeader.parse(value) }
        let failure = error?.decodingDetails
        #expect(failure?.codingPath.contains("Link") == true)
        #expect(failure?.type == "Link")
    }
}
