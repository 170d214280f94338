import Depot
import Foundation
import JSONServerEngine

/// What the outbox tells: its ``OutboxEvent``s, and the changes a `.live()` in front of the
/// store hears of (published once the store's lock is released).
extension Outbox {
    /// Reports `event` on ``events`` (under the store's lock: in the order the store changed),
    /// and notes what it touched for ``publishChanges()``: the paths of the entry (for a create
    /// the server named, the record's local and server paths too). A write queued by a request
    /// that passed a `.live()` (`publishedBy`) is noted for the other listeners only: that one
    /// reports it as the request returns.
    func emit(_ event: OutboxEvent, publishedBy: ObjectIdentifier? = nil) {
        hub.emit(event)
        guard !changeListeners.isEmpty else { return }
        let entry = event.entry
        var changes = [ChangeFeed.Change(entry.method, entry.resource)]
        // Under the store's lock: the ids in memory, never read from the file here.
        let rewritten = state.withLock { $0.localIDs }.rewriting(entry.resource)
        if rewritten != entry.resource { changes.append(ChangeFeed.Change(entry.method, rewritten)) }
        if case .created(_, let localID, let serverID) = event {
            let collection = entry.resource
            for id in [localID, serverID] {
                if let text = JSONServerRules.idText(id) {
                    changes.append(
                        ChangeFeed.Change(
                            .record(text, in: Array(collection.collection), under: Array(collection.parent))))
                }
            }
        }
        unpublished.withLock { $0.append(ChangeFeed.Publication(changes, publishedBy: publishedBy)) }
    }

    /// Tells the listeners what the events noted since the last call touched, in one
    /// publication (and one for each write a `.live()` reports itself): called once the store's
    /// lock is released, so a listener may use the store.
    func publishChanges() {
        let noted = unpublished.withLock { noted in
            defer { noted = [] }
            return noted
        }
        var merged: [ChangeFeed.Change] = []
        for publication in noted {
            if publication.publishedBy == nil {
                merged += publication.changes
            } else {
                changeListeners.tell(publication)
            }
        }
        if !merged.isEmpty { changeListeners.tell(ChangeFeed.Publication(merged)) }
    }

    /// Calls `publish` with what the outbox's replays send, create and roll back, what the app
    /// retries or discards, and the writes it queues, on no lock of the store's, until the
    /// subscription ends.
    func subscribeChanges(_ publish: @escaping @Sendable (ChangeFeed.Publication) -> Void)
        -> ChangeFeed.Subscription
    {
        changeListeners.add(publish)
    }
}
