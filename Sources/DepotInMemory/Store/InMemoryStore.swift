import Depot
import Foundation
import JSONServerEngine

/// The state behind an ``InMemoryBackend``: the database, the request log, pending
/// faults, routes and settings, all behind one recursive lock.
///
/// The lock is recursive so that a route handler, which runs while it is held, can
/// use its ``RouteContext`` (or even the backend) without deadlocking; every access
/// from any thread goes through ``locked(_:)``.
final class InMemoryStore: @unchecked Sendable {
    /// What happened to a request on arrival.
    enum Reception {
        /// It was answered at once (no latency).
        case answered(Result<BackendResponse, ServiceError>)
        /// It must be answered after this many seconds.
        case delayed(TimeInterval)
    }

    private let lock = NSRecursiveLock()
    // Every access holds `lock`, and none overlaps another (each is a read or a write of its
    // own; `routes` is iterated as a copy, so a handler may add routes): the dynamic
    // exclusivity checks, a runtime call per access on every request, are left out.
    @exclusivity(unchecked) private var database: Database
    @exclusivity(unchecked) private var log = RequestLog()
    @exclusivity(unchecked) private var faults: [(remaining: Int, fault: Fault)] = []
    @exclusivity(unchecked) private var standingFault: ServiceError?
    @exclusivity(unchecked) private var routes: [Route] = []
    @exclusivity(unchecked) private var base: BaseLocation
    private var baseURLValue: URL
    @exclusivity(unchecked) private var latencyValue: TimeInterval = 0

    init(database: Database, baseURL: URL) {
        self.database = database
        self.baseURLValue = baseURL
        self.base = BaseLocation(baseURL)
    }

    /// Runs `body` while holding the lock.
    func locked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: - Settings

    var baseURL: URL {
        get { locked { baseURLValue } }
        set {
            locked {
                baseURLValue = newValue
                base = BaseLocation(newValue)
            }
        }
    }

    var latency: TimeInterval {
        get { locked { latencyValue } }
        set { locked { latencyValue = newValue } }
    }

    var requests: [BackendRequest] { locked { log.requests } }

    func clearRequests() {
        locked { log = RequestLog() }
    }

    /// What an injected fault answers a request with.
    enum Fault {
        /// A response, classified as usual.
        case response(BackendResponse)
        /// A failure before any response, as the network's.
        case transport(ServiceError)
    }

    func failNext(_ count: Int, _ fault: Fault) {
        guard count > 0 else { return }
        locked { faults.append((count, fault)) }
    }

    /// Fails every request with `error` (or, for `nil`, stops doing so and drops the pending
    /// faults).
    func failAll(with error: ServiceError?) {
        locked {
            standingFault = error
            if error == nil { faults.removeAll() }
        }
    }

    func add(_ route: Route) {
        locked { routes.append(route) }
    }

    /// Runs `body` on the database, under the lock.
    func withDatabase<Result, Failure: Error>(_ body: (Database) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        try locked { () throws(Failure) -> Result in try body(database) }
    }

    // MARK: - Answering

    /// Logs `request`, and answers it now unless there is latency.
    func receive(_ request: BackendRequest, body: ParsedBody) -> Reception {
        locked {
            log.append(RequestTarget.logged(request, base: base))
            // Refused as URLSessionBackend refuses it: before any fault, route or delay.
            do throws(ServiceError) {
                try request.validate()
            } catch {
                return .answered(.failure(error))
            }
            if latencyValue > 0 { return .delayed(latencyValue) }
            return .answered(answerHoldingLock(request, body: body))
        }
    }

    /// The outcome of `request`: ``failAll(with:)``'s error, else a pending fault, else the first matching route,
    /// else json-server's behaviour, with json-server's `ETag` or `304` (``ConditionalGET``);
    /// classified by ``Depot/ServiceError/init(response:for:)``.
    func answer(_ request: BackendRequest, body: ParsedBody) -> Result<BackendResponse, ServiceError> {
        locked { answerHoldingLock(request, body: body) }
    }

    /// ``answer(_:body:)`` for a caller that holds the lock (taking it again, as the lock is
    /// recursive, would cost a lock and an unlock more per request).
    private func answerHoldingLock(_ request: BackendRequest, body: ParsedBody) -> Result<
        BackendResponse, ServiceError
    > {
        var response: BackendResponse
        switch takeFault() {
        case .transport(let error)?:
            return .failure(error)
        case .response(let fault)?:
            response = fault
        case nil:
            do throws(ServiceError) {
                response = try respond(request, body: body)
            } catch {
                return .failure(error)
            }
        }
        if request.method == .head { response.body = Data() }
        return ServiceError.check(ConditionalGET.apply(to: response, for: request), for: request)
    }

    /// The answer to `request` from the routes or json-server, unclassified.
    private func respond(_ request: BackendRequest, body: ParsedBody) throws(ServiceError) -> BackendResponse
    {
        // A path outside the base is one no route serves: json-server's 404, `{}`.
        guard let target = try RequestTarget.parse(request, base: base) else {
            return Refusal.notFound.response
        }
        for route in routes where route.answers(request.method) {
            guard let parameters = route.pattern.match(target.segments) else { continue }
            let context = RouteContext(
                store: self, request: request, target: target, parameters: parameters, body: body,
                baseURL: baseURLValue)
            return try route.handler(context)
        }
        return JSONServer(database: database, base: base).respond(request.method, target, body: body)
    }

    /// json-server's answer to `request`, ignoring routes and faults (for
    /// ``RouteContext/jsonServerResponse(for:)``).
    func jsonServerResponse(_ request: BackendRequest) -> BackendResponse {
        locked {
            do throws(ServiceError) {
                guard let target = try RequestTarget.parse(request, base: base) else {
                    return Refusal.notFound.response
                }
                var response = JSONServer(database: database, base: base)
                    .respond(request.method, target, body: ParsedBody(request))
                if request.method == .head { response.body = Data() }
                return response
            } catch {
                return .error(400, error.localizedDescription)
            }
        }
    }

    private func takeFault() -> Fault? {
        if let standingFault { return .transport(standingFault) }
        guard !faults.isEmpty else { return nil }
        let fault = faults[0].fault
        faults[0].remaining -= 1
        if faults[0].remaining <= 0 { faults.removeFirst() }
        return fault
    }
}

/// The requests an ``InMemoryStore`` received, in order: filled in chunks of a fixed size,
/// so that logging a request never copies the requests before it (a single array would be
/// copied to a new buffer, and its fresh pages touched, each time it doubles).
struct RequestLog {
    /// Requests per chunk: about 80 KB of them, which the allocator serves from its heap.
    private static let chunkSize = 1024

    /// The chunks before the last, each holding ``chunkSize`` requests.
    private var full: [[BackendRequest]] = []
    /// The last chunk, not yet full.
    private var last: [BackendRequest] = []

    /// Logs `request` after the others.
    mutating func append(_ request: BackendRequest) {
        if last.count == Self.chunkSize {
            full.append(last)
            last = []
            last.reserveCapacity(Self.chunkSize)
        }
        last.append(request)
    }

    /// Every request logged, in order.
    var requests: [BackendRequest] {
        guard !full.isEmpty else { return last }
        var all: [BackendRequest] = []
        all.reserveCapacity(full.count * Self.chunkSize + last.count)
        for chunk in full { all.append(contentsOf: chunk) }
        all.append(contentsOf: last)
        return all
    }
}
