import Foundation
import Testing

@testable import Depot

@Suite("Future: async bridge, queues and concurrency")
struct FutureAsyncTests {
    @Test func valueReturnsTheValue() async throws {
        let value = try await Future<Int, ProbeError>.success(1).map { $0 + 41 }.value
        #expect(value == 42)
    }

    @Test func valueThrowsTheTypedFailure() async {
        do throws(ProbeError) {
            _ = try await Future<Int, ProbeError>.failure(.boom).value
            Issue.record("expected a failure")
        } catch {
            #expect(error == .boom)
        }
    }

    @Test func awaitingWorkThatReportsTwiceAtOnceGetsTheFirstOutcome() async {
        let future = Future<Int, ProbeError> { completion in
            completion(.success(1))
            completion(.success(2))
            return NotCancellable()
        }
        #expect(await future.result == .success(1))
    }

    @Test func awaitingWorkThatReportsAtOnceAndAgainLaterGetsTheFirstOutcome() async {
        let late = DispatchGroup()
        let future = Future<Int, ProbeError> { completion in
            completion(.success(1))
            late.enter()
            DispatchQueue.global().async {
                completion(.failure(.boom))
                late.leave()
            }
            return NotCancellable()
        }
        #expect(await future.result == .success(1))
        let settled = await firstDelivery { (done: @escaping @Sendable (Bool) -> Void) in
            late.notify(queue: .global()) { done(true) }
        }
        #expect(settled == true)
    }

    @Test func awaitingWorkThatReportsTwiceLaterFromTwoThreadsGetsOneOutcome() async {
        // The awaiting task suspends first; then two threads report at once. A second
        // resume of the continuation would trap, so finishing at all is the check.
        let reports = DispatchGroup()
        let future = Future<Int, ProbeError> { completion in
            reports.enter()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    completion(index == 0 ? .success(1) : .failure(.boom))
                }
                reports.leave()
            }
            return NotCancellable()
        }
        for _ in 0..<20 {
            let result = await awaitBounded { await future.result }
            #expect(result == .success(1) || result == .failure(.boom))
        }
        let settled = await firstDelivery { (done: @escaping @Sendable (Bool) -> Void) in
            reports.notify(queue: .global()) { done(true) }
        }
        #expect(settled == true)
    }

    @Test func resultWaitsForWorkFinishingOnAnotherThread() async {
        let future = Future<String, ProbeError> { completion in
            DispatchQueue.global().async { completion(.success("later")) }
            return NotCancellable()
        }
        let result = await awaitBounded { await future.result }
        #expect(result == .success("later"))
    }

    @Test func cancellingTheAwaitingTaskCancelsTheWork() async {
        let probe = FutureProbe<Int, ProbeError>(failingOnCancelWith: .cancelled)
        let future = probe.future
        let task = Task { await future.result }
        #expect(await probe.waitForStarts(1))
        #expect(!probe.isCancelled())
        task.cancel()
        let result = await awaitBounded { await task.value }
        #expect(result == .failure(.cancelled))
        #expect(probe.isCancelled())
    }

    @Test func cancellingTheTaskAwaitingValueCancelsTheWork() async {
        let probe = FutureProbe<Int, ProbeError>(failingOnCancelWith: .cancelled)
        let future = probe.future.map { $0 * 2 }
        let task = Task { () async -> ProbeError? in
            do throws(ProbeError) {
                _ = try await future.value
                return nil
            } catch {
                return error
            }
        }
        #expect(await probe.waitForStarts(1))
        task.cancel()
        let failure = await awaitBounded { await task.value }
        #expect(failure == .some(.cancelled))
        #expect(probe.isCancelled())
    }

    @Test func awaitingInAnAlreadyCancelledTaskCancelsTheWorkAtOnce() async {
        let probe = FutureProbe<Int, ProbeError>(failingOnCancelWith: .cancelled)
        let future = probe.future
        let task = Task { () async -> Result<Int, ProbeError> in
            withUnsafeCurrentTask { $0?.cancel() }
            return await future.result
        }
        let result = await awaitBounded { await task.value }
        #expect(result == .failure(.cancelled))
        #expect(probe.startCount == 1)
        #expect(probe.isCancelled())
    }

    @Test func asyncOperationBridgesValuesAndFailures() async {
        let doubled = Future<Int, ProbeError>(priority: .userInitiated) {
            () async throws(ProbeError) -> Int in
            await Task.yield()
            return 21
        }.flatMap { value in
            Future<Int, ProbeError>(priority: nil) { () async throws(ProbeError) -> Int in value * 2 }
        }
        #expect(await awaitBounded { await doubled.result } == .success(42))

        let failing = Future<Int, ProbeError>(priority: nil) { () async throws(ProbeError) -> Int in
            throw .boom
        }
        #expect(await awaitBounded { await failing.result } == .failure(.boom))
    }

    @Test func asyncOperationIsColdAndRunsOnEveryStart() async {
        let invocations = ThreadSafeList<Void>()
        let future = Future<Int, ProbeError>(priority: nil) { () async throws(ProbeError) -> Int in
            invocations.record(())
            return invocations.all.count
        }
        #expect(invocations.all.isEmpty)
        #expect(await firstOutcome(of: future) == .success(1))
        #expect(await firstOutcome(of: future) == .success(2))
        #expect(invocations.all.count == 2)
    }

    @Test func cancellingAnAsyncOperationCancelsItsTask() async {
        let running = FutureProbe<Void, Never>()
        let started = running.future
        let future = Future<Int, ProbeError>(priority: nil) { () async throws(ProbeError) -> Int in
            _ = await started.result
            do {
                // Long work that ends early only when the task is cancelled.
                try await Task.sleep(nanoseconds: 60_000_000_000)
            } catch {
                throw .cancelled
            }
            return 1
        }
        let recorder = ThreadSafeList<Result<Int, ProbeError>>()
        let finished = await firstDelivery { (done: @escaping @Sendable (Bool) -> Void) in
            let work = future.start { result in
                recorder.record(result)
                done(true)
            }
            Task {
                if await running.waitForStarts(1) {
                    running.complete(.success(()))
                    work.cancel()
                }
            }
        }
        #expect(finished == true)
        #expect(recorder.all == [.failure(.cancelled)])
    }

    @Test func receiveDeliversOnTheGivenQueue() async {
        let marker = QueueKey.shared
        let queue = DispatchQueue(label: "depot.tests.receive")
        queue.setSpecific(key: marker.key, value: "receive")
        let elsewhere = Future<Int, ProbeError> { completion in
            DispatchQueue.global().async { completion(.failure(.boom)) }
            return NotCancellable()
        }
        for future in [Future<Int, ProbeError>.success(1), elsewhere] {
            let seen = await firstDelivery { (deliver: @escaping @Sendable (String?) -> Void) in
                future.receive(on: queue).start { _ in deliver(DispatchQueue.getSpecific(key: marker.key)) }
            }
            #expect(seen == .some("receive"))
        }
        let unhopped = await firstDelivery { (deliver: @escaping @Sendable (String?) -> Void) in
            elsewhere.start { _ in deliver(DispatchQueue.getSpecific(key: marker.key)) }
        }
        #expect(unhopped == .some(nil))
    }

    @Test func tenThousandConcurrentStartsEachCompleteOnce() async {
        let count = 10_000
        let invocations = ThreadSafeList<Void>()
        let completions = Locked([Int](repeating: 0, count: count))
        let group = DispatchGroup()
        let future = Future<Int, ProbeError> { completion in
            invocations.record(())
            group.enter()
            DispatchQueue.global().async {
                // A careless operation that reports twice.
                completion(.success(1))
                completion(.success(2))
                group.leave()
            }
            return NotCancellable()
        }.map { $0 * 10 }
        let settled = await firstDelivery { (done: @escaping @Sendable (Bool) -> Void) in
            DispatchQueue.global().async {
                // Every enter happens inside `start`, before concurrentPerform returns.
                DispatchQueue.concurrentPerform(iterations: count) { index in
                    future.start { result in
                        // Only the first report (1, mapped to 10) may arrive.
                        completions.withLock { $0[index] += result == .success(10) ? 1 : 100 }
                    }
                }
                group.notify(queue: .global()) { done(true) }
            }
        }
        #expect(settled == true)
        #expect(invocations.all.count == count)
        #expect(completions.withLock { $0 }.allSatisfy { $0 == 1 })
    }

    @Test func tenThousandAwaitsFromATaskGroupAllFinish() async {
        let count = 10_000
        let future = Future<Int, ProbeError> { completion in
            DispatchQueue.global().async { completion(.success(1)) }
            return NotCancellable()
        }
        let total = await awaitBounded {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<count {
                    group.addTask { (try? await future.value) ?? 0 }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(total == count)
    }
}

/// The key that marks the queue `receive(on:)` should deliver on. (Boxed: the key
/// type is `Sendable` in some SDKs only; it is immutable and thread-safe.)
private final class QueueKey: @unchecked Sendable {
    static let shared = QueueKey()
    let key = DispatchSpecificKey<String>()
}
