import AsyncHTTPClient
import Depot
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
            var prepared: PreparedHTTPRequest
            let download: DownloadFile?
            do throws(ServiceError) {
                prepared = try transport.prepare(request)
                // The answer streams into the file, so an earlier attempt's bytes can be continued.
                download = try request.destination.map { destination throws(ServiceError) in
                    try DownloadFile(destination)
                }
                for field in download?.resumeFields ?? [] { prepared.headers[field.name] = field.value }
            } catch {
                completion(.failure(error))
                return AlreadyEnded()
            }
            let exchange = Exchange(
                transport: transport, request: request, first: prepared, download: download,
                promise: completion)
            exchange.start(prepared)
            return exchange
        }
    }

    /// The request as it goes out: Depot's preparation, and `Accept-Encoding` on a client
    /// of the backend's own (which decompresses), as `URLSession` sends it.
    private func prepare(_ request: BackendRequest) throws(ServiceError) -> PreparedHTTPRequest {
        var prepared = try preparation.prepare(request)
        if client.owned, !prepared.headers.contains("Accept-Encoding") {
            prepared.headers["Accept-Encoding"] = "gzip, deflate"
        }
        return prepared
    }
}

/// One started request: its hops (redirects), its deadline, its cancellation, and the
/// one call of its promise.
final class Exchange: Cancellable, Sendable {
    private let transport: AsyncHTTPClientTransport
    private let request: BackendRequest
    /// The file a download's answer goes to.
    private let download: DownloadFile?
    private let deadline: NIODeadline?
    private let state: NIOLockedValueBox<State>

    private struct State {
        var promise: Future<BackendResponse, ServiceError>.Promise?
        var redirects: HTTPRedirectRule
        /// Why Depot ended the request, when it did (the first reason wins).
        var ending: ServiceError?
        var task: HTTPClient.Task<Collected>?
        var timer: Scheduled<Void>?
    }

    init(
        transport: AsyncHTTPClientTransport, request: BackendRequest, first: PreparedHTTPRequest,
        download: DownloadFile?, promise: Future<BackendResponse, ServiceError>.Promise
    ) {
        self.transport = transport
        self.request = request
        self.download = download
        // A timeout past a century (or infinite) is none: its nanoseconds would not fit.
        deadline = transport.timeout.flatMap { seconds in
            seconds < 3e9 ? .now() + .nanoseconds(Int64((seconds * 1e9).rounded(.up))) : nil
        }
        state = NIOLockedValueBox(State(promise: promise, redirects: HTTPRedirectRule(first: first)))
    }

    /// Sends `first` and starts the whole-request deadline.
    func start(_ first: PreparedHTTPRequest) {
        if let deadline {
            let timer = transport.client.client.eventLoopGroup.any().scheduleTask(deadline: deadline) {
                [weak self] () -> Void in
                self?.end(.timedOut)
            }
            let ended = state.withLockedValue { state in
                state.timer = timer
                return state.promise == nil
            }
            if ended { timer.cancel() }
        }
        send(first)
    }

    /// Sends one hop.
    private func send(_ prepared: PreparedHTTPRequest) {
        let httpRequest: HTTPClient.Request
        do {
            httpRequest = try HTTPClient.Request(
                url: prepared.url.absoluteString,
                method: NIOHTTP1.HTTPMethod(rawValue: prepared.method.rawValue),
                headers: NIOHTTP1.HTTPHeaders(prepared.headers.map { ($0.name, $0.value) }),
                body: try Self.body(of: prepared, on: transport.client.client.eventLoopGroup.any()))
        } catch let error as ServiceError {
            finish(.failure(error))
            return
        } catch {
            finish(
                .failure(
                    .invalidRequest("\(prepared.url.absoluteString.prefix(200)) cannot be sent: \(error)")))
            return
        }
        let collector = ResponseCollector(
            limit: transport.maximumResponseBytes, isHead: prepared.method == .head,
            progress: request.progress,
            uploadSize: prepared.bodyFile.flatMap { try? BackendRequest.size(ofBodyFile: $0) }
                ?? (prepared.body.isEmpty ? nil : Int64(prepared.body.count)),
            download: download)
        let task = transport.client.client.execute(
            request: httpRequest, delegate: collector, deadline: deadline)
        let ending = state.withLockedValue { state in
            state.task = task
            return state.ending
        }
        if ending != nil { task.cancel() }
        task.futureResult.whenComplete { [self] result in
            switch result {
            case .success(let collected): self.received(collected, for: prepared)
            case .failure(let error):
                self.failed(
                    with: ServiceError(asyncHTTPClientError: error, receivedHead: collector.receivedHead))
            }
        }
    }

    /// An answer arrived: the next hop of a redirect, or the outcome.
    private func received(_ collected: Collected, for prepared: PreparedHTTPRequest) {
        let headers = HTTPHeaders(collected.headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
        let next: Result<PreparedHTTPRequest?, ServiceError> = state.withLockedValue { state in
            guard state.ending == nil else { return .success(nil) }
            return Result { () throws(ServiceError) in
                try state.redirects.next(after: prepared, status: collected.status, headers: headers)
            }
        }
        switch next {
        case .success(let next?): send(next)
        case .success(nil):
            let response = BackendResponse(status: collected.status, headers: headers, body: collected.body)
            let outcome = ServiceError.check(response, for: request)
            guard case .success(var written) = outcome, collected.wroteFile, let download else {
                finish(outcome)
                return
            }
            do {
                written.file = try download.finish()
            } catch {
                finish(.failure(error))
                return
            }
            finish(.success(written))
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

    /// Reports `outcome` (or the reason Depot ended the request) once.
    private func finish(_ outcome: Result<BackendResponse, ServiceError>) {
        let (promise, ending, timer) = state.withLockedValue { state in
            defer {
                state.promise = nil
                state.task = nil
                state.timer = nil
            }
            return (state.promise, state.ending, state.timer)
        }
        timer?.cancel()
        guard let promise else { return }
        let result = ending.map { .failure($0) } ?? outcome
        if let download {
            switch result {
            case .failure(let error): download.abandon(after: error)
            // An answer without a body to write (a `304`) leaves the file as it was.
            case .success(let response) where response.file == nil: download.abandon(after: nil)
            case .success: break
            }
        }
        promise(result)
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

    /// The body of `prepared` for AsyncHTTPClient: its bytes, or its file streamed.
    private static func body(of prepared: PreparedHTTPRequest, on eventLoop: any EventLoop) throws
        -> HTTPClient.Body?
    {
        if let file = prepared.bodyFile { return try FileBody.body(streaming: file, on: eventLoop) }
        return prepared.body.isEmpty ? nil : .bytes(prepared.body)
    }
}

/// The cancellable of a request that failed before it was sent.
struct AlreadyEnded: Cancellable {
    func cancel() {}
}

/// A response as the ``ResponseCollector`` gathered it.
struct Collected: Sendable {
    var status: Int
    var headers: NIOHTTP1.HTTPHeaders
    var body: Data
    /// Whether the body went to the request's ``Depot/DownloadFile`` (a 2xx to a download).
    var wroteFile = false
}
