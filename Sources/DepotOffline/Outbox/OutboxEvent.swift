import Depot
import Foundation

/// What happened to an ``Outbox`` entry, as ``Outbox/events`` reports it.
///
/// ```swift
/// for await event in store.outbox.events {
///     switch event {
///     case .queued(let entry): badge.pending += 1
///     case .sent(let entry, let response): reconcile(entry.id, with: response)
///     case .kept(let entry, let error): askUser(about: entry, because: error)
///     case .discarded(let entry): forget(entry.id)
///     case .created(_, let localID, let serverID): selection.replace(localID, with: serverID)
///     case .conflict(let entry, let conflict): compare(entry.id, conflict.mine, conflict.theirs)
///     }
/// }
/// ```
public enum OutboxEvent: Sendable, Hashable {
    /// A write was committed to the store (its caller received
    /// ``Depot/ServiceError/queued(_:)``), or a kept entry was put back by
    /// ``Outbox/retry(_:)``.
    case queued(OutboxEntry)
    /// A replay sent the entry and the server answered with a 2xx: the entry is gone from the
    /// store. The response is the server's (a `201` with the created record's id, say).
    case sent(OutboxEntry, BackendResponse)
    /// A replay met the server's refusal (400, 403, 404, 409, 410, 412, 422 or another 4xx
    /// but 401, 407, 408, 421, 425 and 429): the entry is kept, in state ``OutboxEntry/State/kept(_:)``, until the app retries or
    /// discards it. Its write is rolled back: reads no longer show it (until
    /// ``Outbox/retry(_:)`` queues it again).
    case kept(OutboxEntry, ServiceError)
    /// The app discarded the entry with ``Outbox/discard(_:)``: it will never be sent.
    case discarded(OutboxEntry)
    /// A create queued with a local id reached the server, which named the record
    /// `serverID` (from its answer's `id`, or its `Location`); it follows the entry's
    /// ``sent(_:_:)``. From now on the local id stands for the server's id: writes queued
    /// after the create are sent with it, and reads by the local id answer the server's
    /// record.
    case created(OutboxEntry, localID: JSONValue, serverID: JSONValue)
    /// A replay found that another device changed the record this `PUT`, `PATCH` or `DELETE`
    /// was made on, in a way that collides with it (see ``OutboxConflict``), and
    /// ``OfflinePolicy/onConflict`` decided: the entry is kept for the app (its state
    /// ``OutboxEntry/State/kept(_:)``, with the conflict in ``OutboxRefusal/conflict``, and
    /// reads go on showing it), or ``discarded(_:)`` or ``sent(_:_:)`` follows.
    case conflict(OutboxEntry, OutboxConflict)

    /// The entry the event is about (as it stands after the event).
    public var entry: OutboxEntry {
        switch self {
        case .queued(let entry), .sent(let entry, _), .kept(let entry, _), .discarded(let entry),
            .created(let entry, _, _), .conflict(let entry, _):
            return entry
        }
    }
}

/// The subscribers of ``Outbox/events``: each gets every event emitted after it subscribed.
final class OutboxEventHub: Sendable {
    /// The streams fed, by subscription number.
    private let subscribers = Locked(Registry<AsyncStream<OutboxEvent>.Continuation>())

    /// A new stream, fed from now on, holding up to `limit` unread events (the oldest are
    /// dropped past that); unsubscribed when its consumer stops.
    func subscribe(bufferingNewest limit: Int) -> AsyncStream<OutboxEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: OutboxEvent.self, bufferingPolicy: .bufferingNewest(limit))
        let id = subscribers.withLock { $0.add(continuation) }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    /// Feeds `event` to every subscriber. Callers emit under the store's lock, so every
    /// subscriber sees the events in the order the store changed.
    func emit(_ event: OutboxEvent) {
        let current = subscribers.withLock { $0.elements }
        for continuation in current { continuation.yield(event) }
    }

    /// Ends every subscriber's stream (the outbox is gone: no event can follow).
    func finishAll() {
        let current = subscribers.withLock { $0.removeAll() }
        for continuation in current { continuation.finish() }
    }

    private func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.remove(id) }
    }
}
