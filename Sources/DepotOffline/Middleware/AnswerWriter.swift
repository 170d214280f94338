import Depot
import Dispatch
import Foundation

/// Writes stored answers in batches, off their callers' paths.
///
/// An answer to keep is put in memory and written with the others that arrive within
/// ``delay``, in one transaction on the store's serial queue: one commit for a burst of
/// reads instead of one each (each commit rewrites the table's and its indexes' pages).
/// Until it is written, a look-up finds it in memory. An answer received less than
/// ``delay`` before the app is killed may be lost; stored answers are copies, and the next
/// read stores it again.
final class AnswerWriter: @unchecked Sendable {
    /// How long an answer waits for others to be written with.
    static let delay: DispatchTimeInterval = .milliseconds(100)
    /// How many waiting answers make the writer write at once, whatever the delay.
    static let batchLimit = 256

    private struct Waiting {
        var answers: [StoredResponseKey: (response: StoredResponse, storage: OfflineResponseStorage)] = [:]
        var order: [StoredResponseKey] = []
        var scheduled = false
    }

    private let queue: DispatchQueue
    // Guarded by `lock`.
    private let lock = NSLock()
    private var state = Waiting()

    /// A writer that works on `queue`, the queue look-ups of the database also go through.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Keeps `response` for `key` in `storage`, soon.
    func keep(_ response: StoredResponse, for key: StoredResponseKey, in storage: OfflineResponseStorage) {
        let (schedule, now) = withState { state -> (Bool, Bool) in
            if state.answers.updateValue((response, storage), forKey: key) == nil { state.order.append(key) }
            let full = state.order.count >= Self.batchLimit
            guard !state.scheduled else { return (false, false) }
            state.scheduled = true
            return (true, full)
        }
        guard schedule else { return }
        if now {
            queue.async { self.write() }
        } else {
            queue.asyncAfter(deadline: .now() + Self.delay) { self.write() }
        }
    }

    /// The answer waiting to be written for `key`, if any.
    func waitingAnswer(for key: StoredResponseKey) -> StoredResponse? {
        withState { $0.answers[key]?.response }
    }

    /// Writes every waiting answer now; call on the writer's queue.
    func write() {
        let batch = withState { state in
            state.scheduled = false
            return state.order.compactMap { key in state.answers[key].map { (key, $0.response, $0.storage) } }
        }
        guard !batch.isEmpty else { return }
        // Grouped by storage (one, unless several middlewares share the store), in order.
        var storages: [ObjectIdentifier: (OfflineResponseStorage, [(StoredResponse, StoredResponseKey)])] =
            [:]
        for (key, response, storage) in batch {
            storages[ObjectIdentifier(storage), default: (storage, [])].1.append((response, key))
        }
        for (storage, items) in storages.values { _ = try? storage.store(items) }
        // Forgotten only once written, so a look-up in between still finds them in memory.
        withState { state in
            for (key, response, _) in batch where state.answers[key]?.response == response {
                state.answers[key] = nil
            }
            state.order = state.order.filter { state.answers[$0] != nil }
        }
    }

    /// Writes every waiting answer before returning (tests, and a store about to close).
    func flush() {
        queue.sync { write() }
    }

    private func withState<T>(_ body: (inout Waiting) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }
}
