import Foundation
import Testing

@testable import Depot

@Suite("Future: exactly once, cold, combinators")
struct FutureLawTests {
    /// An operation that reports three outcomes; only the first may reach the caller.
    private static let stammering = Future<Int, ProbeError> { completion in
        completion(.success(1))
        completion(.success(2))
        completion(.failure(.boom))
        return NotCancellable()
    }

    @Test func completionRunsOnceWhenTheOperationCompletesTwice() {
        #expect(immediateOutcomes(of: Self.stammering) == [.success(1)])
    }

    @Test func completionRunsOnceWhenALaterRunCompletesTwiceFromOutside() {
        let probe = FutureProbe<Int, ProbeError>()
        let recorder = ThreadSafeList<Result<Int, ProbeError>>()
        probe.future.map { $0 * 10 }.start { recorder.record($0) }
        probe.complete(.success(1))
        probe.complete(.success(2))
        probe.complete(.failure(.boom))
        #expect(recorder.all == [.success(10)])
    }

    @Test func chainsDeliverOnceAndRunEachStepOnceWhenUpstreamCompletesTwice() {
        let transforms = ThreadSafeList<Int>()
        let handlers = ThreadSafeList<ProbeError>()
        let chain = Self.stammering
            .map { $0 + 1 }
            .flatMap { value -> Future<Int, ProbeError> in
                transforms.record(value)
                return .success(value * 10)
            }
        #expect(immediateOutcomes(of: chain) == [.success(20)])
        #expect(transforms.all == [2])

        let failing = Future<Int, ProbeError> { completion in
            completion(.failure(.boom))
            completion(.failure(.other))
            return NotCancellable()
        }
        let recovered = failing.recover { error -> Future<Int, ProbeError> in
            handlers.record(error)
            return .success(0)
        }
        #expect(immediateOutcomes(of: recovered) == [.success(0)])
        #expect(handlers.all == [.boom])
    }

    // `start` skips its own guard on futures whose last step keeps only its first
    // outcome (flatMap, a known value, a map of one of these); these tests stammer behind
    // each such step, and behind the steps that keep the guard.

    @Test(arguments: ["map", "mapError", "tryMap", "handleResult"])
    func aStepOverWorkThatReportsTwiceDeliversOnce(_ step: String) {
        let source = Self.stammering
        let future: Future<Int, ProbeError> =
            switch step {
            case "map": source.map { $0 * 10 }
            case "mapError": source.mapError { _ in ProbeError.other }
            case "tryMap": source.tryMap { $0 }
            default: source.handleResult { _ in }
            }
        #expect(immediateOutcomes(of: future).count == 1)
    }

    @Test func receiveOnOverWorkThatReportsTwiceDeliversOnce() {
        let queue = DispatchQueue(label: "receive-on-test")
        let recorder = ThreadSafeList<Result<Int, ProbeError>>()
        Self.stammering.receive(on: queue).start { recorder.record($0) }
        queue.sync {}  // every hop queued by the start has run
        #expect(recorder.all == [.success(1)])
    }

    @Test func aChainEndingInFlatMapDeliversOnceWhenItsSecondStepReportsTwice() {
        let chain = Future<Int, ProbeError>.success(1)
            .flatMap { _ in Self.stammering }
            .map { $0 * 10 }
            .handleResult { _ in }
        #expect(immediateOutcomes(of: chain) == [.success(10)])
    }

    @Test func aChainEndingInFlatMapDeliversOnceWhenItsSecondStepReportsTwiceLater() {
        let probe = FutureProbe<Int, ProbeError>()
        let recorder = ThreadSafeList<Result<Int, ProbeError>>()
        Future<Int, ProbeError>.success(1).flatMap { _ in probe.future }.map { $0 + 1 }
            .start { recorder.record($0) }
        probe.complete(.success(1))
        probe.complete(.failure(.boom))
        probe.complete(.success(3))
        #expect(recorder.all == [.success(2)])
    }

    @Test func zipAndAllDeliverOnceWhenTheirPartsReportTwice() {
        let zipped = Future.zip(Self.stammering, Future<Int, ProbeError>.success(5)).map { $0.0 + $0.1 }
        #expect(immediateOutcomes(of: zipped) == [.success(6)])
        let collected = Future.all([Self.stammering, Self.stammering])
        #expect(immediateOutcomes(of: collected) == [.success([1, 1])])
    }

    @Test func recoverDeliversOnceWhenItsHandlersFutureReportsTwice() {
        let recovered = Future<Int, ProbeError>.failure(.boom)
            .recover { _ in Self.stammering }
            .map { $0 * 10 }
        #expect(immediateOutcomes(of: recovered) == [.success(10)])
    }

    @Test func tryMapTransformsValuesEndsOnAThrownFailureAndPassesFailuresThrough() {
        let calls = ThreadSafeList<Int>()
        let halve = { @Sendable (value: Int) throws(ProbeError) -> Int in
            calls.record(value)
            guard value.isMultiple(of: 2) else { throw .other }
            return value / 2
        }
        #expect(immediateOutcomes(of: Future<Int, ProbeError>.success(8).tryMap(halve)) == [.success(4)])
        #expect(immediateOutcomes(of: Future<Int, ProbeError>.success(3).tryMap(halve)) == [.failure(.other)])
        let failed = Future<Int, ProbeError>.failure(.boom).tryMap(halve)
        #expect(immediateOutcomes(of: failed) == [.failure(.boom)])
        #expect(calls.all == [8, 3])
        #expect(immediateOutcomes(of: Self.stammering.tryMap(halve)) == [.failure(.other)])
    }

    @Test func nothingRunsBeforeStart() {
        let invocations = ThreadSafeList<Void>()
        let future = Future<Int, ProbeError> { completion in
            invocations.record(())
            completion(.success(1))
            return NotCancellable()
        }
        let chain = future.map { $0 + 1 }.mapError { _ in ProbeError.other }
            .flatMap { Future.success($0) }.recover { _ in .success(0) }
            .receive(on: .global())
        _ = chain
        #expect(invocations.all.isEmpty)
    }

    @Test func eachStartRunsTheOperationAgain() {
        let invocations = ThreadSafeList<Void>()
        let future = Future<Int, ProbeError> { completion in
            invocations.record(())
            completion(.success(invocations.all.count))
            return NotCancellable()
        }.map { $0 * 100 }
        #expect(immediateOutcomes(of: future) == [.success(100)])
        #expect(immediateOutcomes(of: future) == [.success(200)])
        #expect(immediateOutcomes(of: future) == [.success(300)])
        #expect(invocations.all.count == 3)
    }

    @Test func eachStartHasItsOwnOutcome() {
        let probe = FutureProbe<Int, ProbeError>()
        let first = ThreadSafeList<Result<Int, ProbeError>>()
        let second = ThreadSafeList<Result<Int, ProbeError>>()
        let chain = probe.future.flatMap { value in Future.success(value + 1) }
        chain.start { first.record($0) }
        chain.start { second.record($0) }
        #expect(probe.startCount == 2)
        probe.complete(.failure(.boom), run: 1)
        probe.complete(.success(1), run: 0)
        #expect(first.all == [.success(2)])
        #expect(second.all == [.failure(.boom)])
    }

    @Test func mapTransformsValuesAndPassesFailures() {
        let calls = ThreadSafeList<Int>()
        let double: @Sendable (Int) -> Int = { value in
            calls.record(value)
            return value * 2
        }
        #expect(immediateOutcomes(of: Future<Int, ProbeError>.success(21).map(double)) == [.success(42)])
        #expect(
            immediateOutcomes(of: Future<Int, ProbeError>.failure(.boom).map(double)) == [.failure(.boom)])
        #expect(calls.all == [21])
    }

    @Test func mapErrorTransformsFailuresAndPassesValues() {
        struct Wrapped: Error, Equatable { let inner: ProbeError }
        let calls = ThreadSafeList<ProbeError>()
        let wrap: @Sendable (ProbeError) -> Wrapped = { error in
            calls.record(error)
            return Wrapped(inner: error)
        }
        let failed = Future<Int, ProbeError>.failure(.boom).mapError(wrap)
        #expect(immediateOutcomes(of: failed) == [.failure(Wrapped(inner: .boom))])
        let succeeded = Future<Int, ProbeError>.success(7).mapError(wrap)
        #expect(immediateOutcomes(of: succeeded) == [.success(7)])
        #expect(calls.all == [.boom])
    }

    @Test func flatMapRunsTheNextStepWithTheValue() {
        let chain = Future<Int, ProbeError>.success(3)
            .flatMap { value in Future<String, ProbeError>.success(String(repeating: "a", count: value)) }
        #expect(immediateOutcomes(of: chain) == [.success("aaa")])
    }

    @Test func flatMapAfterAFailureDoesNotRunTheTransform() {
        let calls = ThreadSafeList<Int>()
        let chain = Future<Int, ProbeError>.failure(.boom).flatMap { value -> Future<Int, ProbeError> in
            calls.record(value)
            return .success(value)
        }
        #expect(immediateOutcomes(of: chain) == [.failure(.boom)])
        #expect(calls.all.isEmpty)
    }

    @Test func flatMapPassesTheSecondStepsFailure() {
        let chain = Future<Int, ProbeError>.success(1).flatMap { _ in Future<Int, ProbeError>.failure(.other)
        }
        #expect(immediateOutcomes(of: chain) == [.failure(.other)])
    }

    @Test func andThenChainsStepsInOrder() {
        let steps = ThreadSafeList<String>()
        let chain = Future<Int, ProbeError>.success(1)
            .andThen { value -> Future<Int, ProbeError> in
                steps.record("first \(value)")
                return .success(value + 1)
            }
            .andThen { value -> Future<Int, ProbeError> in
                steps.record("second \(value)")
                return .failure(.boom)
            }
            .andThen { value -> Future<Int, ProbeError> in
                steps.record("third \(value)")
                return .success(value)
            }
        #expect(immediateOutcomes(of: chain) == [.failure(.boom)])
        #expect(steps.all == ["first 1", "second 2"])
    }

    @Test func andThenWaitsForAnAsynchronousFirstStep() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<String, ProbeError>()
        let recorder = ThreadSafeList<Result<String, ProbeError>>()
        first.future.andThen { _ in second.future }.start { recorder.record($0) }
        #expect(second.startCount == 0)
        first.complete(.success(1))
        #expect(second.startCount == 1)
        #expect(recorder.all.isEmpty)
        second.complete(.success("done"))
        #expect(recorder.all == [.success("done")])
    }

    @Test func recoverReplacesAFailure() {
        let chain = Future<Int, ProbeError>.failure(.boom).recover { error in
            error == .boom ? .success(-1) : .failure(error)
        }
        #expect(immediateOutcomes(of: chain) == [.success(-1)])
    }

    @Test func recoverCanFailAgain() {
        let chain = Future<Int, ProbeError>.failure(.boom).recover { _ in .failure(.other) }
        #expect(immediateOutcomes(of: chain) == [.failure(.other)])
    }

    @Test func recoverDoesNotRunAfterASuccess() {
        let calls = ThreadSafeList<ProbeError>()
        let chain = Future<Int, ProbeError>.success(5).recover { error -> Future<Int, ProbeError> in
            calls.record(error)
            return .success(0)
        }
        #expect(immediateOutcomes(of: chain) == [.success(5)])
        #expect(calls.all.isEmpty)
    }

    @Test func handleResultSeesTheOutcomeAndPassesItOn() {
        let seen = ThreadSafeList<Result<Int, ProbeError>>()
        let chain = Future<Int, ProbeError>.failure(.boom).handleResult { seen.record($0) }
        #expect(immediateOutcomes(of: chain) == [.failure(.boom)])
        #expect(seen.all == [.failure(.boom)])
    }

    @Test func resultInitializerAndStaticConstructors() {
        #expect(immediateOutcomes(of: Future<Int, ProbeError>(result: .success(1))) == [.success(1)])
        #expect(
            immediateOutcomes(of: Future<Int, ProbeError>(result: .failure(.other))) == [.failure(.other)])
        #expect(immediateOutcomes(of: Future<Int, ProbeError>.success(2)) == [.success(2)])
        #expect(immediateOutcomes(of: Future<Int, ProbeError>.failure(.boom)) == [.failure(.boom)])
    }
}
