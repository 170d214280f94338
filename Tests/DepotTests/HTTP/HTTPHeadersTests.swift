import Testing

@testable import Depot

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test func getIsCaseInsensitive() {
        let headers: HTTPHeaders = ["Content-Type": "application/json", "X-Total-Count": "100"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["x-total-count"] == "100")
        #expect(headers["Accept"] == nil)
        #expect(headers.contains("x-TOTAL-count"))
        #expect(!headers.contains("X-Total"))
    }

    @Test func namesCompareByteForByteWithOnlyASCIILettersFolded() {
        #expect("ETag".caseInsensitiveEquals("etag"))
        #expect("X-Request-ID-Long-Name-Past-15".caseInsensitiveEquals("x-request-id-long-name-past-15"))
        #expect(!"ETag".caseInsensitiveEquals("ETa"))
        #expect(!"a-b".caseInsensitiveEquals("a\rb"))
        #expect(!"[".caseInsensitiveEquals("{"))  // 0x5B | 0x20 == 0x7B, but neither is a letter
        #expect("É".caseInsensitiveEquals("É"))
        #expect(!"É".caseInsensitiveEquals("é"))  // not an ASCII letter
        #expect(!"\u{E9}".caseInsensitiveEquals("e\u{301}"))  // canonically equal, other bytes
        #expect("".caseInsensitiveEquals(""))
    }

    /// Pairs of names, with whether they are equal and whether the first sorts first, ASCII
    /// letters folded: the comparisons through the bytes' buffers and through the `utf8`
    /// views (which strings bridged from Objective-C take) agree on each.
    @Test(arguments: [
        ("ETag", "etag", true, false), ("Accept", "accept-encoding", false, true),
        ("ACCEPT", "accept", true, false), ("X-A", "x_a", false, true), ("[", "{", false, true),
        ("É", "é", false, true), ("", "", true, false), ("", "a", false, true), ("b", "A", false, false),
        ("X-Request-ID-Long-Name-Past-15", "x-request-id-long-name-past-15", true, false),
    ])
    func bufferAndViewComparisonsAgree(lhs: String, rhs: String, equal: Bool, less: Bool) {
        #expect(lhs.caseInsensitiveEquals(rhs) == equal)
        #expect(lhs.caseInsensitiveEqualsThroughViews(rhs) == equal)
        #expect(lhs.caseInsensitiveLess(rhs) == less)
        #expect(lhs.caseInsensitiveLessThroughViews(rhs) == less)
    }

    @Test func valuesTrimOnlySpacesAndTabsAtTheEnds() {
        #expect(" \t application/json \t".trimmingHTTPWhitespace() == "application/json")
        #expect("max-age = 60"[...].trimmingHTTPWhitespace() == "max-age = 60")
        #expect("   ".trimmingHTTPWhitespace() == "")
        #expect("".trimmingHTTPWhitespace() == "")
        #expect(" é ".trimmingHTTPWhitespace() == "é")
        #expect("\u{A0}x".trimmingHTTPWhitespace() == "\u{A0}x")  // not HTTP whitespace
        #expect(#" "60" "#.trimmingASCII { $0 == 0x20 || $0 == 0x22 } == "60")
        #expect(CacheControl(["Cache-Control": " no-store ,\tmax-age=\"60\" "]).maxAge == 60)
        #expect(CacheControl(["Cache-Control": " no-store ,\tmax-age=\"60\" "]).noStore)
    }

    @Test func subscriptSetReplacesEveryValue() {
        var headers = HTTPHeaders()
        headers.add("Accept", "text/html")
        headers.add("X-Other", "1")
        headers.add("accept", "application/xml")
        headers["ACCEPT"] = "application/json"
        #expect(headers.values(for: "accept") == ["application/json"])
        #expect(headers.fields.map(\.name) == ["Accept", "X-Other"])
        headers["New"] = "value"
        #expect(headers.fields.last == HTTPHeaders.Field(name: "New", value: "value"))
        headers["accept"] = nil
        #expect(!headers.contains("Accept"))
        #expect(headers.fields.count == 2)
    }

    @Test func addKeepsEveryValueInOrder() {
        var headers: HTTPHeaders = [:]
        headers.add("Set-Cookie", "a=1")
        headers.add("Vary", "Accept")
        headers.add("set-cookie", "b=2")
        headers.add("SET-COOKIE", "c=3")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2", "c=3"])
        #expect(headers["set-cookie"] == "a=1")
        #expect(headers.map(\.value) == ["a=1", "Accept", "b=2", "c=3"])
    }

    @Test func removeDropsEveryValueForTheName() {
        var headers: HTTPHeaders = ["Link": "<a>; rel=next", "Vary": "Accept"]
        headers.add("link", "<b>; rel=last")
        headers.remove("LINK")
        #expect(headers.values(for: "Link").isEmpty)
        #expect(headers.fields == [HTTPHeaders.Field(name: "Vary", value: "Accept")])
    }

    @Test func mergeReplacesNamesTheOtherHasAndKeepsTheRest() {
        var headers: HTTPHeaders = ["Accept": "text/html", "User-Agent": "Depot"]
        headers.add("Accept", "text/plain")
        var other: HTTPHeaders = ["accept": "application/json", "Authorization": "Bearer t"]
        other.add("ACCEPT", "application/xml")
        headers.merge(other)
        #expect(headers.values(for: "Accept") == ["application/json", "application/xml"])
        #expect(headers["user-agent"] == "Depot")
        #expect(headers["authorization"] == "Bearer t")
        #expect(headers.fields.count == 4)
    }

    @Test func equalityIgnoresNameCaseButNotValuesOrTheirOrder() {
        let lower: HTTPHeaders = ["content-type": "application/json", "accept": "*/*"]
        let upper: HTTPHeaders = ["Accept": "*/*", "Content-Type": "application/json"]
        #expect(lower == upper)
        #expect(lower.hashValue == upper.hashValue)
        #expect(lower != ["content-type": "APPLICATION/JSON", "accept": "*/*"])
        var first = HTTPHeaders()
        first.add("Vary", "a")
        first.add("Vary", "b")
        var second = HTTPHeaders()
        second.add("vary", "b")
        second.add("vary", "a")
        #expect(first != second)
        #expect(first != ["Vary": "a"])
    }

    @Test func descriptionListsTheLines() {
        let headers: HTTPHeaders = ["A": "1", "B": "2"]
        #expect(headers.description == "A: 1\nB: 2")
    }

    @Test func safeHeadersHaveNoUnsafeField() {
        let headers: HTTPHeaders = [
            "Accept": "application/json", "X-Custom_Name.v2": "a value, with: punctuation\tand tab",
            "If-None-Match": "W/\"é\"",
        ]
        #expect(headers.firstUnsafeField == nil)
    }

    @Test(
        arguments: [
            ("X-Injected", "a\r\nSet-Cookie: evil=1"), ("X-Line", "a\nb"), ("X-Return", "a\rb"),
            ("X-Nul", "a\u{0}b"), ("", "empty name"), ("Bad Name", "v"), ("Bad:Name", "v"),
            ("Bad\r\nName", "v"), ("Bad\tName", "v"), ("(comment)", "v"), ("Nämé", "v"), ("A\u{0}", "v"),
        ]
    )
    func unsafeFieldsAreFound(name: String, value: String) {
        var headers: HTTPHeaders = ["Accept": "application/json"]
        headers.add(name, value)
        headers.add("Later", "fine")
        #expect(headers.firstUnsafeField == HTTPHeaders.Field(name: name, value: value))
    }
}
