import Foundation

/// A value guarded by a lock, shared between threads.
///
/// Copies share the same value and lock (the storage is one heap object), so a
/// `Locked` is passed around like a reference. Depot supports platforms older than
/// the `Synchronization` module, so instead of `Mutex` it keeps the platform's
/// cheapest lock (`os_unfair_lock` on Apple platforms, a `pthread_mutex_t`
/// elsewhere) inline in the same allocation as the value: one allocation, no
/// Objective-C-style object, which matters on the hot path of every `Future`.
///
/// The one lock wrapper of the package: `DepotOffline` and the conformance library use
/// it too (`package` access).
@usableFromInline
package struct Locked<State>: @unchecked Sendable {
    /// The same heap object a `Future` step uses (``StepStorage``), with nothing fixed.
    @usableFromInline
    let storage: StepStorage<Void, State>

    /// A lock guarding `state`.
    @inlinable
    package init(_ state: State) {
        storage = StepStorage.make(fixed: (), state: state)
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointers { header, lock in
            LockPrimitive.lock(lock)
            defer { LockPrimitive.unlock(lock) }
            return try body(&header.pointee.state)
        }
    }
}

#if canImport(Darwin)
    /// The platform lock: `os_unfair_lock`.
    @usableFromInline
    typealias LockPrimitive = os_unfair_lock

    extension os_unfair_lock {
        @inlinable
        static func initialize(_ lock: UnsafeMutablePointer<os_unfair_lock>) {
            lock.initialize(to: os_unfair_lock())
        }

        @inlinable
        static func destroy(_ lock: UnsafeMutablePointer<os_unfair_lock>) {
            lock.deinitialize(count: 1)
        }

        @inlinable
        static func lock(_ lock: UnsafeMutablePointer<os_unfair_lock>) {
            os_unfair_lock_lock(lock)
        }

        @inlinable
        static func unlock(_ lock: UnsafeMutablePointer<os_unfair_lock>) {
            os_unfair_lock_unlock(lock)
        }
    }
#else
    /// The platform lock: a default (non-recursive) `pthread_mutex_t`.
    @usableFromInline
    typealias LockPrimitive = pthread_mutex_t

    extension pthread_mutex_t {
        @inlinable
        static func initialize(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
            pthread_mutex_init(lock, nil)
        }

        @inlinable
        static func destroy(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
            pthread_mutex_destroy(lock)
            lock.deinitialize(count: 1)
        }

        @inlinable
        static func lock(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
            pthread_mutex_lock(lock)
        }

        @inlinable
        static func unlock(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
            pthread_mutex_unlock(lock)
        }
    }
#endif
