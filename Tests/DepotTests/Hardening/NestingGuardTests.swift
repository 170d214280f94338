import DepotBackendConformance
import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// Bodies nested past Foundation's limit: on Linux, `JSONDecoder` traps (the process
/// dies) when the 513th opening bracket is the last byte. Depot refuses them first.
@Suite("Nesting guard")
struct NestingGuardTests {
    /// 513 opening brackets and nothing else: the body that traps `JSONDecoder`.
    static let bareBrackets = Data(String(repeating: "[", count: 513).utf8)
    /// A record whose field opens 512 arrays and stops: 513 levels with the record.
    static let deepRecord = Data((#"{"id":1,"t":"# + String(repeating: "[", count: 512)).utf8)

    /// A backend whose every `GET` answers `body` with `status`.
    private func backend(answering body: Data, status: Int = 200, headers: HTTPHeaders = [:])
        -> InMemoryBackend
    {
        let backend = InMemoryBackend()
        for pattern in ["", "posts", "posts/:id"] {
            backend.route(.get, pattern) { _ throws(ServiceError) in
                BackendResponse(status: status, headers: headers, body: body)
            }
        }
        return backend
    }

    @Test(arguments: [bareBrackets, deepRecord])
    func aRepositoryGetsDecodingInsteadOfATrap(body: Data) async {
        let posts = PostRepository(backend: backend(answering: body))

        let all = await posts.findAll().result
        let one = await posts.findByID(1).result

        for outcome in [all.map { _ in () }, one.map { _ in () }] {
            let failure = outcome.failure?.decodingDetails
            #expect(failure?.description.contains("deeper than 512") == true)
        }
    }

    @Test func pagesEnvelopesAndResourcesAreGuardedToo() async throws {
        let body = Self.bareBrackets
        let paged = StyledPostRepository(backend: backend(answering: body), pagination: .envelope)
        #expect(await paged.findPage(1, size: 10).result.failure?.caseName == "decoding")

        let linked = StyledPostRepository(backend: backend(answering: body), pagination: .jsonServer)
        #expect(await linked.findPage(1, size: 10).result.failure?.caseName == "decoding")

        let client = HypermediaClient(
            backend: backend(answering: body), root: InMemoryBackend.defaultBaseURL)
        #expect(await client.fetchRoot().result.failure?.caseName == "decoding")
    }

    @Test func aUTF16BodyIsScannedAsFoundationReadsIt() async {
        // In UTF-16LE, ∀ (U+2200) is the bytes 00 22: a scan of the raw bytes would take
        // 0x22 for a quote and the brackets after it for text.
        let text = #"["∀","# + String(repeating: "[", count: 512)
        let wide = text.data(using: .utf16LittleEndian) ?? Data()
        let posts = PostRepository(backend: backend(answering: wide))

        let failure = await posts.findAll().result.failure?.decodingDetails

        #expect(failure?.description.contains("deeper than 512") == true)
        let fine =
            #"[{"id": 1, "userId": 2, "title": "∀", "body": ""}]"#.data(using: .utf16BigEndian) ?? Data()
        let decoded = await PostRepository(backend: backend(answering: fine)).findAll().result
        #expect(decoded.value?.first?.title == "∀")
    }

    @Test func anErrorBodyNestedTooDeepKeepsItsStatusAndHasNoMessage() async {
        let posts = PostRepository(
            backend: backend(
                answering: Self.bareBrackets, status: 400, headers: ["Content-Type": "application/json"]))

        let error = await posts.findAll().result.failure

        #expect(error?.statusCode == 400)
        #expect(error?.message == nil)
    }

    @Test func refusesNothingFoundationAccepts() throws {
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        let value = try JSONCoding.default.decode(JSONValue.self, from: Data(deepest.utf8))
        #expect(value.arrayValue?.count == 1)

        // Brackets inside strings (escaped quotes included) open nothing.
        let quoted =
            #"{"id": 1, "title": "\"["# + String(repeating: "[{", count: 600)
            + #"", "userId": 1, "body": ""}"#
        let post = try JSONCoding.default.decode(Post.self, from: Data(quoted.utf8))
        #expect(post.title.count == 1202)
    }

    /// Prefixes before 512 more `[`: whether their string is closed by then.
    @Test(arguments: [
        (#"["\\","#, true),  // an escaped backslash, then the closing quote
        (#"["a","#, true),
        (#"["\"["#, false),  // an escaped quote: the string goes on
        (#"["\\\"["#, false),  // an escaped backslash, then an escaped quote
    ])
    func stringsEndWhereJSONSaysTheyEnd(prefix: String, closed: Bool) {
        let text = prefix + String(repeating: "[", count: 512)
        let offset = JSONNesting.firstOffsetPastLimit(in: Data(text.utf8))
        #expect(offset == (closed ? text.utf8.count - 1 : nil))
    }

    @Test func namesTheOffsetWhereNestingGoesTooDeep() {
        #expect(JSONNesting.firstOffsetPastLimit(in: Self.bareBrackets) == 512)
        #expect(JSONNesting.firstOffsetPastLimit(in: Self.deepRecord) == Self.deepRecord.count - 1)
        #expect(JSONNesting.firstOffsetPastLimit(in: Data("[]".utf8)) == nil)
    }

    @Test(.liveServers) func overTheNetworkToo() async throws {
        // httpbin's /base64/<value> answers the decoded bytes as they are.
        let encoded = Self.bareBrackets.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let posts = PostRepository(backend: URLSessionBackend(baseURL: try #require(LiveServer.httpbin)))

        let outcome = await posts.request(.get, ["base64", encoded], as: [Post].self).result

        #expect(outcome.failure?.decodingDetails?.description.contains("deeper than 512") == true)
    }
}
