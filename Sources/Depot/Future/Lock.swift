import Foundation

/// A value guarded by a lock, shared between threads: the one lock of the package.
///
/// Copies share the same value and lock (the storage is one heap object), so a
/// `Locked` is passed around like a reference. Depot supports platforms older than
/// the `Synchronization` module, so instead of `Mutex` it keeps the platform's
/// cheapest lock (`os_unfair_lock` on Apple platforms, a `pthread_mutex_t`
/// elsewhere) inline in the same allocation as the value: one allocation, no
/// Objective-C-style object, which matters on the hot path of every `Future` (each run of
/// a combinator is one `Locked`). `DepotOffline` guards its SQLite connection with one too.
/// (InMemoryBackend's store keeps a recursive lock: its routes call back into it.)
@usableFromInline
package struct Locked<State>: @unchecked Sendable {
    @usableFromInline
    let storage: LockedStorage<State>

    /// A lock guarding `state`, which is evaluated in place, inside the shared object (a state
    /// built first and passed in would be copied: a retain and a release more for each
    /// reference it holds).
    @inlinable
    package init(_ state: @autoclosure () -> State) {
        storage = LockedStorage.make(state())
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<R, Failure: Error>(_ body: (inout State) throws(Failure) -> R) throws(Failure) -> R
    {
        try storage.withUnsafeMutablePointers { (state, lock) throws(Failure) -> R in
            LockPrimitive.lock(lock)
            defer { LockPrimitive.unlock(lock) }
            return try body(&state.pointee)
        }
    }

    /// Runs `body` with exclusive access to the state if the lock is free at once; `nil`,
    /// without running it, when another thread holds the lock.
    @inlinable
    package func withLockIfAvailable<R, Failure: Error>(_ body: (inout State) throws(Failure) -> R)
        throws(Failure) -> R?
    {
        try storage.withUnsafeMutablePointers { (state, lock) throws(Failure) -> R? in
            guard LockPrimitive.tryLock(lock) else { return nil }
            defer { LockPrimitive.unlock(lock) }
            return try body(&state.pointee)
        }
    }
}

/// The heap object behind a ``Locked``: the state, and the lock as the tail element (at a
/// stable address), in one allocation.
///
/// A closure that captures only this object needs no context of its own, so a `Future`
/// step costs one allocation per run. Keep closures in named fields of a struct, never
/// directly as `State` (a closure, or a tuple or optional of one, stored as a generic
/// parameter is kept in its most general form, and every read then allocates a
/// reabstraction thunk).
@usableFromInline
final class LockedStorage<State>: ManagedBuffer<State, LockPrimitive> {
    /// A new object holding `state` (evaluated in place), with its lock initialized.
    @inlinable
    static func make(_ state: @autoclosure () -> State) -> LockedStorage<State> {
        let buffer = create(minimumCapacity: 1) { _ in state() }
        let storage = unsafeDowncast(buffer, to: LockedStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { LockPrimitive.initialize($0) }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { LockPrimitive.destroy($0) }
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
        static func tryLock(_ lock: UnsafeMutablePointer<os_unfair_lock>) -> Bool {
            os_unfair_lock_trylock(lock)
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
        static func tryLock(_ lock: UnsafeMutablePointer<pthread_mutex_t>) -> Bool {
            pthread_mutex_trylock(lock) == 0
        }

        @inlinable
        static func unlock(_ lock: UnsafeMutablePointer<pthread_mutex_t>) {
            pthread_mutex_unlock(lock)
        }
    }
#endif
