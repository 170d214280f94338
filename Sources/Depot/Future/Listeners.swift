/// Handlers that hear of something, each until its subscription ends: the registry behind a
/// watch's `refresh()` and a store's reports of its replays.
package final class Listeners<Argument: Sendable>: Sendable {
    private let state = Locked(Registry<@Sendable (Argument) -> Void>())

    /// No listeners yet.
    package init() {}

    /// Whether nobody listens now.
    package var isEmpty: Bool {
        state.withLock { $0.isEmpty }
    }

    /// Calls `handler` with each ``tell(_:)`` until the returned subscription is cancelled or
    /// released.
    package func add(_ handler: @escaping @Sendable (Argument) -> Void) -> ChangeFeed.Subscription {
        let id = state.withLock { $0.add(handler) }
        return ChangeFeed.Subscription { [weak self] in
            _ = self?.state.withLock { $0.remove(id) }
        }
    }

    /// Calls every handler with `argument`, on the caller's thread, with no lock held.
    package func tell(_ argument: Argument) {
        let handlers = state.withLock { $0.elements }
        for handler in handlers { handler(argument) }
    }
}
