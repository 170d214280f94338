import Depot
import Foundation

/// JSONPlaceholder's post, strictly typed: most mutated bodies fail to decode into it.
struct Post: Codable, Identifiable, Sendable, Hashable {
    var id: Int
    var userId: Int?
    var title: String
    var body: String?
}

/// Any JSON object, decoded whole (so every nested value goes through the decoder).
struct Loose: Codable, Identifiable, Sendable {
    var id: String
    var value: JSONValue

    init(from decoder: any Decoder) throws {
        value = try JSONValue(from: decoder)
        switch value["id"] {
        case .int(let number): id = String(number)
        case .string(let text): id = text
        default: id = "1"
        }
    }

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// A repository with every capability, over any backend, with any pagination style.
struct FuzzRepository<Entity: Codable & Identifiable & Sendable>: CRUDRepository, PagedRepository {
    let name: String
    let backend: any Backend
    var pagination: Pagination = .jsonServer
}

/// A backend that answers every request with the same bytes, classified by the one status
/// classifier (`ServiceError.check`), the way URLSessionBackend classifies what it receives.
/// It completes on the caller's thread, or on another queue when `asynchronous`.
struct FixedBackend: Backend {
    var response: BackendResponse
    var asynchronous = false

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let outcome = ServiceError.check(response, for: request)
        guard asynchronous else { return Future(result: outcome) }
        return Future { promise in
            DispatchQueue.global().async { promise(outcome) }
            return CancellationToken()
        }
    }
}

/// A backend that answers with a script of responses, one per request (the last repeats),
/// each classified like FixedBackend's.
final class ScriptedBackend: Backend, @unchecked Sendable {
    private let lock = NSLock()
    private var script: [BackendResponse]
    private(set) var received: [BackendRequest] = []

    init(_ script: [BackendResponse]) {
        self.script = script
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future { [self] promise in
            lock.lock()
            received.append(request)
            let response = script.count > 1 ? script.removeFirst() : script[0]
            lock.unlock()
            promise(ServiceError.check(response, for: request))
            return CancellationToken()
        }
    }
}

/// Text from mutated bytes, the way a header value or a template arrives as a `String`.
func text(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}

/// Splits an input into lines (LF), keeping empty ones.
func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
}

/// The pagination styles a repository can pick, each with its name for messages.
let paginationStyles: [(name: String, pagination: Pagination)] = [
    ("jsonServer", .jsonServer), ("linkHeader", .linkHeader), ("grape", .grape), ("envelope", .envelope),
    ("jsonServerV1", .jsonServerV1), ("cursor", .cursor),
    (
        "envelope(custom)",
        .envelope(
            page: "p", size: "n", items: ["data", "items"], total: ["meta", "total"], next: ["links", "next"])
    ),
]
