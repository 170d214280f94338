import AsyncHTTPClient
@_spi(BackendSupport) import Depot
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The innermost backend of an ``AsyncHTTPClientBackend``: one ``Exchange`` per start.
struct AsyncHTTPClientTransport: Backend {
    let client: ClientBox
    let preparation: HTTPRequestPreparation
    let timeout: TimeInterval?
    let maximumResponseBytes: Int?

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let transport = self
        return Future { completion in
            let exchange = Exchange(transport: transport, request: request, promise: completion)
            exchange.start()
            return exchange
        }
    }

    /// The request's first hop as it goes out, and the file its answer goes to: Depot's
    /// preparation (which checks a body file and a destination on disk), `Accept-Encoding`
    /// on a client of the backend's own (which decompresses), as `URLSession` sends it, and
    /// the fields that continue an earlier attempt's bytes.
    fileprivate func prepare(_ request: BackendRequest) throws(ServiceError) -> FirstHop {
        var prepared = try preparation.prepare(request)
        if client.owned, !prepared.headers.contains("Accept-Encoding") {
            prepared.headers["Accept-Encoding"] = "gzip, deflate"
        }
        // The answer streams into the file, so an earlier attempt's bytes can be continued.
        let download = try request.destination.map { destination throws(ServiceError) in
            try DownloadFile(destination)
        }
        for field in download?.resumeFields ?? [] { prepared.headers[field.name] = field.value }
        return FirstHop(request: prepared, download: download)
    }
}

/// The first hop of a request, and the file its answer goes to when it is a download.
private struct FirstHop: Sendable {
    let request: PreparedHTTPRequest
    let download: DownloadFile?
}

/// One started request: its hops (redirects), its deadline, its cancellation, and the
/// one call of its promise.
///
/// Its file work (the checks of a body file and a destination, the body file's reads, the
/// download's writes, its move into place or removal) runs on ``FileWork``'s thread pool,
/// never on an event loop.
final class Exchange: Cancellable, Sendable {
    private let transport: AsyncHTTPClientTransport
    private let request: BackendRequest
    /// The loop the request's own steps (its deadline, the ends of its file work) run on.
    private let eventLoop: any EventLoop
    private let files = FileWork()
    private let deadline: NIODeadline?
    private let state: NIOLockedValueBox<State>

    private struct State {
        var promise: Future<BackendResponse, ServiceError>.Promise?
        /// The redirect rule, once the first hop is prepared.
        var redirects: HTTPRedirectRule?
        /// The file a download's answer goes to, once the first hop is prepared.
        var download: DownloadFile?
        /// Why Depot ended the request, when it did (the first reason wins).
        var ending: ServiceError?
        var task: HTTPClient.Task<Collected>?
        var timer: Scheduled<Void>?
    }

    init(
        transport: AsyncHTTPClientTransport, request: BackendRequest,
        promise: Future<BackendResponse, ServiceError>.Promise
    ) {
        self.transport = transport
        self.request = request
        eventLoop = transport.client.client.eventLoopGroup.any()
        // A timeout past a century (or infinite) is none: its nanoseconds would not fit.
        deadline = transport.timeout.flatMap { seconds in
            seconds < 3e9 ? .now() + .nanoseconds(Int64((seconds * 1e9).rounded(.up))) : nil
        }
        state = NIOLockedValueBox(State(promise: promise))
    }

    /// Starts the whole-request deadline, prepares the first hop (on the thread pool when
    /// that touches the disk) and sends it.
    func start() {
        if let deadline {
            let timer = eventLoop.scheduleTask(deadline: deadline) { [weak self] () -> Void in
                self?.end(.timedOut)
            }
            let ended = state.withLockedValue { state in
                state.timer = timer
                return state.promise == nil
            }
            if ended { timer.cancel() }
        }
        let transport = self.transport
        let request = self.request
        guard request.bodyFile != nil || request.destination != nil else {
            // Nothing on disk to check: prepared here, at once.
            prepared(Result { () throws(ServiceError) in try transport.prepare(request) })
            return
        }
        files.run(on: eventLoop) { try transport.prepare(request) }.whenComplete { result in
            self.prepared(result.mapError { ServiceError(fileWorkError: $0) })
        }
    }

    /// Sends the first hop, once prepared, unless the request ended meanwhile.
    private func prepared(_ first: Result<FirstHop, ServiceError>) {
        switch first {
        case .failure(let error): finish(.failure(error))
        case .success(let first):
            let ending = state.withLockedValue { state in
                state.redirects = HTTPRedirectRule(first: first.request)
                state.download = first.download
                return state.ending
            }
            if let ending {
                finish(.failure(ending))
            } else {
                send(first.request)
            }
        }
    }

    /// Sends one hop, once the size of its body file (if any) is known.
    private func send(_ prepared: PreparedHTTPRequest) {
        guard let file = prepared.bodyFile else {
            execute(prepared, bodyFileSize: nil)
            return
        }
        files.run(on: eventLoop) { try BackendRequest.size(ofBodyFile: file) }.whenComplete { result in
            switch result {
            case .success(let size): self.execute(prepared, bodyFileSize: size)
            case .failure(let error): self.finish(.failure(ServiceError(fileWorkError: error)))
            }
        }
    }

    /// Hands one hop to the client.
    private func execute(_ prepared: PreparedHTTPRequest, bodyFileSize: Int64?) {
        let body: HTTPClient.Body?
        if let file = prepared.bodyFile, let bodyFileSize {
            body = FileBody.body(streaming: file, size: bodyFileSize, files: files, on: eventLoop)
        } else {
            body = prepared.body.isEmpty ? nil : .bytes(prepared.body)
        }
        let httpRequest: HTTPClient.Request
        do {
            httpRequest = try HTTPClient.Request(
                url: prepared.url.absoluteString,
                method: NIOHTTP1.HTTPMethod(rawValue: prepared.method.rawValue),
                headers: NIOHTTP1.HTTPHeaders(prepared.headers.map { ($0.name, $0.value) }),
                body: body)
        } catch {
            finish(
                .failure(
                    .invalidRequest("\(prepared.url.absoluteString.prefix(200)) cannot be sent: \(error)")))
            return
        }
        let collector = ResponseCollector(
            limit: transport.maximumResponseBytes, isHead: prepared.method == .head,
            progress: request.progress,
            uploadSize: bodyFileSize ?? (prepared.body.isEmpty ? nil : Int64(prepared.body.count)),
            download: state.withLockedValue { $0.download }, files: files)
        let task = transport.client.client.execute(
            request: httpRequest, delegate: collector, deadline: deadline)
        let ending = state.withLockedValue { state in
            state.task = task
            return state.ending
        }
        if ending != nil { task.cancel() }
        task.futureResult.whenComplete { [self] result in
            switch result {
            case .success(let collected): self.received(collected, for: prepared, by: collector)
            case .failure(let error):
                self.failed(
                    with: ServiceError(asyncHTTPClientError: error, receivedHead: collector.receivedHead))
            }
        }
    }

    /// An answer arrived: the next hop of a redirect, or the outcome (a download's file
    /// moved into place first).
    private func received(
        _ collected: Collected, for prepared: PreparedHTTPRequest, by collector: ResponseCollector
    ) {
        let headers = HTTPHeaders(collected.headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
        let (next, download): (Result<PreparedHTTPRequest?, ServiceError>, DownloadFile?) =
            state.withLockedValue { state in
                guard state.ending == nil, var redirects = state.redirects else {
                    return (.success(nil), nil)
                }
                defer { state.redirects = redirects }
                let next = Result { () throws(ServiceError) in
                    try redirects.next(after: prepared, status: collected.status, headers: headers)
                }
                return (next, state.download)
            }
        switch next {
        case .success(let next?): send(next)
        case .success(nil):
            let response = BackendResponse(status: collected.status, headers: headers, body: collected.body)
            let outcome = ServiceError.check(response, for: request)
            guard case .success(let written) = outcome, collected.wroteFile, let download else {
                finish(outcome)
                return
            }
            // After the writes still under way, unless one of them failed.
            files.run(on: eventLoop) { () throws -> URL in
                try collector.checkWrites()
                return try download.finish()
            }
            .whenComplete { moved in
                switch moved {
                case .success(let file):
                    var answer = written
                    answer.file = file
                    self.finish(.success(answer))
                case .failure(let error): self.finish(.failure(ServiceError(fileWorkError: error)))
                }
            }
        case .failure(let error): finish(.failure(error))
        }
    }

    /// Reports a failure of the client: a `.cancelled` that Depot did not ask for is the
    /// client shutting down under the request, which is a transport failure, not the
    /// caller's cancel.
    private func failed(with error: ServiceError) {
        let asked = state.withLockedValue { $0.ending != nil }
        guard error == .cancelled, !asked else {
            finish(.failure(error))
            return
        }
        finish(
            .failure(
                .transport(
                    code: ServiceError.unknownCode,
                    description: "The HTTP client was shut down before the request ended.")))
    }

    /// Reports `outcome` (or the reason Depot ended the request) once; a download that did
    /// not end in its file is abandoned first, on the thread pool, after any write still
    /// under way.
    private func finish(_ outcome: Result<BackendResponse, ServiceError>) {
        let (promise, ending, timer, download) = state.withLockedValue { state in
            defer {
                state.promise = nil
                state.task = nil
                state.timer = nil
            }
            return (state.promise, state.ending, state.timer, state.download)
        }
        timer?.cancel()
        guard let promise else { return }
        let result = ending.map { .failure($0) } ?? outcome
        let abandonedAfter: ServiceError?
        switch result {
        case .success(let response) where response.file != nil:
            promise(result)
            return
        // An answer without a body to write (a `304`) leaves the file as it was.
        case .success: abandonedAfter = nil
        case .failure(let error): abandonedAfter = error
        }
        guard let download else {
            promise(result)
            return
        }
        files.run(on: eventLoop) { download.abandon(after: abandonedAfter) }.whenComplete { _ in
            promise(result)
        }
    }

    /// Ends the request for `reason` unless it ended already.
    private func end(_ reason: ServiceError) {
        let task: HTTPClient.Task<Collected>? = state.withLockedValue { state in
            guard state.ending == nil, state.promise != nil else { return nil }
            state.ending = reason
            return state.task
        }
        task?.cancel()
    }

    func cancel() {
        end(.cancelled)
    }
}

/// A response as the ``ResponseCollector`` gathered it.
struct Collected: Sendable {
    var status: Int
    var headers: NIOHTTP1.HTTPHeaders
    var body: Data
    /// Whether the body went to the request's ``Depot/DownloadFile`` (a 2xx to a download).
    var wroteFile = false
}
