import Foundation

@testable import Depot

/// A backend for middleware tests that answers from a script and records what it was sent
/// and when, to show timing and ordering no real server can.
final class ScriptedBackend: Backend, Sendable {
    /// One answer.
    enum Reply: Sendable {
        /// A response with this status, classified like every backend does: 2xx succeeds,
        /// anything else becomes its ``ServiceError``.
        case status(Int, headers: HTTPHeaders = [:], body: String = "")
        /// A transport failure (or any error) without a response.
        case failure(ServiceError)
        /// No answer until the request is cancelled, then `.cancelled`.
        case hang
    }

    /// Answers a request, at once or later, through the callback.
    typealias Handler =
        @Sendable (_ request: BackendRequest, _ index: Int, _ reply: @escaping @Sendable (Reply) -> Void)
        -> Void

    private struct Log {
        var requests: [BackendRequest] = []
        var times: [ContinuousClock.Instant] = []
        var cancellations = 0
    }

    private let handler: Handler
    private let log = Locked(Log())
    private let arrivals: AsyncStream<BackendRequest>.Continuation
    /// Every request, as it arrives.
    let received: AsyncStream<BackendRequest>

    /// A backend with a full handler.
    init(handler: @escaping Handler) {
        self.handler = handler
        (received, arrivals) = AsyncStream.makeStream(of: BackendRequest.self)
    }

    /// A backend that gives `replies` in order, then `otherwise` to every later request.
    convenience init(_ replies: [Reply], otherwise: Reply = .status(200)) {
        self.init { _, index, reply in
            reply(index < replies.count ? replies[index] : otherwise)
        }
    }

    /// A backend that answers each request from what it carries.
    convenience init(respond: @escaping @Sendable (BackendRequest) -> Reply) {
        self.init { request, _, reply in reply(respond(request)) }
    }

    /// The requests received, in order.
    var requests: [BackendRequest] {
        log.withLock { $0.requests }
    }

    /// When each request arrived, on the monotonic clock.
    var attemptTimes: [ContinuousClock.Instant] {
        log.withLock { $0.times }
    }

    /// How many requests were cancelled before they were answered.
    var cancellations: Int {
        log.withLock { $0.cancellations }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future { [self] completion in
            let index = log.withLock { log in
                log.requests.append(request)
                log.times.append(ContinuousClock.now)
                return log.requests.count - 1
            }
            arrivals.yield(request)
            let answered = Locked(false)
            let finish: @Sendable (Result<BackendResponse, ServiceError>) -> Void = { result in
                let first = answered.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { completion(result) }
            }
            let token = CancellationToken()
            token.onCancel { [self] in
                let wasPending = answered.withLock { !$0 }
                if wasPending { log.withLock { $0.cancellations += 1 } }
                finish(.failure(.cancelled))
            }
            handler(request, index) { reply in
                switch reply {
                case .status(let status, let headers, let body):
                    let response = BackendResponse(status: status, headers: headers, body: Data(body.utf8))
                    finish(ServiceError.check(response, for: request))
                case .failure(let error):
                    finish(.failure(error))
                case .hang:
                    break
                }
            }
            return token
        }
    }
}
