import Foundation
import Testing

@testable import Depot

@Suite("RetryPolicy")
struct RetryPolicyTests {
    private static func failure(_ status: Int) -> FailureResponse {
        FailureResponse(status: status)
    }

    @Test func backoffGrowsExponentiallyUpToTheCap() {
        let policy = RetryPolicy(baseDelay: 0.5, multiplier: 2, maxDelay: 3, jitter: .none)

        #expect((1...6).map(policy.backoff(beforeRetry:)) == [0.5, 1, 2, 3, 3, 3])
    }

    @Test(arguments: [
        (RetryPolicy.Jitter.none, 0.25, 4.0),
        (.full, 0.25, 1.0),
        (.full, 0, 0),
        (.full, 1, 4),
        (.equal, 0.25, 2.5),
        (.equal, 0, 2),
        (.equal, 1, 4),
    ])
    func jitterSpreadsTheDelayWithTheRandomSource(
        jitter: RetryPolicy.Jitter, random: Double, expected: Double
    ) {
        let policy = RetryPolicy(
            baseDelay: 1, multiplier: 2, maxDelay: 60, jitter: jitter, random: { random })

        #expect(policy.backoff(beforeRetry: 3) == expected)  // 1 × 2² = 4 before jitter
    }

    @Test func aRandomSourceOutOfRangeIsClamped() {
        let policy = RetryPolicy(baseDelay: 2, jitter: .full, random: { 7 })

        #expect(policy.backoff(beforeRetry: 1) == 2)
    }

    @Test(arguments: [
        (ServiceError.serverError(failure(500)), true),
        (.serverError(failure(502)), true),
        (.serviceUnavailable(failure(503), retryAfter: nil), true),
        (.serverError(failure(504)), true),
        (.serviceUnavailable(failure(429), retryAfter: nil), true),
        (.clientError(failure(408)), true),
        (.timedOut, true),
        (.cannotConnect, true),
        (.transport(code: -1005, description: "lost"), true),
        (.noConnection, false),
        (.cancelled, false),
        (.invalidRequest("bad"), false),
        (.decoding(DecodingFailure(type: "User", codingPath: "id", description: "missing")), false),
        (.clientError(failure(400)), false),
        (.unauthorized(failure(401), challenges: []), false),
        (.forbidden(failure(403)), false),
        (.notFound(failure(404)), false),
        (.conflict(failure(409)), false),
        (.clientError(failure(422)), false),
        (.serverError(failure(501)), false),
        (.unexpectedStatus(failure(302)), false),
    ])
    func defaultsRetryOnlyTransientFailures(error: ServiceError, retryable: Bool) {
        #expect(RetryPolicy().retries(after: error) == retryable)
    }

    @Test func statusesAndFailuresAreConfigurable() {
        let policy = RetryPolicy(retryableStatuses: [501], retryableFailures: [.noConnection])

        #expect(policy.retries(after: .serverError(Self.failure(501))))
        #expect(!policy.retries(after: .serverError(Self.failure(500))))
        #expect(policy.retries(after: .noConnection))
        #expect(!policy.retries(after: .timedOut))
    }

    @Test func retryAfterTakesPrecedenceOverBackoffWithoutJitter() {
        let policy = RetryPolicy(baseDelay: 1, jitter: .full, maxRetryAfter: 60, random: { 0.5 })
        let throttled = ServiceError.serviceUnavailable(Self.failure(429), retryAfter: 12)

        #expect(policy.delay(afterAttempt: 1, failure: throttled) == 12)
        #expect(policy.delay(afterAttempt: 1, failure: .serverError(Self.failure(502))) == 0.5)
    }

    @Test func aRetryAfterBeyondTheCapEndsTheRetries() {
        let policy = RetryPolicy(maxRetryAfter: 10)

        #expect(
            policy.delay(afterAttempt: 1, failure: .serviceUnavailable(Self.failure(503), retryAfter: 10))
                == 10)
        #expect(
            policy.delay(afterAttempt: 1, failure: .serviceUnavailable(Self.failure(503), retryAfter: 11))
                == nil)
    }

    @Test func noDelayOnceTheAttemptsAreUsed() {
        let policy = RetryPolicy(maxAttempts: 3, jitter: .none)

        #expect(policy.delay(afterAttempt: 2, failure: .timedOut) != nil)
        #expect(policy.delay(afterAttempt: 3, failure: .timedOut) == nil)
    }
}
