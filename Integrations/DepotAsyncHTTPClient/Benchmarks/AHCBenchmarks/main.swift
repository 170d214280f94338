import AsyncHTTPClient
import Depot
import DepotAsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Depot on AsyncHTTPClient next to hand-written AsyncHTTPClient and hand-written URLSession,
// on the same loopback server (scripts/servers/bench_server.py), in one process:
//
//   bash scripts/bench --ahc                 # from the repository's root
//   depot-ahc-benchmarks --base-url URL [--rounds N] [--filter TEXT] [--nio-executor] [--connections N]
//
// Each case runs a warm-up, then rounds that time one sample of each of the three sides in
// an order that rotates from round to round (A B C, B C A, C A B, …), and reports the median
// sample of each side and the medians of the per-round ratios Depot / hand-written AHC and
// Depot / URLSession (the method of Benchmarks/README.md, with a third side). CPU per request
// is the process's CPU time over the timed samples of each side.

/// A photo, as JSONPlaceholder serves it: the type every side decodes.
struct Photo: Codable, Identifiable, Sendable, Equatable {
    let id: Int
    var albumId: Int
    var title: String
    var url: String
    var thumbnailUrl: String
}

/// `/photos` and `/photos/:id`: what a user of Depot declares.
struct PhotoRepository: Readable {
    typealias Entity = Photo
    let backend: any Backend
    let name = "photos"
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw Failure(description: message()) }
}

/// What a user writes with AsyncHTTPClient and no Depot: a request with
/// `Accept: application/json` (as Depot sends), a status check, the body collected and
/// decoded with `JSONDecoder`.
struct HandWrittenAHC: Sendable {
    let client: HTTPClient
    let baseURL: String

    func get<T: Decodable>(_ type: T.Type, _ path: String) async throws -> T {
        var request = HTTPClientRequest(url: baseURL + "/" + path)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: .seconds(30))
        guard response.status == .ok else {
            throw Failure(description: "\(path) answered \(response.status)")
        }
        let body = try await response.body.collect(upTo: 64 << 20)
        return try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
    }
}

/// What a user writes with URLSession and no Depot: a data task, a status check and
/// `JSONDecoder`, awaited through a continuation.
struct HandWrittenURLSession: Sendable {
    let baseURL: URL

    func get<T: Decodable & Sendable>(_ type: T.Type, _ path: String) async throws -> T {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                    return
                }
                guard let data, (response as? HTTPURLResponse)?.statusCode == 200 else {
                    continuation.resume(throwing: Failure(description: "\(path) did not answer 200"))
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

/// One case: three closures, each call one sample.
struct Case: Sendable {
    let name: String
    let rounds: Int
    let requests: Int
    /// Targets: Depot / hand-written AHC, and Depot / URLSession (`nil`: none).
    let targetAHC: Double
    let targetURLSession: Double?
    let depot: @Sendable () async throws -> Void
    let ahc: @Sendable () async throws -> Void
    let urlSession: @Sendable () async throws -> Void
}

/// The measurements of one case.
struct Result: Sendable {
    let name: String
    let median: [Double]
    let cpuPerRequest: [Double]
    let ratioAHC: Double
    let ratioURLSession: Double
    let targetAHC: Double
    let targetURLSession: Double?
    let rounds: Int
    let requests: Int
}

func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
}

func measure(_ benchmark: Case, rounds: Int) async throws -> Result {
    let sides = [benchmark.depot, benchmark.ahc, benchmark.urlSession]
    for _ in 0..<3 { for side in sides { try await side() } }
    var wall: [[Double]] = [[], [], []]
    var cpu = [0.0, 0.0, 0.0]
    for round in 0..<rounds {
        for offset in 0..<3 {
            let index = (round + offset) % 3
            let cpuStart = cpuSeconds()
            let start = DispatchTime.now().uptimeNanoseconds
            try await sides[index]()
            let end = DispatchTime.now().uptimeNanoseconds
            cpu[index] += cpuSeconds() - cpuStart
            wall[index].append(Double(end - start) / 1e9)
        }
    }
    let total = Double(rounds * benchmark.requests)
    return Result(
        name: benchmark.name, median: wall.map(median), cpuPerRequest: cpu.map { $0 / total },
        ratioAHC: median(zip(wall[0], wall[1]).map { $0 / $1 }),
        ratioURLSession: median(zip(wall[0], wall[2]).map { $0 / $1 }),
        targetAHC: benchmark.targetAHC, targetURLSession: benchmark.targetURLSession, rounds: rounds,
        requests: benchmark.requests)
}

/// The sum of `work(i)` for i in 0..<count, run by `width` tasks taking every `width`-th index.
func inParallel(_ count: Int, width: Int, _ work: @escaping @Sendable (Int) async throws -> Int) async throws
    -> Int
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

/// `count` ids in 1…`range` in a fixed pseudo-random order (the root benchmarks' order).
func ids(_ count: Int, in range: Int) -> [Int] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(range)) + 1
    }
}

func format(_ seconds: Double) -> String {
    seconds >= 1e-3 ? String(format: "%.2f ms", seconds * 1e3) : String(format: "%.1f µs", seconds * 1e6)
}

// MARK: - Arguments

var baseURLText: String?
var roundsOverride: Int?
var filter: String?
var nioExecutor = false
var connections = 16
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--base-url": baseURLText = arguments.next()
    case "--rounds": roundsOverride = arguments.next().flatMap(Int.init)
    case "--filter": filter = arguments.next()
    case "--nio-executor": nioExecutor = true
    case "--connections": connections = arguments.next().flatMap(Int.init) ?? connections
    default:
        print(
            "usage: depot-ahc-benchmarks --base-url URL [--rounds N] [--filter TEXT] [--nio-executor] [--connections N]"
        )
        exit(2)
    }
}
guard let baseURLText, let baseURL = URL(string: baseURLText) else {
    print("depot-ahc-benchmarks needs --base-url (bash scripts/bench --ahc starts the server)")
    exit(2)
}
if nioExecutor {
    // The app's choice, never a library's: Swift concurrency's global executor becomes
    // SwiftNIO's event loops (see the README's "On servers" section for the caveats).
    let installed = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    print("SwiftNIO's event loops as the global executor: \(installed ? "installed" : "NOT installed")")
}

// One client for Depot and the hand-written AHC side: the same connection pool and
// configuration, so that the ratio is what Depot adds.
// The pool allows as many connections as requests in flight (`--connections N`, default 16;
// AsyncHTTPClient's default is 8), as a server that sends 16 at a time would configure it.
var configuration = AsyncHTTPClientBackend.recommendedConfiguration()
configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
let client = HTTPClient(eventLoopGroup: NIOSingletons.posixEventLoopGroup, configuration: configuration)
let backend = AsyncHTTPClientBackend(baseURL: baseURL, client: client)
let photos = PhotoRepository(backend: backend)
let handAHC = HandWrittenAHC(client: client, baseURL: baseURLText)
let handURLSession = HandWrittenURLSession(baseURL: baseURL)
let requests = 500
let width = 16
let photoIDs = ids(requests, in: 5000)
let expected = photoIDs.reduce(0, +)

let cases: [Case] = [
    Case(
        name: "ahc.findByID.sequential", rounds: 31, requests: requests, targetAHC: 1.05,
        targetURLSession: 0.55,
        depot: {
            var sum = 0
            for id in photoIDs { sum &+= try await photos.findByID(id).value.id }
            try check(sum == expected, "findByID returned other photos")
        },
        ahc: {
            var sum = 0
            for id in photoIDs { sum &+= try await handAHC.get(Photo.self, "photos/\(id)").id }
            try check(sum == expected, "AHC returned other photos")
        },
        urlSession: {
            var sum = 0
            for id in photoIDs { sum &+= try await handURLSession.get(Photo.self, "photos/\(id)").id }
            try check(sum == expected, "URLSession returned other photos")
        }),
    Case(
        name: "ahc.findByID.concurrent16", rounds: 31, requests: requests, targetAHC: 1.05,
        targetURLSession: 0.40,
        depot: {
            let sum = try await inParallel(requests, width: width) {
                try await photos.findByID(photoIDs[$0]).value.id
            }
            try check(sum == expected, "findByID returned other photos")
        },
        ahc: {
            let sum = try await inParallel(requests, width: width) {
                try await handAHC.get(Photo.self, "photos/\(photoIDs[$0])").id
            }
            try check(sum == expected, "AHC returned other photos")
        },
        urlSession: {
            let sum = try await inParallel(requests, width: width) {
                try await handURLSession.get(Photo.self, "photos/\(photoIDs[$0])").id
            }
            try check(sum == expected, "URLSession returned other photos")
        }),
    Case(
        name: "ahc.findAll.photos5000", rounds: 21, requests: 1, targetAHC: 1.05, targetURLSession: nil,
        depot: {
            let all = try await photos.findAll().value
            try check(all.count == 5000, "findAll returned \(all.count) photos")
        },
        ahc: {
            let all = try await handAHC.get([Photo].self, "photos")
            try check(all.count == 5000, "AHC decoded \(all.count) photos")
        },
        urlSession: {
            let all = try await handURLSession.get([Photo].self, "photos")
            try check(all.count == 5000, "URLSession decoded \(all.count) photos")
        }),
]

print(
    "case                          Depot-AHC  hand AHC  URLSession  ÷AHC   target  ÷URLSession  target  rounds  result"
)
print(String(repeating: "-", count: 116))
var missed = false
for benchmark in cases where filter.map({ benchmark.name.contains($0) }) ?? true {
    let rounds = roundsOverride ?? benchmark.rounds
    let result = try await measure(benchmark, rounds: rounds)
    let metAHC = result.ratioAHC <= result.targetAHC
    let metURLSession = result.targetURLSession.map { result.ratioURLSession <= $0 } ?? true
    if !(metAHC && metURLSession) { missed = true }
    let line =
        result.name.padding(toLength: 28, withPad: " ", startingAt: 0)
        + format(result.median[0]).leftPadded(11) + format(result.median[1]).leftPadded(10)
        + format(result.median[2]).leftPadded(12) + String(format: "%.3f", result.ratioAHC).leftPadded(7)
        + ("≤ " + String(format: "%.2f", result.targetAHC)).leftPadded(9)
        + String(format: "%.3f", result.ratioURLSession).leftPadded(13)
        + (result.targetURLSession.map { "≤ " + String(format: "%.2f", $0) } ?? "—").leftPadded(8)
        + String(result.rounds).leftPadded(8) + (metAHC && metURLSession ? "   met" : "   MISSED")
    print(line)
    if result.requests > 1 {
        let perRequest = result.median.map { $0 / Double(result.requests) }
        print(
            "  per request: wall Depot-AHC \(format(perRequest[0])), hand AHC \(format(perRequest[1])), "
                + "URLSession \(format(perRequest[2])); CPU Depot-AHC \(format(result.cpuPerRequest[0])), "
                + "hand AHC \(format(result.cpuPerRequest[1])), URLSession \(format(result.cpuPerRequest[2])) "
                + String(
                    format: "(CPU ÷AHC %.3f, ÷URLSession %.3f)",
                    result.cpuPerRequest[0] / result.cpuPerRequest[1],
                    result.cpuPerRequest[0] / result.cpuPerRequest[2]))
    }
}
try await backend.shutdown()
try await client.shutdown().get()
if missed { print("(a target was missed: the figures above are what this run measured)") }

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
