import Foundation

/// Sends a request again when it fails with an error that may go away: a timeout, a refused
/// connection, a 503 or 429 (after its `Retry-After`), a 502 or 504. Only requests that are
/// safe to repeat are retried, or those whose ``BackendRequest/isRetryable`` is `true`.
///
/// ```swift
/// let backend = URLSessionBackend(baseURL: url).with(.retry(RetryPolicy(maxAttempts: 4)))
/// ```
///
/// What it retries, and how each attempt runs the chain again: the article *Using Middleware*.
public struct RetryMiddleware: Middleware {
    /// When to retry and how long to wait.
    public var policy: RetryPolicy
    /// How the waits between attempts are timed.
    public var scheduler: RetryScheduler

    /// Creates a retry middleware; `scheduler` times the waits (replace it in tests).
    public init(policy: RetryPolicy = RetryPolicy(), scheduler: RetryScheduler = .dispatch) {
        self.policy = policy
        self.scheduler = scheduler
    }

    /// Sends `request` on, and again after each retryable failure while attempts are left.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        guard request.isRetryable, policy.maxAttempts > 1 else { return next(request) }
        let policy = policy
        let scheduler = scheduler
        return Future { completion in
            let run = RetryRun(
                attempt: { next(request) }, policy: policy, scheduler: scheduler,
                completion: completion.complete)
            run.attempt(1)
            return run
        }
    }
}

/// One start of a retried request: its attempts, the waits between them, and cancellation.
private final class RetryRun: Cancellable, Sendable {
    typealias Completion = Future<BackendResponse, ServiceError>.Completion

    private let makeAttempt: @Sendable () -> Future<BackendResponse, ServiceError>
    private let policy: RetryPolicy
    private let scheduler: RetryScheduler
    private let completion: Completion
    /// `step` counts attempts and waits; only the current step's work is kept for
    /// cancelling, since a step that finished synchronously is already replaced.
    private let state = Locked<(cancelled: Bool, step: Int, current: (any Cancellable)?)>((false, 0, nil))

    init(
        attempt: @escaping @Sendable () -> Future<BackendResponse, ServiceError>,
        policy: RetryPolicy,
        scheduler: RetryScheduler,
        completion: @escaping Completion
    ) {
        self.makeAttempt = attempt
        self.policy = policy
        self.scheduler = scheduler
        self.completion = completion
    }

    /// Sends attempt number `number`, unless the run was cancelled.
    func attempt(_ number: Int) {
        guard let step = beginStep() else { return completion(.failure(.cancelled)) }
        let work = makeAttempt().run { [self] result in
            switch result {
            case .success:
                completion(result)
            case .failure(let error):
                guard let delay = policy.delay(afterAttempt: number, failure: error) else {
                    return completion(result)
                }
                wait(delay, thenAttempt: number + 1)
            }
        }
        install(work, for: step)
    }

    /// Waits `delay` seconds, then sends attempt `number`; cancelling the wait ends the
    /// run with `.cancelled` at once.
    private func wait(_ delay: TimeInterval, thenAttempt number: Int) {
        guard let step = beginStep() else { return completion(.failure(.cancelled)) }
        let completion = completion
        let pause = Pause { completion(.failure(.cancelled)) }
        pause.hold(
            scheduler.schedule(after: delay) { [self] in
                if pause.resume() { attempt(number) }
            })
        install(pause, for: step)
    }

    /// Starts a new step and returns its number, or `nil` once cancelled.
    private func beginStep() -> Int? {
        state.withLock { state in
            guard !state.cancelled else { return nil }
            state.step += 1
            state.current = nil
            return state.step
        }
    }

    /// Keeps `work` for cancelling while `step` is current; cancels it if the run was
    /// cancelled meanwhile.
    private func install(_ work: any Cancellable, for step: Int) {
        let cancelNow = state.withLock { state -> Bool in
            if state.cancelled { return true }
            if state.step == step { state.current = work }
            return false
        }
        if cancelNow { work.cancel() }
    }

    func cancel() {
        let current = state.withLock { state -> (any Cancellable)? in
            if state.cancelled { return nil }
            state.cancelled = true
            defer { state.current = nil }
            return state.current
        }
        current?.cancel()
    }
}

/// A wait between attempts, which either resumes or is cancelled, never both.
private final class Pause: Cancellable, Sendable {
    private let state = Locked<(done: Bool, timer: (any Cancellable)?)>((false, nil))
    private let onCancel: @Sendable () -> Void

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Keeps the scheduled resumption so that cancelling releases it.
    func hold(_ timer: any Cancellable) {
        let cancelNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.timer = timer
            return false
        }
        // Already resumed or cancelled: the timer has nothing left to do.
        if cancelNow { timer.cancel() }
    }

    /// Whether the wait may go on to the next attempt (it was not cancelled first).
    func resume() -> Bool {
        state.withLock { state in
            guard !state.done else { return false }
            state.done = true
            state.timer = nil
            return true
        }
    }

    func cancel() {
        let timer = state.withLock { state -> (any Cancellable)?? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.timer = nil }
            return .some(state.timer)
        }
        guard let timer else { return }
        timer?.cancel()
        onCancel()
    }
}
