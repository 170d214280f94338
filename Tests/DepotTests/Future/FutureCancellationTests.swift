import Foundation
import Testing

@testable import Depot

@Suite("Future: cancellation")
struct FutureCancellationTests {
    @Test func cancellingAStartCancelsTheWork() {
        let probe = FutureProbe<Int, ProbeError>(failingOnCancelWith: .cancelled)
        let recorder = ThreadSafeList<Result<Int, ProbeError>>()
        let work = probe.future.map { $0 + 1 }.start { recorder.record($0) }
        #expect(!probe.isCancelled())
        work.cancel()
        #expect(probe.isCancelled())
        #expect(recorder.all == [.failure(.cancelled)])
    }

    @Test func cancellingAFlatMapDuringTheFirstStepCancelsIt() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<Int, ProbeError>()
        let work = first.future.flatMap { _ in second.future }.start { _ in }
        work.cancel()
        #expect(first.isCancelled())
        #expect(second.startCount == 0)
    }

    @Test func cancellingAFlatMapDuringTheSecondStepCancelsIt() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<Int, ProbeError>()
        let work = first.future.flatMap { _ in second.future }.start { _ in }
        first.complete(.success(1))
        #expect(second.startCount == 1)
        #expect(!second.isCancelled())
        work.cancel()
        #expect(second.isCancelled())
    }

    @Test func cancellingAFlatMapWhoseFirstStepAnsweredAtOnceCancelsTheSecond() {
        let second = FutureProbe<Int, ProbeError>(failingOnCancelWith: .cancelled)
        let recorder = ThreadSafeList<Result<Int, ProbeError>>()
        let work = Future<Int, ProbeError>.success(1).flatMap { _ in second.future }.start {
            recorder.record($0)
        }
        #expect(second.startCount == 1)
        #expect(!second.isCancelled())
        work.cancel()
        #expect(second.isCancelled())
        #expect(recorder.all == [.failure(.cancelled)])
    }

    @Test func aStepStartedAfterCancellationIsCancelledAtOnce() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<Int, ProbeError>()
        let work = first.future.flatMap { _ in second.future }.start { _ in }
        work.cancel()
        // The first step ignores cancellation and succeeds anyway.
        first.complete(.success(1))
        #expect(second.uncancelledRuns == 0)
    }

    @Test func cancellingARecoverReachesTheHandlersFuture() {
        let first = FutureProbe<Int, ProbeError>()
        let fallback = FutureProbe<Int, ProbeError>()
        let work = first.future.recover { _ in fallback.future }.start { _ in }
        first.complete(.failure(.boom))
        #expect(fallback.startCount == 1)
        work.cancel()
        #expect(fallback.isCancelled())
    }

    @Test func cancellingALongChainReachesTheRunningStep() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<Int, ProbeError>()
        let third = FutureProbe<Int, ProbeError>()
        let chain = first.future
            .map { $0 + 1 }
            .flatMap { _ in second.future }
            .mapError { $0 }
            .andThen { _ in third.future }
            .recover { _ in .success(0) }
            .handleResult { _ in }
            .receive(on: .global())
        let work = chain.start { _ in }
        first.complete(.success(1))
        second.complete(.success(2))
        #expect(third.startCount == 1)
        work.cancel()
        #expect(third.isCancelled())
        #expect(!first.isCancelled())
        #expect(!second.isCancelled())
    }

    @Test func cancellationTokenRunsHandlersOnce() {
        let token = CancellationToken()
        let calls = ThreadSafeList<String>()
        token.onCancel { calls.record("a") }
        token.onCancel { calls.record("b") }
        #expect(!token.isCancelled)
        #expect(calls.all.isEmpty)
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        #expect(calls.all == ["a", "b"])
        token.onCancel { calls.record("late") }
        #expect(calls.all == ["a", "b", "late"])
    }

    @Test func cancellationTokenCancelledFromManyThreadsRunsHandlersOnce() {
        let token = CancellationToken()
        let calls = ThreadSafeList<Void>()
        token.onCancel { calls.record(()) }
        DispatchQueue.concurrentPerform(iterations: 64) { _ in token.cancel() }
        #expect(calls.all.count == 1)
    }
}
