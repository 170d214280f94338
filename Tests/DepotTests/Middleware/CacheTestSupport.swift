import Foundation

@testable import Depot

/// A middleware placed between a cache and the network that records what the network
/// was sent and what it answered, so a test can count the bytes a server really sent.
final class NetworkTap: Middleware, Sendable {
    /// One request as it left, and its outcome.
    struct Exchange: Sendable {
        var request: BackendRequest
        var result: Result<BackendResponse, ServiceError>
    }

    private let log = Locked<[Exchange]>([])

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        next(request).handleResult { [log] result in
            log.withLock { $0.append(Exchange(request: request, result: result)) }
        }
    }

    /// Every exchange, in the order they finished.
    var exchanges: [Exchange] {
        log.withLock { $0 }
    }

    /// The successful answers the network gave, in order.
    var responses: [BackendResponse] {
        exchanges.compactMap(\.result.value)
    }
}

/// Counts decodes, read by ``CountedPost`` from the decoder's `userInfo`.
final class DecodeCounter: Sendable {
    static let key = CodingUserInfoKey(rawValue: "depot.tests.decodeCounter")
    private let value = Locked(0)

    var count: Int {
        value.withLock { $0 }
    }

    func increment() {
        value.withLock { $0 += 1 }
    }

    /// A coding whose decoder reports every ``CountedPost`` it builds to this counter.
    var coding: JSONCoding {
        let decoder = JSONDecoder()
        if let key = Self.key { decoder.userInfo[key] = self }
        return JSONCoding(decoder: decoder)
    }
}

/// A post that counts how often it is decoded.
struct CountedPost: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var title: String

    init(id: Int, title: String) {
        self.id = id
        self.title = title
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        if let key = DecodeCounter.key { (decoder.userInfo[key] as? DecodeCounter)?.increment() }
    }
}

/// `/posts`, decoded with a counting coding.
struct CountedPostRepository: Readable, Updatable {
    typealias Entity = CountedPost
    let backend: any Backend
    let name = "posts"
    let coding: JSONCoding
}
