import Depot
import Foundation

/// Future: composing and awaiting must cost about what hand-written callbacks cost.
enum FutureCases {
    /// Chains or awaits per sample.
    static let count = 100_000

    static let all: [BenchmarkCase] = [chain, chainInline, awaiting]

    /// `source.map.flatMap.map.start` vs the same three steps written by hand, each as a
    /// step that answers through an escaping completion handler.
    static let chain = BenchmarkCase(
        name: "future.chain", target: 2.0, rounds: 31,
        sample: "\(count) chains source → map → flatMap → map, built, started and completed, vs the same "
            + "three steps as escaping completion-handler closures (source { addOne { double { subtractOne } } })"
    ) { _ in
        let api = Callbacks.make()
        return Sides(
            depot: { try depotChains(api) },
            baseline: {
                let sink = Sink()
                for value in 0..<count {
                    api.source(value) { first in
                        api.addOne(first) { second in
                            api.double(second) { third in
                                api.subtractOne(third) { sink.add($0) }
                            }
                        }
                    }
                }
                try check(sink.total == expectedTotal, "the callbacks summed to \(sink.total)")
            })
    }

    /// The same chains vs callbacks with the two map steps written inline, which is what
    /// a user writes for steps that do not wait for anything.
    static let chainInline = BenchmarkCase(
        name: "future.chain.inline", target: 2.0, rounds: 31,
        sample: "\(count) chains as in future.chain vs callbacks with the map steps inline "
            + "(source { v in double(v + 1) { sink(w - 1) } })"
    ) { _ in
        let api = Callbacks.make()
        return Sides(
            depot: { try depotChains(api) },
            baseline: {
                let sink = Sink()
                for value in 0..<count {
                    api.source(value) { first in
                        api.double(first + 1) { third in
                            sink.add(third - 1)
                        }
                    }
                }
                try check(sink.total == expectedTotal, "the callbacks summed to \(sink.total)")
            })
    }

    /// `count` chains over `api`, each started and completed.
    private static func depotChains(_ api: Callbacks) throws {
        let sink = Sink()
        for value in 0..<count {
            Future<Int, Never> { completion in
                api.source(value) { completion(.success($0)) }
                return Uncancellable()
            }
            .map { $0 + 1 }
            .flatMap { second in
                Future { completion in
                    api.double(second) { completion(.success($0)) }
                    return Uncancellable()
                }
            }
            .map { $0 - 1 }
            .start { result in
                if case .success(let value) = result { sink.add(value) }
            }
        }
        try check(sink.total == expectedTotal, "the chains summed to \(sink.total)")
    }

    /// `await future.value` vs `withCheckedContinuation` around the same callback.
    static let awaiting = BenchmarkCase(
        name: "future.await", target: 1.5, rounds: 31,
        sample: "\(count) awaits of a callback that answers at once: `await future.value` vs "
            + "`withCheckedContinuation`"
    ) { _ in
        let api = Callbacks.make()
        return Sides(
            depot: {
                var total = 0
                for value in 0..<count {
                    let future = Future<Int, Never> { completion in
                        api.source(value) { completion(.success($0)) }
                        return Uncancellable()
                    }
                    total &+= await future.value
                }
                try check(total == (count - 1) * count / 2, "the awaits summed to \(total)")
            },
            baseline: {
                var total = 0
                for value in 0..<count {
                    total &+= await withCheckedContinuation { continuation in
                        api.source(value) { continuation.resume(returning: $0) }
                    }
                }
                try check(total == (count - 1) * count / 2, "the awaits summed to \(total)")
            })
    }

    /// Σ ((v + 1) * 2 - 1) for v in 0..<count.
    private static let expectedTotal = (0..<count).reduce(0) { $0 &+ (($1 + 1) * 2 - 1) }
}

/// A callback API as another module would offer it. The cases get it from
/// ``make()``, which the optimizer cannot see into, so the completion handlers really
/// escape (as they do with any asynchronous API) instead of being inlined away.
struct Callbacks: Sendable {
    /// A step: takes a value and answers through an escaping completion handler.
    typealias Step = @Sendable (Int, @escaping @Sendable (Int) -> Void) -> Void

    /// Answers `value` at once.
    let source: Step
    /// Answers `value + 1` at once.
    let addOne: Step
    /// Answers `value * 2` at once.
    let double: Step
    /// Answers `value - 1` at once.
    let subtractOne: Step

    /// The API, opaque to the optimizer (built once per case, outside the timing).
    @inline(never) @_optimize(none)
    static func make() -> Callbacks {
        Callbacks(
            source: { value, done in done(value) }, addOne: { value, done in done(value + 1) },
            double: { value, done in done(value * 2) }, subtractOne: { value, done in done(value - 1) })
    }
}

/// What a user returns from a `Future` whose work cannot be stopped.
struct Uncancellable: Cancellable {
    func cancel() {}
}

/// Collects the chains' results; every chain completes on the thread that starts it.
final class Sink: @unchecked Sendable {
    private(set) var total = 0

    func add(_ value: Int) {
        total &+= value
    }
}
