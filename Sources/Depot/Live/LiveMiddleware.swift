import Foundation

/// Makes a chain watchable: tells watched reads (``LiveWatch``, ``LiveQuery``) when a write
/// touches what they read, and lets identical reads in flight share one request.
///
/// Add it once, first:
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: api).with(.live(), .offline(store), auth, .retry())
/// for await snapshot in posts.watch({ try await $0.findAll().value }) { render(snapshot) }
/// ```
///
/// **Changes.** A write through it (`POST`, `PUT`, `PATCH`, `DELETE`) that succeeds, or that
/// DepotOffline queues (``ServiceError/queued(_:)``), touches its path: watches whose reads
/// asked for that record (`posts/7`) or its collection (`posts?…`, `users/1/posts`) read
/// again; watches of other resources (`users`) do not. DepotOffline's `.offline(store)`
/// behind it also reports what its replays send, create and roll back. ``invalidate(path:)``
/// touches a path by hand (after a push notification, say).
///
/// **Shared reads.** `GET`s in flight at the same moment with the same path, query and header
/// fields share one request: the first is sent, the others wait for its answer (100 watches
/// of one query started together send 1 request). Writes are never shared. Cancelling one of
/// the callers ends its wait; the request is cancelled when every caller has cancelled. Put
/// it in front of authentication, where the requests carry only the app's own header fields
/// (so two accounts' reads never share: give each account its own chain).
public struct LiveMiddleware: Middleware {
    let feed = ChangeFeed()
    private let flights = Locked([FlightKey: Flight]())

    /// A middleware with no watches yet.
    public init() {}

    /// Tells the watches that depend on `path` to read again, as a write to it would: a path
    /// of one segment names a collection (`posts`: its listings, also under a parent), a longer
    /// one a record (`posts/7`: it, and its collection's listings).
    public func invalidate(path: String) {
        feed.publish([ChangeFeed.Change(path: path)])
    }

    /// Shares identical `GET`s in flight, records what watched reads asked for, and reports
    /// writes to the watches they touch.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let feed = feed
        switch request.method {
        case .get where request.destination == nil:
            return read(request, next: next)
        case .post, .put, .patch, .delete:
            return Future { promise in
                ChangeFeed.$current.withValue(feed) {
                    next(request).start { result in
                        switch result {
                        case .success, .failure(.queued):
                            feed.publish([ChangeFeed.Change(request.method, path: request.path)])
                        default: break
                        }
                        promise(result)
                    }
                }
            }
        default:
            return ChangeFeed.$current.withValue(feed) { next(request) }
        }
    }

    // MARK: - Shared reads

    /// What makes two `GET`s the same read.
    private struct FlightKey: Hashable {
        var path: String
        var query: [URLQueryItem]
        var headers: HTTPHeaders
        var storedOnly: Bool
    }

    /// One request in flight and the callers waiting for it.
    private final class Flight: Sendable {
        struct Waiter {
            var promise: Future<BackendResponse, ServiceError>.Promise
            var receipt: AnswerReceipt?
            var recorder: ReadRecorder?
        }

        let state = Locked((waiters: [Int: Waiter](), nextID: 0, work: (any Cancellable)?.none, done: false))

        /// Adds a caller; `nil` when the flight has already answered.
        func join(_ waiter: Waiter) -> Int? {
            state.withLock { state in
                guard !state.done else { return nil }
                defer { state.nextID += 1 }
                state.waiters[state.nextID] = waiter
                return state.nextID
            }
        }
    }

    private func read(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let feed = feed
        let flights = flights
        return Future { promise in
            let storedOnly = ReadRecorder.storedOnly
            let key = FlightKey(
                path: request.path, query: request.query, headers: request.headers, storedOnly: storedOnly)
            let waiter = Flight.Waiter(
                promise: promise, receipt: AnswerReceipt.current, recorder: ReadRecorder.current)
            // Join the flight in the air, or start one.
            var joined: (flight: Flight, id: Int)?
            var started: Flight?
            while joined == nil {
                let (flight, isNew) = flights.withLock { flights -> (Flight, Bool) in
                    if let flight = flights[key] { return (flight, false) }
                    let flight = Flight()
                    flights[key] = flight
                    return (flight, true)
                }
                if let id = flight.join(waiter) {
                    joined = (flight, id)
                    if isNew { started = flight }
                } else {
                    // Answered a moment ago: gone from the table once its callers are told.
                    flights.withLock { if $0[key] === flight { $0[key] = nil } }
                }
            }
            guard let (flight, id) = joined else { return NotCancellable() }
            if let flight = started {
                // What the chain behind tells one caller, every caller hears: where the answer
                // came from, and whether a store answered a watch's first look.
                let shared = AnswerReceipt()
                let sharedRecorder = ReadRecorder()
                let finish: @Sendable (Result<BackendResponse, ServiceError>) -> Void = { result in
                    let waiters = flight.state.withLock { state in
                        state.done = true
                        return Array(state.waiters.values)
                    }
                    flights.withLock { if $0[key] === flight { $0[key] = nil } }
                    for waiter in waiters {
                        if case .stored(let savedAt) = shared.source {
                            waiter.receipt?.record(.stored(savedAt: savedAt))
                        }
                        waiter.receipt?.record(pendingWrites: shared.pendingWrites)
                        if sharedRecorder.consultedStore { waiter.recorder?.noteStoreConsulted() }
                        waiter.recorder?.record(request, result, feed: feed)
                        waiter.promise(result)
                    }
                }
                // An answer that comes while starting (in the values set here for the chain
                // behind) is handed on after, so that the callers' next requests start in their own.
                let early = Locked((starting: true, result: Result<BackendResponse, ServiceError>?.none))
                let work = shared.collectStarts {
                    ChangeFeed.$current.withValue(feed) {
                        ReadRecorder.$current.withValue(sharedRecorder) {
                            next(request).start { result in
                                let now = early.withLock { early -> Bool in
                                    guard early.starting else { return true }
                                    early.result = result
                                    return false
                                }
                                if now { finish(result) }
                            }
                        }
                    }
                }
                if let result = early.withLock({ early in
                    early.starting = false
                    return early.result
                }) {
                    finish(result)
                }
                let cancelNow = flight.state.withLock { state -> Bool in
                    state.work = work
                    return state.waiters.isEmpty && !state.done
                }
                if cancelNow { work.cancel() }
            }
            let token = CancellationToken()
            token.onCancel {
                // This caller stops waiting; the request stops when nobody waits.
                let (left, work) = flight.state.withLock { state -> (Flight.Waiter?, (any Cancellable)?) in
                    let left = state.waiters.removeValue(forKey: id)
                    return (left, state.waiters.isEmpty && !state.done ? state.work : nil)
                }
                left?.promise(.failure(.cancelled))
                if let work {
                    flights.withLock { if $0[key] === flight { $0[key] = nil } }
                    work.cancel()
                }
            }
            return token
        }
    }
}

extension Middleware where Self == LiveMiddleware {
    /// Tells watched reads when writes touch what they read, and shares identical reads in
    /// flight; see ``LiveMiddleware``. List it first.
    public static func live() -> LiveMiddleware {
        LiveMiddleware()
    }
}
