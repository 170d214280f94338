import Depot
import Foundation

/// The outbox's state in memory, under one lock: taken inside the store's lock at times,
/// never the other way round.
final class OutboxState: @unchecked Sendable {
    struct Fields {
        /// How many entries are in state `queued`, as last read or changed (changed only under
        /// the store's lock too).
        var queuedCount = 0
        /// How many entries are in state `kept`, the same way.
        var keptCount = 0
        /// `PRAGMA data_version` when the counts were last read from the file: another
        /// connection's commit changes it, and the counts are read again.
        var dataVersion: Int64 = -1
        /// Whether every queued entry waits behind a kept one for its resource, as the last
        /// replay found: no replay starts on its own until an entry is queued, retried,
        /// discarded or another process changes the file.
        var held = false
        /// The policy of the middleware that last handed a request on: what outcomes keep of
        /// the answers.
        var policy = OfflinePolicy()
        /// The queued writes as reads see them (see ``PendingWrites``), kept in step with the
        /// file (changed only under the store's lock).
        var pending = PendingWrites()
        /// The ids the server named for records created offline, as in the file.
        var localIDs = LocalIDs()
        /// The latest writes the server accepted (up to ``Outbox/maxRecentOutcomes``), laid
        /// over answers stored before them, so a stored answer shows what the server now holds.
        var sent = PendingWrites()
        /// Whether another connection changed the file since ``pending`` and ``localIDs`` were
        /// read: they are read again when a read needs them.
        var pendingIsStale = true
        /// The replayer that sends the entries: the store's (weak: the store holds it, and it
        /// holds the outbox).
        weak var replayer: OutboxReplayer?
    }

    private let fields = Locked(Fields())

    func withLock<T>(_ body: (inout Fields) -> T) -> T {
        fields.withLock(body)
    }
}
