import Depot
import Foundation
import Testing

/// Each built-in style's `query(for:size:)` and `layout(of:page:size:)` on hand-built responses.
@Suite("Pagination styles")
struct PaginationStyleTests {
    private func response(_ headers: HTTPHeaders = [:], _ body: String = "[]") -> BackendResponse {
        BackendResponse(status: 200, headers: headers, body: Data(body.utf8))
    }

    private func items(_ pairs: (String, String)...) -> [URLQueryItem] {
        pairs.map { URLQueryItem(name: $0.0, value: $0.1) }
    }

    /// The coding path of the `.decoding` failure `body` throws, or `nil`.
    private func decodingPath(_ body: () throws(ServiceError) -> PageLayout) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            guard case .decoding(let failure) = error else { return "not .decoding: \(error)" }
            return failure.codingPath
        }
    }

    // MARK: - Queries

    @Test(
        "each numbered style asks for a page with its own parameter names",
        arguments: [
            (Pagination.jsonServer, "_page", "_limit"), (.linkHeader, "page", "per_page"),
            (.grape, "page", "per_page"), (.envelope, "page", "page_size"),
            (.jsonServerV1, "_page", "_per_page"),
            (.jsonServer(page: "p", limit: "n"), "p", "n"),
            (.linkHeader(page: "pg", perPage: "limit"), "pg", "limit"),
            (.grape(page: "pg", perPage: "size"), "pg", "size"),
            (.envelope(page: "pg", size: "sz"), "pg", "sz"),
        ])
    func numberedQuery(pagination: Pagination, page: String, size: String) throws {
        #expect(try pagination.style.query(for: .number(3), size: 7) == items((page, "3"), (size, "7")))
        #expect(pagination.style.query(page: 2, size: 5) == items((page, "2"), (size, "5")))
        #expect(try pagination.style.query(for: .href("/posts?page=2"), size: 7).isEmpty)
        #expect(throws: ServiceError.self) { try pagination.style.query(for: .cursor("abc"), size: 7) }
    }

    @Test("the cursor style asks for the first page by size, then by cursor, and refuses page 3")
    func cursorQuery() throws {
        let style = Pagination.cursor.style
        #expect(try style.query(for: .number(1), size: 7) == items(("page_size", "7")))
        #expect(
            try style.query(for: .cursor("cD0xMA=="), size: 7)
                == items(("cursor", "cD0xMA=="), ("page_size", "7")))
        #expect(try style.query(for: .href("https://api.example.com/posts?cursor=x"), size: 7).isEmpty)
        let custom = Pagination.cursor(cursor: "after", size: "limit").style
        #expect(try custom.query(for: .cursor("t1"), size: 3) == items(("after", "t1"), ("limit", "3")))
        #expect(
            throws: ServiceError.invalidRequest(
                "cursor pagination cannot ask for page 3: it can only follow the server's next cursor")
        ) {
            try style.query(for: .number(3), size: 7)
        }
    }

    // MARK: - json-server

    @Test("jsonServer follows the Link header's next, or counts while X-Total-Count says there is more")
    func jsonServerLayout() throws {
        let style = JSONServerPagination()
        let linked = try style.layout(
            of: response(
                ["X-Total-Count": "30", "Link": #"<http://h/posts?_page=3&_limit=10>; rel="next""#]), page: 2,
            size: 10)
        #expect(linked.total == 30)
        #expect(linked.hasNext == true)
        #expect(linked.next == .href("http://h/posts?_page=3&_limit=10"))
        let counted = try style.layout(of: response(["X-Total-Count": "30"]), page: 2, size: 10)
        #expect(counted.next == .number(3))
        let last = try style.layout(of: response(["X-Total-Count": "30"]), page: 3, size: 10)
        #expect(last.hasNext == false)
        #expect(last.next == nil)
        let unknown = try style.layout(of: response(), page: 1, size: 10)
        #expect(unknown.hasNext == nil && unknown.next == nil)
    }

    // MARK: - Link header

    @Test("linkHeader follows rel=next and stops on a page without one")
    func linkHeaderLayout() throws {
        let style = LinkHeaderPagination()
        let headers: HTTPHeaders = [
            "Link":
                #"<https://api.github.com/repos?page=3&per_page=7>; rel="next", <https://api.github.com/repos?page=15&per_page=7>; rel="last""#
        ]
        let middle = try style.layout(of: response(headers), page: 2, size: 7)
        #expect(middle.next == .href("https://api.github.com/repos?page=3&per_page=7"))
        #expect(middle.hasNext == true)
        #expect(middle.links.map(\.rel) == ["next", "last"])
        #expect(middle.total == nil)
        let last = try style.layout(
            of: response(["Link": #"<https://api.github.com/repos?page=1>; rel="first""#]), page: 15, size: 7)
        #expect(last.next == nil)
        #expect(last.hasNext == false)
        let bare = try style.layout(of: response(), page: 1, size: 7)
        #expect(bare.hasNext == false)
        let gitLab = try LinkHeaderPagination(totalHeader: "X-Total").layout(
            of: response(["X-Total": "42"]), page: 1, size: 7)
        #expect(gitLab.total == 42)
    }

    // MARK: - Grape

    @Test("grape reads X-Total and X-Next-Page; an empty X-Next-Page is the last page")
    func grapeLayout() throws {
        let style = GrapePagination()
        let middle = try style.layout(
            of: response(["X-Total": "100", "X-Per-Page": "25", "X-Page": "2", "X-Next-Page": "3"]), page: 2,
            size: 25)
        #expect(middle.total == 100)
        #expect(middle.next == .number(3))
        #expect(middle.hasNext == true)
        let last = try style.layout(of: response(["X-Total": "100", "X-Next-Page": ""]), page: 4, size: 25)
        #expect(last.next == nil)
        #expect(last.hasNext == false)
        let counted = try style.layout(of: response(["X-Total": "100"]), page: 3, size: 25)
        #expect(counted.next == .number(4))
        let countedLast = try style.layout(of: response(["X-Total": "100"]), page: 4, size: 25)
        #expect(countedLast.next == nil && countedLast.hasNext == false)
        let silent = try style.layout(of: response(), page: 1, size: 25)
        #expect(silent.hasNext == nil && silent.total == nil)
    }

    @Test(
        "a malformed paging header is .decoding naming the header",
        arguments: [
            (Pagination.jsonServer, "X-Total-Count", "lots"), (.jsonServer, "Link", "<no-end; rel=next"),
            (.linkHeader, "Link", "https://x/?page=2; rel=next"),
            (.linkHeader(total: "X-Total"), "X-Total", "-1"),
            (.grape, "X-Total", "abc"), (.grape, "X-Next-Page", "next"), (.grape, "Link", "<x>; =1"),
        ])
    func malformedHeader(pagination: Pagination, header: String, value: String) {
        let path = decodingPath { () throws(ServiceError) in
            try pagination.style.layout(of: response([header: value]), page: 1, size: 10)
        }
        #expect(path == "header \(header)")
    }

    // MARK: - Envelopes

    @Test("the DRF envelope reads count, follows next as an href and keeps next/previous as links")
    func drfLayout() throws {
        let body = #"""
            {"count": 100, "next": "http://h/drf/posts?page=3&page_size=10",
             "previous": "http://h/drf/posts?page_size=10", "results": []}
            """#
        let layout = try EnvelopePagination.djangoREST.layout(of: response([:], body), page: 2, size: 10)
        #expect(layout.itemsPath == ["results"])
        #expect(layout.total == 100)
        #expect(layout.next == .href("http://h/drf/posts?page=3&page_size=10"))
        #expect(layout.hasNext == true)
        #expect(layout.links[rel: "next"]?.href == "http://h/drf/posts?page=3&page_size=10")
        #expect(layout.links[rel: "prev"]?.href == "http://h/drf/posts?page_size=10")
        let last = try EnvelopePagination.djangoREST.layout(
            of: response(
                [:], #"{"count": 100, "next": null, "previous": "/drf/posts?page=9", "results": []}"#),
            page: 10, size: 10)
        #expect(last.next == nil && last.hasNext == false)
        #expect(last.links[rel: "prev"]?.href == "/drf/posts?page=9")
    }

    @Test("json-server 1.x: next is a page number, items the total, and past the last page reads empty")
    func jsonServerV1Layout() throws {
        let style = EnvelopePagination.jsonServerV1
        let middle = try style.layout(
            of: response(
                [:], #"{"first": 1, "prev": 1, "next": 3, "last": 15, "pages": 15, "items": 100, "data": []}"#
            ),
            page: 2, size: 7)
        #expect(middle.itemsPath == ["data"])
        #expect(middle.total == 100)
        #expect(middle.next == .number(3))
        #expect(!middle.isPastTheEnd)
        #expect(middle.links.isEmpty)
        let clamped = try style.layout(
            of: response(
                [:],
                #"{"first": 1, "prev": 14, "next": null, "last": 15, "pages": 15, "items": 100, "data": [{}]}"#
            ), page: 20, size: 7)
        #expect(clamped.isPastTheEnd)
        #expect(clamped.next == nil && clamped.hasNext == false)
    }

    @Test("next values: URL, path, number, numeric text, true, false, empty text and null")
    func envelopeNextValues() throws {
        let style = EnvelopePagination(totalPath: nil)
        let cases: [(String, PageAddress?)] = [
            (#""https://h/p?page=3""#, .href("https://h/p?page=3")), (#""/p?page=3""#, .href("/p?page=3")),
            ("3", .number(3)), (#""3""#, .number(3)), ("true", .number(3)), ("false", nil), (#""""#, nil),
            ("null", nil),
        ]
        for (value, expected) in cases {
            let layout = try style.layout(
                of: response([:], #"{"next": \#(value), "results": []}"#), page: 2, size: 5)
            #expect(layout.next == expected, "\(value)")
            #expect(layout.hasNext == (expected != nil), "\(value)")
        }
        let missing = try style.layout(of: response([:], #"{"results": []}"#), page: 2, size: 5)
        #expect(missing.next == nil && missing.hasNext == nil)
        // Without a next key, the total decides.
        let drf = EnvelopePagination.djangoREST
        let counted = try drf.layout(of: response([:], #"{"count": 12, "results": []}"#), page: 2, size: 5)
        #expect(counted.next == .number(3))
        let countedLast = try drf.layout(
            of: response([:], #"{"count": 10, "results": []}"#), page: 2, size: 5)
        #expect(countedLast.next == nil && countedLast.hasNext == false)
    }

    @Test("custom key paths read a nested envelope")
    func nestedEnvelope() throws {
        let pagination = Pagination.envelope(
            items: ["data"], total: ["meta", "total"], next: ["links", "next"], previous: ["links", "prev"])
        let body = #"{"data": [], "meta": {"total": 40}, "links": {"next": "/posts?page=3", "prev": null}}"#
        let layout = try pagination.style.layout(of: response([:], body), page: 2, size: 10)
        #expect(layout.itemsPath == ["data"])
        #expect(layout.total == 40)
        #expect(layout.next == .href("/posts?page=3"))
        let counted = try Pagination.envelope(items: ["data"], total: ["meta", "total"], next: nil)
            .style.layout(of: response([:], body), page: 4, size: 10)
        #expect(counted.next == nil && counted.hasNext == false)
        let more = try Pagination.envelope(items: ["data"], total: ["meta", "total"], next: nil)
            .style.layout(of: response([:], body), page: 3, size: 10)
        #expect(more.next == .number(4))
    }

    @Test(
        "a malformed envelope is .decoding naming the key",
        arguments: [
            (#"{"count": "many", "results": []}"#, "count"), (#"{"count": -3, "results": []}"#, "count"),
            (#"{"next": "soon", "results": []}"#, "next"), (#"{"next": 0, "results": []}"#, "next"),
            (#"{"next": {"page": 2}, "results": []}"#, "next"), (#"[1, 2]"#, "(root)"), ("<html>", "(root)"),
        ])
    func malformedEnvelope(body: String, key: String) {
        let path = decodingPath { () throws(ServiceError) in
            try EnvelopePagination.djangoREST.layout(of: response([:], body), page: 1, size: 10)
        }
        #expect(path == key)
    }

    @Test("a nested key under a value that is not an object is .decoding naming it")
    func malformedNesting() {
        let path = decodingPath { () throws(ServiceError) in
            try EnvelopePagination(totalPath: ["meta", "total"]).layout(
                of: response([:], #"{"meta": 3, "results": []}"#), page: 1, size: 10)
        }
        #expect(path == "meta")
    }

    @Test("DRF's 404 for a page after the first is past the end; other errors and page 1 are not")
    func pastTheEnd() {
        let drf = EnvelopePagination.djangoREST
        #expect(drf.isPastTheEnd(.notFound(FailureResponse(status: 404)), page: 11))
        #expect(!drf.isPastTheEnd(.notFound(FailureResponse(status: 404)), page: 1))
        #expect(!drf.isPastTheEnd(.timedOut, page: 11))
        #expect(
            !EnvelopePagination.jsonServerV1.isPastTheEnd(.notFound(FailureResponse(status: 404)), page: 11))
        #expect(!JSONServerPagination().isPastTheEnd(.notFound(FailureResponse(status: 404)), page: 11))
    }

    // MARK: - Cursor

    @Test("the cursor style follows a URL as an href and sends a bare token back as the cursor")
    func cursorLayout() throws {
        let style = CursorPagination()
        let drf = try style.layout(
            of: response(
                [:],
                #"{"next": "http://h/cursor/posts?cursor=cD0xMA%3D%3D&page_size=10", "previous": null, "results": []}"#
            ),
            page: 1, size: 10)
        #expect(drf.next == .href("http://h/cursor/posts?cursor=cD0xMA%3D%3D&page_size=10"))
        #expect(drf.links[rel: "next"] != nil)
        #expect(drf.itemsPath == ["results"])
        let slack = try CursorPagination(
            itemsPath: ["members"], nextPath: ["response_metadata", "next_cursor"]
        )
        .layout(
            of: response([:], #"{"members": [], "response_metadata": {"next_cursor": "dXNlcjpVMDYx"}}"#),
            page: 1, size: 10)
        #expect(slack.next == .cursor("dXNlcjpVMDYx"))
        #expect(slack.links.isEmpty)
        let numeric = try style.layout(
            of: response([:], #"{"next": 1374004777531007833, "results": []}"#), page: 1, size: 10)
        #expect(numeric.next == .cursor("1374004777531007833"))
        for end in ["null", #""""#] {
            let last = try style.layout(
                of: response([:], #"{"next": \#(end), "results": []}"#), page: 3, size: 10)
            #expect(last.next == nil && last.hasNext == false, "\(end)")
        }
        let path = decodingPath { () throws(ServiceError) in
            try style.layout(of: response([:], #"{"next": [1], "results": []}"#), page: 1, size: 10)
        }
        #expect(path == "next")
    }

    @Test(
        "a server's next value is an href when it is a URL or an absolute path, else a cursor",
        arguments: [
            ("https://api.example.com/posts?cursor=x", true), ("http://h/p", true), ("//h/p", true),
            ("/p?x=1", true),
            ("cD0xMA==", false), ("abc:def", false), ("3", false), ("mailto:a@b", false),
        ])
    func hrefOrCursor(value: String, isHref: Bool) {
        #expect(PageAddress.href(orCursor: value) == (isHref ? .href(value) : .cursor(value)))
    }

    // MARK: - Custom styles

    /// A style written against the first `PaginationStyle`: numbers only.
    private struct OffsetPagination: PaginationStyle {
        func query(page number: Int, size: Int) -> [URLQueryItem] {
            [
                URLQueryItem(name: "offset", value: String((number - 1) * size)),
                URLQueryItem(name: "limit", value: String(size)),
            ]
        }

        func layout(of response: BackendResponse, page number: Int, size: Int) throws(ServiceError)
            -> PageLayout
        {
            PageLayout(total: try PageHeaders.integer("X-Total", in: response.headers))
        }
    }

    @Test("a style that only implements query(page:size:) gets query(for:size:) for free")
    func customStyle() throws {
        let style = OffsetPagination()
        #expect(try style.query(for: .number(3), size: 10) == items(("offset", "20"), ("limit", "10")))
        #expect(try style.query(for: .href("/things?offset=20"), size: 10).isEmpty)
        #expect(throws: ServiceError.self) { try style.query(for: .cursor("x"), size: 10) }
        #expect(!style.isPastTheEnd(.notFound(FailureResponse(status: 404)), page: 2))
        #expect(CursorPagination().query(page: 1, size: 4) == items(("page_size", "4")))
        #expect(CursorPagination().query(page: 2, size: 4).isEmpty)
    }
}
