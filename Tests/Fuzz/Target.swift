import Depot
import DepotInMemory
import Foundation

/// One thing to fuzz: its name, its share of the time budget, the corpus folders its seeds
/// come from, words worth inserting, and the function that runs one input through it.
struct Target: Sendable {
    var name: String
    var weight: Double
    var corpora: [String]
    var dictionary: [String] = []
    var summary: String
    var run: @Sendable (_ input: [UInt8], _ harness: Harness) -> Void

    static let all: [Target] = [
        Target(
            name: "body", weight: 3, corpora: ["bodies"],
            summary: "2xx bodies through repositories, every paging style and Resource<T>, sync and async",
            run: ResponseBodyTarget.run),
        Target(
            name: "error-body", weight: 1.5, corpora: ["errors", "bodies"],
            summary: "4xx/5xx bodies through the classifier (message extraction) and InMemory faults",
            run: ErrorBodyTarget.run),
        Target(
            name: "route", weight: 1.5, corpora: ["bodies"],
            summary: "bodies answered by InMemoryBackend route stubs, then read and revalidated",
            run: RouteTarget.run),
        Target(
            name: "dbjson", weight: 2, corpora: ["db"],
            summary: "InMemoryBackend(database:) with mutated documents, then reads and a write",
            run: DatabaseTarget.run),
        Target(
            name: "write", weight: 2, corpora: ["writes", "bodies"],
            summary: "POST/PUT/PATCH bodies and content types on InMemoryBackend, then reads",
            run: WriteTarget.run),
        Target(
            name: "request-target", weight: 1, corpora: ["request-target"],
            dictionary: [
                "_like=", "(a+)+$", "_sort=", "_order=desc", "_page=", "_limit=", "_embed=", "%2F", "%2E%2E",
            ],
            summary: "paths (line 1) and query strings (line 2) on a seeded InMemoryBackend",
            run: RequestTargetTarget.run),
        Target(
            name: "link-header", weight: 1, corpora: ["link-header"],
            dictionary: [
                "<", ">", "; rel=\"next\"", "; rel=last", ", <", "?_page=2&_limit=10", "http://localhost/",
            ],
            summary: "Link headers (one per line) through LinkHeader.parse and paging",
            run: LinkHeaderTarget.run),
        Target(
            name: "www-authenticate", weight: 0.5, corpora: ["www-authenticate"],
            dictionary: ["Bearer", "Basic", "realm=\"", "error=\"invalid_token\"", "==", ", Digest "],
            summary: "WWW-Authenticate challenges (one per line) through the parser and a 401",
            run: AuthenticateTarget.run),
        Target(
            name: "retry-after", weight: 0.5, corpora: ["retry-after"],
            dictionary: [
                "GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "120", "-1",
            ],
            summary: "Retry-After (line 1) and Date (line 2) through 503/429 and HTTPDate",
            run: RetryAfterTarget.run),
        Target(
            name: "etag", weight: 1, corpora: ["etag"],
            dictionary: ["W/\"", "\"", "*", ", ", "no-cache", "no-store", "max-age=0", "Accept"],
            summary:
                "ETag / If-None-Match / Last-Modified lines through InMemory conditional GET and the cache",
            run: EntityTagTarget.run),
        Target(
            name: "uri-template", weight: 1, corpora: ["uri-template"],
            dictionary: [
                "{", "}", "{?", "{+", "{#", "{/", "{;", "{&", "{.", "*", ":", ":3", "[]=", "{}=", "=",
            ],
            summary:
                "URI templates (line 1) and variables (name=, name[]=, name{}=) through expansion and follow",
            run: TemplateTarget.run),
    ]
}

/// The outcome of a call that received a 2xx answer: success, or a typed decoding failure.
func expectDecoded<Value>(_ result: Result<Value, ServiceError>?, _ label: String, _ harness: Harness) {
    guard case .failure(let error) = result else { return }
    harness.inspect(error, label)
    switch error {
    case .decoding, .invalidRequest: break
    default: harness.fail("\(label): a 2xx answer failed with \(error)")
    }
}
