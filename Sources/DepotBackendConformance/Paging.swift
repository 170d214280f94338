import Depot
import Foundation
import Testing

/// The paging conventions the DRF test app serves (and Depot's tests also answer in
/// process), one per built-in ``Pagination`` style.
public enum ServedStyle: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `_page`/`_limit`, `X-Total-Count`, `Link` (the DRF app's `/posts`).
    case jsonServer
    /// RFC 8288 `Link` only, GitHub style (`/link/posts`).
    case linkHeader
    /// `page`/`per_page`, `X-Total`, `X-Per-Page`, `X-Page` (`/grape/posts`).
    case grape
    /// Django REST framework's `{count, next, previous, results}` (`/drf/posts`).
    case envelope
    /// json-server 1.x's `{first, prev, next, last, pages, items, data}` (`/v1/posts`).
    case jsonServerV1
    /// An opaque cursor in the `next` URL (`/cursor/posts`).
    case cursor

    /// What a repository for this server says in its `pagination` line.
    public var pagination: Pagination {
        switch self {
        case .jsonServer: .jsonServer
        case .linkHeader: .linkHeader
        case .grape: .grape
        case .envelope: .envelope
        case .jsonServerV1: .jsonServerV1
        case .cursor: .cursor
        }
    }

    /// Whether pages can be asked for by number.
    public var isNumbered: Bool { self != .cursor }

    /// Where the DRF app serves the posts in this style, relative to its root.
    public var drfPrefix: String {
        switch self {
        case .jsonServer: ""
        case .linkHeader: "link/"
        case .grape: "grape/"
        case .envelope: "drf/"
        case .jsonServerV1: "v1/"
        case .cursor: "cursor/"
        }
    }

    /// The style's name.
    public var testDescription: String { rawValue }
}

/// A post as JSONPlaceholder (and the DRF app) serves it.
public struct ServedPost: Codable, Identifiable, Sendable, Equatable {
    /// The post's id.
    public var id: Int
    /// Its author's id.
    public var userId: Int
    /// Its title.
    public var title: String
    /// Its text.
    public var body: String

    /// A post with these fields.
    public init(id: Int, userId: Int, title: String, body: String) {
        self.id = id
        self.userId = userId
        self.title = title
        self.body = body
    }
}

/// A post repository whose only knob is its `pagination` line.
public struct StyledPostRepository: PagedRepository {
    /// The posts.
    public typealias Entity = ServedPost
    /// The backend the posts are read through.
    public let backend: any Backend
    /// `posts`.
    public let name = "posts"
    /// The paging style.
    public let pagination: Pagination

    /// A repository over `backend` reading pages in `pagination`'s style.
    public init(backend: any Backend, pagination: Pagination) {
        self.backend = backend
        self.pagination = pagination
    }
}

extension NetworkConformance {
    /// The posts of the DRF app's endpoint for `style`, read with that style.
    private static func posts(_ style: ServedStyle, on subject: BackendUnderTest) throws
        -> StyledPostRepository
    {
        let drf = try #require(LiveServer.drf)
        let base = try #require(URL(string: drf.absoluteString + "/" + style.drfPrefix))
        return StyledPostRepository(backend: subject.backend(base), pagination: style.pagination)
    }

    /// Every paging style over real HTTP: the DRF app serves the same 100 posts in each
    /// convention, and one repository type, changed only in its `pagination`, walks them.
    public static let paging: [ConformanceCheck] =
        ServedStyle.allCases.flatMap { style in
            [7, 25].map { size in
                ConformanceCheck("paging: \(style.rawValue) walks all 100 posts by \(size), in order") {
                    subject in
                    var ids: [Int] = []
                    var numbers: [Int] = []
                    for try await page in try posts(style, on: subject).pages(size: size) {
                        numbers.append(page.number)
                        ids += page.items.map(\.id)
                        #expect(page.items.count == size || !page.hasNext)
                        if numbers.count > 100 { break }  // a bound, should the walk never end
                    }
                    #expect(ids == Array(1...100))
                    #expect(numbers == Array(1...((100 + size - 1) / size)))
                }
            }
        }
        + ServedStyle.allCases.map { style in
            ConformanceCheck("paging: \(style.rawValue) keeps the filter on every page") { subject in
                var ids: [Int] = []
                for try await page in try posts(style, on: subject).pages(size: 3, query: ["userId": 7]) {
                    ids += page.items.map(\.id)
                    if ids.count > 100 { break }
                }
                #expect(ids == Array(61...70))
            }
        }
        + ServedStyle.allCases.filter(\.isNumbered).map { style in
            ConformanceCheck("paging: \(style.rawValue) findPage 1, 2, the last and past the end") {
                subject in
                let posts = try posts(style, on: subject)
                let first = try await posts.findPage(1, size: 10).value
                #expect(first.items.map(\.id) == Array(1...10))
                #expect(first.hasNext && !first.hasPrevious)
                let second = try await posts.findPage(2, size: 10).value
                #expect(second.items.map(\.id) == Array(11...20))
                #expect(second.hasNext && second.hasPrevious)
                let last = try await posts.findPage(10, size: 10).value
                #expect(last.items.map(\.id) == Array(91...100))
                #expect(!last.hasNext && last.nextAddress == nil)
                let past = try await posts.findPage(11, size: 10).value
                #expect(past.items.isEmpty)
                #expect(!past.hasNext)
            }
        }
        + [
            ConformanceCheck("paging: the cursor style follows next and refuses page 2") { subject in
                let posts = try posts(.cursor, on: subject)
                let first = try await posts.findPage(1, size: 10).value
                #expect(first.items.map(\.id) == Array(1...10))
                guard case .href(let next) = first.nextAddress else {
                    Issue.record(
                        "expected the server's next URL, got \(String(describing: first.nextAddress))")
                    return
                }
                #expect(next.contains("cursor="))
                let second = try await posts.findPage(after: first).value
                #expect(second.items.map(\.id) == Array(11...20))
                #expect(
                    await posts.findPage(2, size: 10).result.failure?.conformanceCaseName == "invalidRequest")
            },
            ConformanceCheck("paging: the total is read where the style carries it") { subject in
                let carriesTotal: Set<ServedStyle> = [.jsonServer, .grape, .envelope, .jsonServerV1]
                for style in ServedStyle.allCases {
                    let page = try await posts(style, on: subject).findPage(1, size: 10).value
                    #expect(page.total == (carriesTotal.contains(style) ? 100 : nil), "\(style)")
                }
            },
            ConformanceCheck("paging: the same next page twice stops the walk with .decoding") { subject in
                let drf = try #require(LiveServer.drf)
                let base = try #require(URL(string: drf.absoluteString + "/loop/"))
                let posts = StyledPostRepository(backend: subject.backend(base), pagination: .envelope)
                var ids: [Int] = []
                var thrown: (any Error)?
                do {
                    for try await page in posts.pages(size: 10) {
                        ids += page.items.map(\.id)
                        if ids.count > 100 { break }
                    }
                } catch {
                    thrown = error
                }
                #expect(ids == Array(1...20))
                guard case .decoding(let failure) = thrown as? ServiceError else {
                    Issue.record("expected .decoding, got \(String(describing: thrown))")
                    return
                }
                #expect(failure.description.contains("same next page twice"))
            },
        ]
}
