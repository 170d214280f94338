import Depot
import Foundation

extension Result {
    /// The failure, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension ServiceError {
    /// The case's name, for table-driven assertions.
    var conformanceCaseName: String {
        switch self {
        case .invalidRequest: "invalidRequest"
        case .cannotConnect: "cannotConnect"
        case .noConnection: "noConnection"
        case .timedOut: "timedOut"
        case .cancelled: "cancelled"
        case .transport: "transport"
        case .unauthorized: "unauthorized"
        case .forbidden: "forbidden"
        case .notFound: "notFound"
        case .conflict: "conflict"
        case .clientError: "clientError"
        case .serviceUnavailable: "serviceUnavailable"
        case .serverError: "serverError"
        case .unexpectedStatus: "unexpectedStatus"
        case .decoding: "decoding"
        case .queued: "queued"
        }
    }
}

extension BackendResponse {
    /// The body as a JSON object, for httpbin's echoes.
    func conformanceJSON() throws -> [String: JSONValue] {
        try JSONDecoder().decode([String: JSONValue].self, from: body)
    }
}

/// One start of a future with a completion that counts its calls.
struct StartedOnce<Value: Sendable>: Sendable {
    /// The first outcome, or `nil` when none came within the bound.
    let first: Result<Value, ServiceError>?
    /// Seconds from start to the first outcome (or to the bound).
    let elapsed: Double
    /// How many times the completion ran so far.
    let completions: @Sendable () -> Int

    /// Starts `future` and waits for its first outcome, at most `bound` seconds; then
    /// waits a further quarter second, so that a second call of the completion (which
    /// would come from the same request's other ending) has its chance to be counted.
    static func run(_ future: Future<Value, ServiceError>, within bound: TimeInterval) async -> Self {
        let count = Locked(0)
        let clock = ContinuousClock()
        let start = clock.now
        let gate = Locked<CheckedContinuation<Result<Value, ServiceError>?, Never>?>(nil)
        let first: Result<Value, ServiceError>? = await withCheckedContinuation { continuation in
            gate.withLock { $0 = continuation }
            future.start { result in
                count.withLock { $0 += 1 }
                gate.withLock { $0.take() }?.resume(returning: result)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + bound + 1) {
                gate.withLock { $0.take() }?.resume(returning: nil)
            }
        }
        let elapsed = start.duration(to: clock.now)
        try? await Task.sleep(for: .milliseconds(250))
        return StartedOnce(
            first: first,
            elapsed: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            completions: { count.withLock { $0 } })
    }
}

/// The outcomes of `count` requests sent through `backend` at once (`request(1)` …
/// `request(count)`), in the order they ended; empty when they took over `seconds`.
public func sendConcurrently(
    _ count: Int, through backend: any Backend, within seconds: Double = 10,
    _ request: @escaping @Sendable (Int) -> BackendRequest
) async -> [Result<BackendResponse, ServiceError>] {
    await withTaskGroup(of: [Result<BackendResponse, ServiceError>]?.self) { outer in
        outer.addTask {
            await withTaskGroup(of: Result<BackendResponse, ServiceError>.self) { group in
                for index in 1...count {
                    group.addTask { await backend.send(request(index)).result }
                }
                return await group.reduce(into: [Result<BackendResponse, ServiceError>]()) { $0.append($1) }
            }
        }
        outer.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await outer.next() ?? nil
        outer.cancelAll()
        return first ?? []
    }
}

/// An app that starts signed out and gets its first access token from the bearer
/// middleware's `refresh` (with a refresh credential it holds, or by signing in lazily).
public actor SignedOutSession {
    /// The token to send: none until a refresh issued one.
    public private(set) var accessToken: String?
    /// What each refresh was given: the rejected token, or `nil` for none.
    public private(set) var refreshes: [String?] = []
    private let issued: String

    /// A session whose refresh issues `token`.
    public init(issuing token: String) {
        issued = token
    }

    /// Issues the token and keeps it where ``accessToken`` reads it.
    public func refresh(replacing rejected: String?) async throws -> String {
        refreshes.append(rejected)
        accessToken = issued
        return issued
    }

    /// The bearer middleware over this session.
    public nonisolated var middleware: BearerAuthMiddleware {
        .bearer(
            token: { await self.accessToken },
            refresh: { rejected in try await self.refresh(replacing: rejected) })
    }
}
