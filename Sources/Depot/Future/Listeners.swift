/// Handlers that hear of something, each until its subscription ends: the registry behind a
/// watch's `refresh()` and a store's reports of its replays.
package final class Listeners<Argument: Sendable>: Sendable {
    private let state = Locked((byID: [Int: @Sendable (Argument) -> Void](), nextID: 0))

    /// No listeners yet.
    package init() {}

    /// Whether nobody listens now.
    package var isEmpty: Bool {
        state.withLock { $0.byID.isEmpty }
    }

    /// Calls `handler` with each ``tell(_:)`` until the returned subscription is cancelled or
    /// released.
    package func add(_ handler: @escaping @Sendable (Argument) -> Void) -> ChangeFeed.Subscription {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.byID[state.nextID] = handler
            return state.nextID
        }
        return ChangeFeed.Subscription { [weak self] in
            _ = self?.state.withLock { $0.byID.removeValue(forKey: id) }
        }
    }

    /// Calls every handler with `argument`, on the caller's thread, with no lock held.
    package func tell(_ argument: Argument) {
        let handlers = state.withLock { Array($0.byID.values) }
        for handler in handlers { handler(argument) }
    }
}
