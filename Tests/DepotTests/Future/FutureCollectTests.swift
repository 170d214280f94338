import Foundation
import Testing

@testable import Depot

@Suite("Future: zip and all")
struct FutureCollectTests {
    @Test func zipPairsTheValues() throws {
        let zipped = Future<(Int, String), ProbeError>.zip(.success(1), .success("one"))
        let outcomes = immediateOutcomes(of: zipped)
        #expect(outcomes.count == 1)
        let pair = try #require(outcomes.first?.value)
        #expect(pair.0 == 1)
        #expect(pair.1 == "one")
    }

    @Test func zipKeepsThePositionsWhateverOrderTheyFinishIn() throws {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<String, ProbeError>()
        let recorder = ThreadSafeList<Result<(Int, String), ProbeError>>()
        Future<(Int, String), ProbeError>.zip(first.future, second.future).start { recorder.record($0) }
        #expect(first.startCount == 1)
        #expect(second.startCount == 1)
        second.complete(.success("b"))
        #expect(recorder.all.isEmpty)
        first.complete(.success(1))
        #expect(recorder.all.count == 1)
        let pair = try #require(recorder.all.first?.value)
        #expect(pair.0 == 1)
        #expect(pair.1 == "b")
    }

    @Test func zipFailsWithTheFirstFailureAndCancelsTheOther() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<Int, ProbeError>()
        let recorder = ThreadSafeList<ProbeError?>()
        Future<(Int, Int), ProbeError>.zip(first.future, second.future).start {
            recorder.record($0.failure)
        }
        second.complete(.failure(.boom))
        #expect(first.isCancelled())
        first.complete(.failure(.other))
        #expect(recorder.all == [.boom])
    }

    @Test func cancellingAZipCancelsBoth() {
        let first = FutureProbe<Int, ProbeError>()
        let second = FutureProbe<Int, ProbeError>()
        let work = Future<(Int, Int), ProbeError>.zip(first.future, second.future).start { _ in }
        #expect(first.uncancelledRuns == 1)
        work.cancel()
        #expect(first.isCancelled())
        #expect(second.isCancelled())
    }

    @Test func allKeepsTheOrderOfTheFutures() {
        let probes = (0..<4).map { _ in FutureProbe<Int, ProbeError>() }
        let recorder = ThreadSafeList<Result<[Int], ProbeError>>()
        Future<[Int], ProbeError>.all(probes.map(\.future)).start { recorder.record($0) }
        for index in [2, 0, 3] { probes[index].complete(.success(index * 10)) }
        #expect(recorder.all.isEmpty)
        probes[1].complete(.success(10))
        #expect(recorder.all == [.success([0, 10, 20, 30])])
    }

    @Test func allOfNothingIsAnEmptyArray() {
        #expect(immediateOutcomes(of: Future<[Int], ProbeError>.all([])) == [.success([])])
    }

    @Test func allFailsWithTheFirstFailureAndCancelsTheOthers() {
        let probes = (0..<3).map { _ in FutureProbe<Int, ProbeError>() }
        let recorder = ThreadSafeList<Result<[Int], ProbeError>>()
        Future<[Int], ProbeError>.all(probes.map(\.future)).start { recorder.record($0) }
        probes[0].complete(.success(0))
        probes[1].complete(.failure(.boom))
        #expect(recorder.all == [.failure(.boom)])
        #expect(probes[2].isCancelled())
        probes[2].complete(.failure(.other))
        probes[2].complete(.success(2))
        #expect(recorder.all == [.failure(.boom)])
    }

    @Test func anImmediateFailureStartsNothingMore() {
        let later = FutureProbe<Int, ProbeError>()
        let outcomes = immediateOutcomes(
            of: Future<[Int], ProbeError>.all([.success(1), .failure(.boom), later.future]))
        #expect(outcomes == [.failure(.boom)])
        #expect(later.startCount == 0)

        let second = FutureProbe<Int, ProbeError>()
        let zipped = Future<(Int, Int), ProbeError>.zip(.failure(.boom), second.future)
        #expect(immediateOutcomes(of: zipped).map { $0.failure } == [.boom])
        #expect(second.startCount == 0)
    }

    @Test func allKeepsNilValues() {
        let values: [Int?] = [1, nil, 3, nil]
        let all = Future<[Int?], ProbeError>.all(values.map { Future.success($0) })
        #expect(immediateOutcomes(of: all) == [.success([1, nil, 3, nil])])

        let probes = (0..<2).map { _ in FutureProbe<String?, ProbeError>() }
        let recorder = ThreadSafeList<Result<[String?], ProbeError>>()
        Future<[String?], ProbeError>.all(probes.map(\.future)).start { recorder.record($0) }
        probes[0].complete(.success(nil))
        #expect(recorder.all.isEmpty)
        probes[1].complete(.success("b"))
        #expect(recorder.all == [.success([nil, "b"])])
    }

    @Test func cancellingAllCancelsEveryFuture() {
        let probes = (0..<3).map { _ in FutureProbe<Int, ProbeError>() }
        let work = Future<[Int], ProbeError>.all(probes.map(\.future)).start { _ in }
        probes[1].complete(.success(1))
        work.cancel()
        #expect(probes[0].isCancelled())
        #expect(probes[2].isCancelled())
    }

    @Test func allCollectsFuturesThatFinishOnManyThreads() async {
        let count = 1_000
        let futures = (0..<count).map { index in
            Future<Int, ProbeError> { completion in
                DispatchQueue.global().async { completion(.success(index)) }
                return NotCancellable()
            }
        }
        let result = await firstOutcome(of: Future<[Int], ProbeError>.all(futures), within: hangBound)
        #expect(result == .success(Array(0..<count)))
    }
}

@Suite("Future: zip of three and four")
struct FutureZipManyTests {
    @Test func zipThreeKeepsThePositions() async throws {
        let (a, b, c) = try await Future.zip(
            Future<Int, ProbeError>.success(1), .success("two"), .success([3.0])
        ).value
        #expect(a == 1)
        #expect(b == "two")
        #expect(c == [3.0])
    }

    @Test func zipFourWaitsForEveryPartInAnyOrder() throws {
        let probes = (0..<4).map { _ in FutureProbe<Int, ProbeError>() }
        let recorder = ThreadSafeList<Result<(Int, Int, Int, Int), ProbeError>>()
        Future.zip(probes[0].future, probes[1].future, probes[2].future, probes[3].future)
            .start { recorder.record($0) }
        #expect(probes.map(\.startCount) == [1, 1, 1, 1])
        for index in [3, 1, 0] { probes[index].complete(.success(index * 10)) }
        #expect(recorder.all.isEmpty)
        probes[2].complete(.success(20))
        let values = try #require(recorder.all.first?.value)
        #expect(recorder.all.count == 1)
        let ordered: [Int] = [values.0, values.1, values.2, values.3]
        #expect(ordered == [0, 10, 20, 30])
    }

    @Test func zipThreeFailsWithTheFirstFailureAndCancelsTheRest() {
        let probes = (0..<3).map { _ in FutureProbe<Int, ProbeError>() }
        let recorder = ThreadSafeList<Result<(Int, Int, Int), ProbeError>>()
        Future.zip(probes[0].future, probes[1].future, probes[2].future).start { recorder.record($0) }
        probes[1].complete(.failure(.boom))
        #expect(recorder.all.map { $0.failure } == [.boom])
        #expect(probes[0].isCancelled())
        #expect(probes[2].isCancelled())
        probes[0].complete(.failure(.other))
        #expect(recorder.all.map { $0.failure } == [.boom])
    }
}
