import Foundation
import Testing

@testable import Depot

@Suite("RetryMiddleware")
struct RetryMiddlewareTests {
    /// A policy without randomness: waits of 1, 2, 4… seconds, capped at 10.
    private static let steady = RetryPolicy(
        maxAttempts: 3, baseDelay: 1, multiplier: 2, maxDelay: 10, jitter: .none)

    private static func client(
        _ backend: ScriptedBackend, policy: RetryPolicy = steady, scheduler: RecordingScheduler
    ) -> any Backend {
        backend.with(RetryMiddleware(policy: policy, scheduler: scheduler.scheduler))
    }

    @Test func aSuccessPassesThroughWithOneAttempt() async throws {
        let backend = ScriptedBackend([.status(200, body: "ok")])
        let scheduler = RecordingScheduler()

        let response = try await Self.client(backend, scheduler: scheduler)
            .send(BackendRequest(path: "users")).value

        #expect(response.body == Data("ok".utf8))
        #expect(backend.requests.count == 1)
        #expect(scheduler.delays.isEmpty)
    }

    @Test func retriesTransientFailuresWithExponentialBackoff() async throws {
        let backend = ScriptedBackend([.status(502), .failure(.timedOut), .status(200)])
        let scheduler = RecordingScheduler()

        let response = try await Self.client(backend, scheduler: scheduler)
            .send(BackendRequest(path: "users")).value

        #expect(response.status == 200)
        #expect(backend.requests.count == 3)
        #expect(backend.requests.allSatisfy { $0 == BackendRequest(path: "users") })
        #expect(scheduler.delays == [1, 2])
    }

    @Test func theDelayIsCappedAndTheLastErrorReturned() async {
        let backend = ScriptedBackend(
            [.status(500), .status(502), .status(503), .status(500), .failure(.cannotConnect), .status(504)])
        let scheduler = RecordingScheduler()
        let policy = RetryPolicy(maxAttempts: 6, baseDelay: 1, multiplier: 3, maxDelay: 10, jitter: .none)

        let result = await Self.client(backend, policy: policy, scheduler: scheduler)
            .send(BackendRequest(path: "users")).result

        #expect(throws: ServiceError.serverError(FailureResponse(status: 504))) { try result.get() }
        #expect(backend.requests.count == 6)
        #expect(scheduler.delays == [1, 3, 9, 10, 10])
    }

    @Test(arguments: [
        ("Retry-After", "7", 7.0),
        ("Retry-After", "0", 0.0),
    ])
    func aRetryAfterInSecondsIsHonouredInsteadOfTheBackoff(name: String, value: String, expected: Double)
        async throws
    {
        let backend = ScriptedBackend([.status(503, headers: [name: value]), .status(200)])
        let scheduler = RecordingScheduler()

        _ = try await Self.client(backend, scheduler: scheduler).send(BackendRequest(path: "users")).value

        #expect(scheduler.delays == [expected])
        #expect(backend.requests.count == 2)
    }

    @Test func aRetryAfterAsAnHTTPDateIsHonouredOnA429() async throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let headers: HTTPHeaders = [
            "Date": HTTPDate.format(now), "Retry-After": HTTPDate.format(now.addingTimeInterval(12)),
        ]
        let backend = ScriptedBackend([.status(429, headers: headers), .status(200)])
        let scheduler = RecordingScheduler()

        _ = try await Self.client(backend, scheduler: scheduler).send(BackendRequest(path: "users")).value

        #expect(scheduler.delays == [12])
    }

    @Test func aRetryAfterBeyondTheCapIsReturnedAtOnce() async {
        let backend = ScriptedBackend([.status(503, headers: ["Retry-After": "3600"]), .status(200)])
        let scheduler = RecordingScheduler()
        var policy = Self.steady
        policy.maxRetryAfter = 60

        let result = await Self.client(backend, policy: policy, scheduler: scheduler)
            .send(BackendRequest(path: "users")).result

        guard case .failure(.serviceUnavailable(_, let retryAfter)) = result else {
            Issue.record("expected .serviceUnavailable, got \(result)")
            return
        }
        #expect(retryAfter == 3600)
        #expect(backend.requests.count == 1)
        #expect(scheduler.delays.isEmpty)
    }

    @Test(arguments: [
        (HTTPMethod.get, 2), (.head, 2), (.put, 2), (.delete, 2), (.options, 2), (.post, 1), (.patch, 1),
    ])
    func onlyIdempotentMethodsAreRetried(method: HTTPMethod, attempts: Int) async {
        let backend = ScriptedBackend([.status(503), .status(200)])
        let scheduler = RecordingScheduler()

        _ = await Self.client(backend, scheduler: scheduler).send(
            BackendRequest(method: method, path: "users")
        ).result

        #expect(backend.requests.count == attempts)
    }

    @Test func aPostTheCallerOptedInIsRetried() async throws {
        let backend = ScriptedBackend([.failure(.timedOut), .status(201)])
        let scheduler = RecordingScheduler()
        var request = BackendRequest(method: .post, path: "payments", headers: ["Idempotency-Key": "k-1"])
        request.isRetryable = true

        let response = try await Self.client(backend, scheduler: scheduler).send(request).value

        #expect(response.status == 201)
        #expect(backend.requests.map(\.headers["Idempotency-Key"]) == ["k-1", "k-1"])
    }

    @Test func aGetTheCallerOptedOutIsNotRetried() async {
        let backend = ScriptedBackend([.status(503), .status(200)])
        var request = BackendRequest(path: "report")
        request.isRetryable = false

        _ = await Self.client(backend, scheduler: RecordingScheduler()).send(request).result

        #expect(backend.requests.count == 1)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 410, 422])
    func clientErrorsAreNotRetried(status: Int) async {
        let backend = ScriptedBackend([.status(status), .status(200)])
        let scheduler = RecordingScheduler()

        let result = await Self.client(backend, scheduler: scheduler).send(BackendRequest(path: "users"))
            .result

        #expect(result.failureStatus == status)
        #expect(backend.requests.count == 1)
        #expect(scheduler.delays.isEmpty)
    }

    @Test(arguments: [ServiceError.cancelled, .invalidRequest("CR in header"), .noConnection])
    func failuresThatWillNotGoAwayAreNotRetried(error: ServiceError) async {
        let backend = ScriptedBackend([.failure(error), .status(200)])

        let result = await Self.client(backend, scheduler: RecordingScheduler())
            .send(BackendRequest(path: "users")).result

        #expect(throws: error) { try result.get() }
        #expect(backend.requests.count == 1)
    }

    @Test func oneAttemptMeansNoRetry() async {
        let backend = ScriptedBackend([.status(503), .status(200)])
        let policy = RetryPolicy(maxAttempts: 1)

        _ = await Self.client(backend, policy: policy, scheduler: RecordingScheduler())
            .send(BackendRequest(path: "users")).result

        #expect(backend.requests.count == 1)
    }

    @Test func eachStartOfTheFutureRetriesAfresh() async {
        let backend = ScriptedBackend(respond: { _ in .status(503) })
        let scheduler = RecordingScheduler()
        let future = Self.client(backend, scheduler: scheduler).send(BackendRequest(path: "users"))

        _ = await future.result
        _ = await future.result

        #expect(backend.requests.count == 6)
        #expect(scheduler.delays == [1, 2, 1, 2])
    }

    @Test func cancellingDuringTheBackoffEndsAtOnceAndSendsNothingMore() throws {
        let backend = ScriptedBackend([.status(503), .status(200)])
        let scheduler = RecordingScheduler(runsAtOnce: false)
        let outcomes = Locked<[Result<BackendResponse, ServiceError>]>([])

        let work = Self.client(backend, scheduler: scheduler).send(BackendRequest(path: "users"))
            .start { result in outcomes.withLock { $0.append(result) } }
        #expect(scheduler.delays == [1])  // waiting now
        work.cancel()

        let outcome = try #require(outcomes.withLock { $0.first })
        #expect(throws: ServiceError.cancelled) { try outcome.get() }
        #expect(scheduler.cancelledCount == 1)

        scheduler.runPending()  // a timer that fires late anyway
        #expect(backend.requests.count == 1)
        #expect(outcomes.withLock { $0.count } == 1)
    }

    @Test func cancellingTheAwaitingTaskDuringARealBackoffIsPrompt() async throws {
        let backend = ScriptedBackend([.status(503), .status(200)])
        let waiting = OneShotGate()
        let scheduler = RetryScheduler { delay, action in
            let timer = RetryScheduler.dispatch.schedule(after: delay, action)
            waiting.open()
            return timer
        }
        // A backoff far longer than the bound the outcome is awaited with.
        let policy = RetryPolicy(baseDelay: 4 * hangBound, maxDelay: 4 * hangBound, jitter: .none)
        let client = backend.with(RetryMiddleware(policy: policy, scheduler: scheduler))

        let finished = OneShotGate()
        let outcome = Locked<Result<BackendResponse, ServiceError>?>(nil)
        let task = Task {
            let result = await client.send(BackendRequest(path: "users")).result
            outcome.withLock { $0 = result }
            finished.open()
        }
        await waiting.wait()
        task.cancel()
        await finished.wait()
        let result = outcome.withLock { $0 }

        // Came within the bound, so not after the backoff.
        #expect(result != nil)
        #expect(throws: ServiceError.cancelled) { try result?.get() }
        #expect(backend.requests.count == 1)
    }

    @Test func cancellingDuringAnAttemptCancelsItAndDoesNotRetry() throws {
        let backend = ScriptedBackend([.hang, .status(200)])
        let scheduler = RecordingScheduler()
        let outcomes = Locked<[Result<BackendResponse, ServiceError>]>([])

        let work = Self.client(backend, scheduler: scheduler).send(BackendRequest(path: "users"))
            .start { result in outcomes.withLock { $0.append(result) } }
        work.cancel()

        let outcome = try #require(outcomes.withLock { $0.first })
        #expect(throws: ServiceError.cancelled) { try outcome.get() }
        #expect(backend.cancellations == 1)
        #expect(backend.requests.count == 1)
        #expect(scheduler.delays.isEmpty)
    }

    @Test func theDispatchSchedulerWaitsAtLeastTheChosenDelays() async throws {
        let backend = ScriptedBackend([.status(503), .status(502), .status(200)])
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.02, multiplier: 2, jitter: .none)
        let client = backend.with(RetryMiddleware(policy: policy))

        let response = await boundedWait(hangBound) {
            await client.send(BackendRequest(path: "users")).result
        }

        #expect(try response?.get().status == 200)
        let times = backend.attemptTimes
        try #require(times.count == 3)
        #expect(times[1] - times[0] >= .milliseconds(20))
        #expect(times[2] - times[1] >= .milliseconds(40))
    }
}

extension Result where Failure == ServiceError {
    /// The status of the failed response, if the result is one.
    var failureStatus: Int? {
        guard case .failure(let error) = self else { return nil }
        return error.statusCode
    }
}
