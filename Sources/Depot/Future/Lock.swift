import Foundation

/// A value guarded by a lock, shared between threads.
///
/// Depot supports platforms older than the `Synchronization` module, so it keeps
/// this small wrapper around `NSLock` instead of `Mutex`.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
