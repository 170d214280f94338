import Foundation

@testable import Depot

/// A one-shot signal an async test can wait for, with a bound.
final class OneShotGate: Sendable {
    private struct State {
        var open = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open, or after `seconds` at most.
    func wait(seconds: Double = hangBound) async {
        _ = await boundedWait(seconds) { await self.waitUntilOpenOrCancelled() }
    }

    private func waitUntilOpenOrCancelled() async {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.open || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// The oldest request `backend` received that no earlier call took, waiting `seconds` at most.
func nextRequest(to backend: ScriptedBackend, within seconds: Double = hangBound) async -> BackendRequest? {
    let request = await boundedWait(seconds) {
        var iterator = backend.received.makeAsyncIterator()
        return await iterator.next()
    }
    return request ?? nil
}

/// Runs `operation`, giving up after `seconds`: `nil` then. The operation must end when
/// its task is cancelled, as awaiting a ``Future`` does.
func boundedWait<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// A future started now whose outcome a test awaits later, with a bound.
final class StartedFuture<Value: Sendable>: Sendable {
    private let outcome = Locked<Result<Value, ServiceError>?>(nil)
    private let done = OneShotGate()
    private let work: any Cancellable

    init(_ future: Future<Value, ServiceError>) {
        let outcome = outcome
        let done = done
        work = future.start { result in
            outcome.withLock { $0 = result }
            done.open()
        }
    }

    /// The outcome, waiting `seconds` at most for it; `nil` if it has not come.
    func result(within seconds: Double = hangBound) async -> Result<Value, ServiceError>? {
        await done.wait(seconds: seconds)
        return outcome.withLock { $0 }
    }

    /// The outcome if it has come, without waiting.
    var current: Result<Value, ServiceError>? {
        outcome.withLock { $0 }
    }

    func cancel() {
        work.cancel()
    }
}
