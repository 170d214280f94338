import Foundation
import Testing

@testable import Depot

/// A finished chain lets go of what its steps captured, even when a caller keeps its
/// `Cancellable` (as `zip`, `all` and `recover` do with their parts).
@Suite("Future: finished chains are released")
struct FutureMemoryTests {
    /// Something a transform captures; it reports its release, the event a test waits for.
    private final class Captured: Sendable {
        private let released: AsyncStream<Void>.Continuation

        init(_ released: AsyncStream<Void>.Continuation) {
            self.released = released
        }

        deinit { released.finish() }
    }

    /// Whether `released` ends (its object is gone) within ``hangBound``; a retain cycle
    /// never lets go.
    private static func ends(_ released: AsyncStream<Void>) async -> Bool {
        await awaitBounded {
            for await _ in released {}
            return true
        } ?? false
    }

    /// A future that answers `value` from another thread, a moment later.
    private static func later(_ value: Int) -> Future<Int, ProbeError> {
        Future { completion in
            DispatchQueue.global().async { completion(.success(value)) }
            return NotCancellable()
        }
    }

    /// Runs `make` with a fresh captured object, waits for the future it makes to finish,
    /// drops everything, and answers whether the object is gone.
    private static func isReleased(
        after make: (Captured) -> Future<Int, ProbeError>
    ) async -> Bool {
        let (released, signal) = AsyncStream<Void>.makeStream()
        do {
            let future = make(Captured(signal))
            _ = await firstOutcome(of: future)
        }
        // The thread that delivered the outcome lets go of the chain just after.
        return await ends(released)
    }

    /// Keeps the `Cancellable` of the future it started, while that future's completion
    /// captures it: the cycle a view model makes with `self.work = future.start { self… }`.
    private final class Owner: @unchecked Sendable {
        var work: (any Cancellable)?
        private let released: AsyncStream<Void>.Continuation

        init(_ released: AsyncStream<Void>.Continuation) {
            self.released = released
        }

        deinit { released.finish() }
    }

    /// Work that answers later from another thread, and whose cancellable keeps its promise
    /// (the `CancellationToken` pattern: `token.onCancel { promise(.failure(…)) }`).
    private static func keepingItsPromise(_ value: Int) -> Future<Int, ProbeError> {
        Future { promise in
            let token = CancellationToken()
            token.onCancel { promise(.failure(.boom)) }
            DispatchQueue.global().async { promise(.success(value)) }
            return token
        }
    }

    /// Starts `future` for an owner that keeps its cancellable and is captured by its
    /// completion, waits for the outcome, drops the owner, and answers whether it is gone.
    private static func ownerIsReleased(starting future: Future<Int, ProbeError>) async -> Bool {
        let (released, signal) = AsyncStream<Void>.makeStream()
        do {
            let owner = Owner(signal)
            let delivered = await firstDelivery { (deliver: @escaping @Sendable (Int) -> Void) in
                owner.work = future.start { result in
                    _ = owner
                    deliver((try? result.get()) ?? -1)
                }
            }
            #expect(delivered != nil)
        }
        return await ends(released)
    }

    @Test(
        "a finished future lets go of the completion its owner's cancellable would keep",
        arguments: ["plain", "map", "flatMap", "zip", "all", "recover"])
    func finishedFutureReleasesItsCompletion(_ shape: String) async {
        let part = Self.keepingItsPromise(1)
        let future: Future<Int, ProbeError> =
            switch shape {
            case "plain": part
            case "map": part.map { $0 + 1 }
            case "flatMap": part.flatMap { Self.keepingItsPromise($0 + 1) }
            case "zip": Future.zip(part, Self.keepingItsPromise(2)).map { $0.0 + $0.1 }
            case "all": Future.all([part, Self.keepingItsPromise(2)]).map { $0.reduce(0, +) }
            default: part.recover { _ in .success(0) }
            }
        #expect(await Self.ownerIsReleased(starting: future))
    }

    @Test("a flatMap inside zip, succeeding at once")
    func zipSynchronous() async {
        let released = await Self.isReleased { captured in
            let chain = Future<Int, ProbeError>.success(1).flatMap { value in
                _ = captured
                return .success(value + 1)
            }
            return Future.zip(chain, .success(2)).map { $0.0 + $0.1 }
        }
        #expect(released)
    }

    @Test("a flatMap inside zip, succeeding later on another thread")
    func zipAsynchronous() async {
        let released = await Self.isReleased { captured in
            let chain = Self.later(1).flatMap { value in
                _ = captured
                return Self.later(value + 1)
            }
            return Future.zip(chain, Self.later(2)).map { $0.0 + $0.1 }
        }
        #expect(released)
    }

    @Test("a flatMap under recover that succeeds")
    func recoverAfterSuccess() async {
        let released = await Self.isReleased { captured in
            Self.later(1).flatMap { value in
                _ = captured
                return Self.later(value)
            }
            .recover { _ in .success(0) }
        }
        #expect(released)
    }

    @Test("nested flatMaps whose inner step fails later")
    func nestedAsynchronousFailure() async {
        let released = await Self.isReleased { captured in
            Self.later(1).flatMap { value in
                Self.later(value).flatMap { _ in
                    _ = captured
                    return Future<Int, ProbeError> { completion in
                        DispatchQueue.global().async { completion(.failure(.boom)) }
                        return NotCancellable()
                    }
                }
            }
            .flatMap { value in
                _ = captured
                return .success(value)
            }
        }
        #expect(released)
    }
}
