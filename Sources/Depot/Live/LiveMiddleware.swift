import Foundation

/// Makes a chain watchable: tells watched reads (``LiveWatch``, ``LiveQuery``) when a write
/// touches what they read, and lets identical reads in flight share one request. Add it once,
/// first in the chain:
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: api).with(.live(), .offline(store), auth, .retry())
/// ```
///
/// What a write touches, and which reads share a request: the article *Live Queries*.
public struct LiveMiddleware: Middleware {
    package let feed: ChangeFeed
    private let flights: Locked<[FlightKey: Flight]>
    private let account: @Sendable () -> String

    /// A middleware with no watches yet.
    ///
    /// - Parameter account: who is signed in now, asked for each read (any text that tells
    ///   accounts apart: a user id); reads of different accounts never share a request.
    public init(account: @escaping @Sendable () -> String = { "" }) {
        let flights = Locked([FlightKey: Flight]())
        self.flights = flights
        self.account = account
        // A change closes the shared reads it touches to newcomers: their answer may predate it.
        feed = ChangeFeed { changes in
            flights.withLock { flights in
                flights = flights.filter { key, _ in !changes.contains { $0.touches(key.fields.resource) } }
            }
        }
    }

    /// Tells the watches that depend on `resource` to read again, as a write to it would: a
    /// record (`.record("abc", in: ["posts"])`: it, what is under it, and its collection's
    /// listings), a collection (`posts`, `posts/7/comments`: its listings, also under a parent,
    /// and the record it lies under), a singular resource (it).
    public func invalidate(_ resource: RequestResource) {
        feed.publish([ChangeFeed.Change(resource)])
    }

    /// Tells the watches that depend on `path` to read again: the path read by json-server's
    /// convention (``RequestResource/init(path:)``: names and ids alternate, so `posts/7` and
    /// `posts/abc` are records, `posts` and `posts/7/comments` collections). Say what a path
    /// means with ``invalidate(_:)`` when the convention does not fit.
    public func invalidate(path: String) {
        invalidate(RequestResource(path: path))
    }

    /// Shares identical `GET`s in flight, records what watched reads asked for, and reports
    /// writes to the watches they touch.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        switch request.method {
        case .get where request.destination == nil:
            return read(request, next: next)
        case .post, .put, .patch, .delete:
            // A replay's write is reported by the store that replays it.
            if request.context.isReplay { return next(request) }
            let feed = feed
            // This feed reports the write's outcome: a store behind tells its other listeners.
            var request = request
            request.context.publishedBy = ObjectIdentifier(feed)
            return Future { [request] promise in
                next(request).start { result in
                    switch result {
                    case .success, .failure(.queued):
                        feed.publish([ChangeFeed.Change(request.method, request.resource)])
                    default: break
                    }
                    promise(result)
                }
            }
        default:
            return next(request)
        }
    }

    // MARK: - Shared reads

    /// What makes two `GET`s the same read.
    ///
    /// Its fields are hashed once, when it is made: a read looks its key up and adds it, then
    /// looks it up and removes it, and each of those would hash every header and query item
    /// again.
    private struct FlightKey: Hashable {
        struct Fields: Hashable {
            var path: String
            var query: [URLQueryItem]
            var headers: HTTPHeaders
            var isRetryable: Bool
            var account: String
            var storedOnly: Bool
            /// What the read asks for, as changes name it.
            var resource: RequestResource
        }

        let fields: Fields
        private let hash: Int

        init(_ fields: Fields) {
            self.fields = fields
            hash = fields.hashValue
        }

        static func == (lhs: FlightKey, rhs: FlightKey) -> Bool {
            lhs.hash == rhs.hash && lhs.fields == rhs.fields
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }
    }

    /// One request in flight and the callers waiting for it.
    private final class Flight: Sendable {
        struct Waiter {
            var promise: Future<BackendResponse, ServiceError>.Promise
            var receipt: AnswerReceipt?
            var recorder: ReadRecorder?
        }

        /// The feed's version when the request was sent: changes after it may be missing from
        /// the answer.
        let version: Int
        /// The callers; `closed` once the answer came or every caller left.
        let state = Locked((waiters: Registry<Waiter>(), work: (any Cancellable)?.none, closed: false))

        init(version: Int) {
            self.version = version
        }

        /// Adds a caller; `nil` when the flight has closed.
        func join(_ waiter: Waiter) -> Int? {
            state.withLock { state in
                guard !state.closed else { return nil }
                return state.waiters.add(waiter)
            }
        }
    }

    private func read(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let feed = feed
        let flights = flights
        let account = account
        return Future { promise in
            let receipt = request.context.receipt
            let recorder = request.context.reads
            // A body or a progress handler is the caller's own: such a read is not shared.
            guard request.body == nil, request.bodyFile == nil, request.progress == nil else {
                let version = feed.version
                return next(request).start { result in
                    recorder?.record(request, result, feed: feed, since: version)
                    promise(result)
                }
            }
            let key = FlightKey(
                FlightKey.Fields(
                    path: request.path, query: request.query, headers: request.headers,
                    isRetryable: request.isRetryable, account: account(),
                    storedOnly: request.context.storedOnly,
                    resource: request.resource))
            let waiter = Flight.Waiter(promise: promise, receipt: receipt, recorder: recorder)
            // Join the flight in the air, or start one.
            var joined: (flight: Flight, id: Int)?
            var started: Flight?
            while joined == nil {
                // Taken before the request can be sent: changes after it may be missing.
                let version = feed.version
                let (flight, isNew) = flights.withLock { flights -> (Flight, Bool) in
                    if let flight = flights[key] { return (flight, false) }
                    let flight = Flight(version: version)
                    flights[key] = flight
                    return (flight, true)
                }
                if let id = flight.join(waiter) {
                    joined = (flight, id)
                    if isNew { started = flight }
                } else {
                    // Closed a moment ago: gone from the table once its callers are told.
                    flights.withLock { if $0[key] === flight { $0[key] = nil } }
                }
            }
            guard let (flight, id) = joined else { return NotCancellable() }
            if let flight = started {
                // What the chain behind tells one caller, every caller hears: where the answer
                // came from, and whether a store answered a watch's first look.
                let shared = AnswerReceipt()
                let sharedRecorder = ReadRecorder()
                var sent = request
                sent.context.receipt = shared
                sent.context.reads = sharedRecorder
                let work = next(sent).start { result in
                    let waiters = flight.state.withLock { state in
                        state.closed = true
                        return state.waiters.removeAll()
                    }
                    flights.withLock { if $0[key] === flight { $0[key] = nil } }
                    for waiter in waiters {
                        if case .stored(let savedAt) = shared.source {
                            waiter.receipt?.record(.stored(savedAt: savedAt))
                        }
                        waiter.receipt?.record(pendingWrites: shared.pendingWrites)
                        if sharedRecorder.consultedStore { waiter.recorder?.noteStoreConsulted() }
                        waiter.recorder?.record(request, result, feed: feed, since: flight.version)
                        waiter.promise(result)
                    }
                }
                flight.state.withLock { $0.work = work }
            }
            let token = CancellationToken()
            token.onCancel {
                // This caller stops waiting; the request stops when nobody waits, and nobody
                // joins it after.
                let (left, work) = flight.state.withLock { state -> (Flight.Waiter?, (any Cancellable)?) in
                    let left = state.waiters.remove(id)
                    guard left != nil, state.waiters.isEmpty, !state.closed else { return (left, nil) }
                    state.closed = true
                    return (left, state.work)
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

extension LiveMiddleware: ChainAttached {
    /// Subscribes to the stores of the chain behind that report changes of their own
    /// (DepotOffline's replays), once each.
    package func attach(to next: any Backend) {
        for case let source as any ChangeSource in next.middlewareChain {
            feed.follow(source)
        }
    }
}

extension Middleware where Self == LiveMiddleware {
    /// Tells watched reads when writes touch what they read, and shares identical reads in
    /// flight; see ``LiveMiddleware``. List it first.
    ///
    /// - Parameter account: who is signed in now (a user id); reads of different accounts
    ///   never share a request.
    public static func live(account: @escaping @Sendable () -> String = { "" }) -> LiveMiddleware {
        LiveMiddleware(account: account)
    }
}
