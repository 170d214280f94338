import Foundation

/// When ``RetryMiddleware`` sends a request again, and how long it waits first: an exponential
/// backoff spread by jitter, or the server's `Retry-After` (the article *Using Middleware*).
///
/// ```swift
/// var policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.2)
/// policy.retryableStatuses.remove(500)          // a 500 here is a bug, not a hiccup
/// let backend = URLSessionBackend(baseURL: url).with(RetryMiddleware(policy: policy))
/// ```
public struct RetryPolicy: Sendable {
    /// How the computed wait is spread at random.
    public enum Jitter: Sendable, Hashable {
        /// No randomness: exactly the exponential delay.
        case none
        /// Anywhere between zero and the delay ("full jitter"): spreads clients the most.
        case full
        /// Half the delay plus up to another half ("equal jitter"): never much shorter
        /// than planned.
        case equal
    }

    /// Transport failures, without a response, that can be worth another attempt.
    public enum TransportFailure: Sendable, Hashable, CaseIterable {
        /// ``ServiceError/timedOut``.
        case timedOut
        /// ``ServiceError/cannotConnect``.
        case cannotConnect
        /// ``ServiceError/noConnection``: the device is offline; retrying helps only when
        /// the connection comes back within the backoff.
        case noConnection
        /// ``ServiceError/transport(code:description:)``: a dropped connection and the like
        /// (never a download's file that the disk refused).
        case transport
    }

    /// How many times a request is sent at most, the first time included; 1 turns
    /// retrying off.
    public var maxAttempts: Int
    /// The wait before the first retry, in seconds.
    public var baseDelay: TimeInterval
    /// The factor each further wait grows by.
    public var multiplier: Double
    /// The longest computed wait, in seconds, before jitter.
    public var maxDelay: TimeInterval
    /// How the computed wait is spread at random.
    public var jitter: Jitter
    /// The longest `Retry-After`, in seconds, that is waited out. A longer one ends the
    /// retries at once with that error: coming back sooner than the server asks only
    /// meets the same answer, and the caller can read the wait from the error.
    public var maxRetryAfter: TimeInterval
    /// The statuses worth another attempt. 401, 403, 404, 409 and other 4xx are never
    /// worth it, unless listed here.
    public var retryableStatuses: Set<Int>
    /// The transport failures worth another attempt.
    public var retryableFailures: Set<TransportFailure>
    /// A random number in `0...1`, for jitter; replace it to make delays predictable.
    public var random: @Sendable () -> Double

    /// Creates a policy; the defaults send a request up to 3 times, waiting up to 0.5 s
    /// and then up to 1 s (full jitter), never more than 30 s, and wait out a `Retry-After` of
    /// up to 60 s.
    ///
    /// By default 408, 429, 500, 502, 503 and 504 are retried, and so are timeouts,
    /// refused connections and other transport failures; ``ServiceError/cancelled``,
    /// ``ServiceError/invalidRequest(_:)`` and ``ServiceError/decoding(_:)`` never are.
    public init(
        maxAttempts: Int = 3,
        baseDelay: TimeInterval = 0.5,
        multiplier: Double = 2,
        maxDelay: TimeInterval = 30,
        jitter: Jitter = .full,
        maxRetryAfter: TimeInterval = 60,
        retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableFailures: Set<TransportFailure> = [.timedOut, .cannotConnect, .transport],
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxRetryAfter = maxRetryAfter
        self.retryableStatuses = retryableStatuses
        self.retryableFailures = retryableFailures
        self.random = random
    }

    /// The `URLError` codes of files on this device (`cannotCreateFile` … `cannotMoveFile`,
    /// -3000 to -3005): a disk that refuses a download, not the network.
    static let localFileCodes: ClosedRange<Int> = -3005 ... -3000

    /// Whether this policy tries again after `error`, which may go away on another attempt
    /// (the request's own ``BackendRequest/isRetryable`` and the attempts left aside).
    public func retries(after error: ServiceError) -> Bool {
        switch error {
        case .timedOut: return retryableFailures.contains(.timedOut)
        case .cannotConnect: return retryableFailures.contains(.cannotConnect)
        case .noConnection: return retryableFailures.contains(.noConnection)
        case .transport(let code, _):
            // A download's file that the disk refused fails the same way on every attempt.
            return retryableFailures.contains(.transport) && !Self.localFileCodes.contains(code)
        case .cancelled, .invalidRequest, .decoding, .queued: return false
        case .unauthorized, .forbidden, .notFound, .conflict, .clientError, .serviceUnavailable,
            .serverError, .unexpectedStatus:
            return error.statusCode.map(retryableStatuses.contains) ?? false
        }
    }

    /// The wait in seconds before sending a request again after attempt number
    /// `attempt` (1 for the first) failed with `error`, or `nil` to stop and return the
    /// error: it is not retryable, no attempts are left, or the server's `Retry-After`
    /// is longer than ``maxRetryAfter``.
    public func delay(afterAttempt attempt: Int, failure error: ServiceError) -> TimeInterval? {
        guard attempt < maxAttempts, retries(after: error) else { return nil }
        if case .serviceUnavailable(_, let retryAfter?) = error {
            return retryAfter <= maxRetryAfter ? max(0, retryAfter) : nil
        }
        return backoff(beforeRetry: attempt)
    }

    /// The exponential wait before retry number `retry` (1 for the first), capped and
    /// jittered, when the server gave no `Retry-After`.
    public func backoff(beforeRetry retry: Int) -> TimeInterval {
        let exponential = baseDelay * pow(multiplier, Double(max(0, retry - 1)))
        // `min` with a NaN or infinite growth still has to give a finite, non-negative wait.
        let capped = exponential.isFinite ? max(0, min(exponential, maxDelay)) : max(0, maxDelay)
        let unit = min(1, max(0, random()))
        switch jitter {
        case .none: return capped
        case .full: return capped * unit
        case .equal: return capped / 2 + capped / 2 * unit
        }
    }
}
