import Depot
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSessionBackend over loopback: the network case must cost what a hand-written
/// `URLSession` data task plus `JSONDecoder` costs, on the same URLs and bytes.
enum URLSessionCases {
    /// Requests per sample in the findByID cases.
    static let requests = 500
    /// Requests in flight at once in the concurrent case.
    static let width = 16

    static let all: [BenchmarkCase] = [findAll, sequential, concurrent, control]

    /// `findAll()` of 5000 photos vs a data task on `/photos` decoded with `JSONDecoder`.
    static let findAll = BenchmarkCase(
        name: "urlsession.findAll.photos5000", target: 1.05, rounds: 31,
        sample: "1 GET /photos (5000 photos) and decode: findAll vs URLSession data task + JSONDecoder",
        needsServer: true
    ) { environment in
        let (photos, baseline) = try clients(environment)
        let url = baseline.url("photos")
        return Sides(
            depot: {
                let all = try await photos.findAll().value
                try check(all.count == 5000 && all.last?.id == 5000, "findAll returned \(all.count) photos")
            },
            baseline: {
                let all = try await baseline.get([Photo].self, from: url)
                try check(all.count == 5000 && all.last?.id == 5000, "decoded \(all.count) photos")
            })
    }

    /// `requests` findByID one after the other vs the same data tasks one after the other.
    static let sequential = BenchmarkCase(
        name: "urlsession.findByID.sequential", target: 1.05, rounds: 51,
        sample: "\(requests) GET /photos/:id one after the other: findByID vs data task + JSONDecoder",
        requestsPerSample: requests, needsServer: true
    ) { environment in
        let (photos, baseline) = try clients(environment)
        let ids = Photos.ids(requests, in: 5000)
        let expected = ids.reduce(0, +)
        return Sides(
            depot: {
                var sum = 0
                for id in ids { sum &+= try await photos.findByID(id).value.id }
                try check(sum == expected, "findByID returned other photos")
            },
            baseline: {
                var sum = 0
                for id in ids { sum &+= try await baseline.photo(id).id }
                try check(sum == expected, "the data tasks returned other photos")
            })
    }

    /// `requests` findByID, `width` in flight at a time, vs the same data tasks.
    static let concurrent = BenchmarkCase(
        name: "urlsession.findByID.concurrent16", target: 1.05, rounds: 51,
        sample:
            "\(requests) GET /photos/:id, \(width) in flight at a time: findByID vs data task + JSONDecoder",
        requestsPerSample: requests, needsServer: true
    ) { environment in
        let (photos, baseline) = try clients(environment)
        let ids = Photos.ids(requests, in: 5000)
        let expected = ids.reduce(0, +)
        return Sides(
            depot: {
                let sum = try await inParallel(ids.count) { try await photos.findByID(ids[$0]).value.id }
                try check(sum == expected, "findByID returned other photos")
            },
            baseline: {
                let sum = try await inParallel(ids.count) { try await baseline.photo(ids[$0]).id }
                try check(sum == expected, "the data tasks returned other photos")
            })
    }

    /// The noise floor of ``concurrent``: its hand-written side against itself, on a fresh
    /// session with the default configuration vs on `URLSession.shared`. No Depot on either
    /// side, so its ratio is how far apart two sessions doing the same work land in one run.
    static let control = BenchmarkCase(
        name: "urlsession.control.concurrent16", target: 1, rounds: 51,
        sample:
            "the hand-written side of concurrent16 on a fresh default session vs on URLSession.shared "
            + "(no Depot on either side: the spread two sessions alone show)",
        requestsPerSample: requests, needsServer: true, isControl: true
    ) { environment in
        guard let baseURL = environment.baseURL else { throw BenchmarkFailure("no --base-url") }
        let shared = HandWritten(baseURL: baseURL)
        let own = HandWritten(baseURL: baseURL, session: URLSession(configuration: .default))
        let ids = Photos.ids(requests, in: 5000)
        let expected = ids.reduce(0, +)
        return Sides(
            depot: {
                let sum = try await inParallel(ids.count) { try await own.photo(ids[$0]).id }
                try check(sum == expected, "the data tasks returned other photos")
            },
            baseline: {
                let sum = try await inParallel(ids.count) { try await shared.photo(ids[$0]).id }
                try check(sum == expected, "the data tasks returned other photos")
            },
            finish: {
                own.session.finishTasksAndInvalidate()
                return []
            })
    }

    /// The sum of `work(i)` for i in 0..<count, run by `width` tasks that each take every
    /// `width`-th index in turn.
    private static func inParallel(_ count: Int, _ work: @escaping @Sendable (Int) async throws -> Int)
        async throws -> Int
    {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for lane in 0..<width {
                group.addTask {
                    var sum = 0
                    for index in stride(from: lane, to: count, by: width) { sum &+= try await work(index) }
                    return sum
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// Depot's repository on a `URLSessionBackend`, and the hand-written client, both on
    /// the server of `--base-url`.
    private static func clients(_ environment: Environment) throws -> (PhotoRepository, HandWritten) {
        guard let baseURL = environment.baseURL else { throw BenchmarkFailure("no --base-url") }
        return (PhotoRepository(backend: URLSessionBackend(baseURL: baseURL)), HandWritten(baseURL: baseURL))
    }
}

/// What a user writes without Depot: `URLSession.shared` (or the session given), a data task,
/// a status check and `JSONDecoder`, wrapped in a continuation to be awaited.
///
/// It asks for JSON with `Accept: application/json`, as a JSON client should and as Depot
/// does by default, so both sides put the same request on the wire and the server does
/// the same work for each: the ratio is what Depot adds, not a difference in requests.
struct HandWritten: Sendable {
    let baseURL: URL
    /// The session its data tasks run on.
    var session = URLSession.shared

    /// `baseURL/path`.
    func url(_ path: String) -> URL {
        baseURL.appendingPathComponent(path)
    }

    /// GETs and decodes the photo `id`. The URL is built on every call, from the id, as
    /// Depot builds it on every `findByID`.
    func photo(_ id: Int) async throws -> Photo {
        try await get(Photo.self, from: url("photos/\(id)"))
    }

    /// GETs `url` and decodes the body as `T`.
    func get<T: Decodable & Sendable>(_ type: T.Type, from url: URL) async throws -> T {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                    return
                }
                guard let data, let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
                    continuation.resume(throwing: BenchmarkFailure("\(url) did not answer 200"))
                    return
                }
                do {
                    continuation.resume(returning: try JSONDecoder().decode(T.self, from: data))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            .resume()
        }
    }
}
