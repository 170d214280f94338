/// Handlers that hear of something, each until its subscription ends: the registry behind a
/// watch's `refresh()` and a store's reports of its replays.
package final class Listeners<Argument: Sendable>: Sendable {
    /// A handler, kept in a named field: a closure stored as a generic element would be kept in
    /// its most general form, and each read of it would allocate a thunk.
    private struct Handler {
        let hear: @Sendable (Argument) -> Void
    }

    private struct State {
        var handlers = Registry<Handler>()
        /// How many times ``tellNumbered(_:)`` has told.
        var numbered = 0
    }

    private let state = Locked(State())

    /// No listeners yet.
    package init() {}

    /// Whether nobody listens now.
    package var isEmpty: Bool {
        state.withLock { $0.handlers.isEmpty }
    }

    /// Calls `handler` with each ``tell(_:)`` until the returned subscription is cancelled or
    /// released.
    package func add(_ handler: @escaping @Sendable (Argument) -> Void) -> ChangeFeed.Subscription {
        let id = state.withLock { $0.handlers.add(Handler(hear: handler)) }
        return ChangeFeed.Subscription { [weak self] in
            _ = self?.state.withLock { $0.handlers.remove(id) }
        }
    }

    /// Calls every handler with `argument`, on the caller's thread, with no lock held.
    package func tell(_ argument: Argument) {
        let handlers = state.withLock { $0.handlers.elements }
        for handler in handlers { handler.hear(argument) }
    }

    /// Numbers this tell (1, 2, …), then calls every handler with what `argument` makes of the
    /// number; returns the number. A handler added after the number was taken does not hear it.
    @discardableResult
    package func tellNumbered(_ argument: (Int) -> Argument) -> Int {
        let (number, handlers) = state.withLock { state in
            state.numbered += 1
            return (state.numbered, state.handlers.elements)
        }
        let told = argument(number)
        for handler in handlers { handler.hear(told) }
        return number
    }

    /// The number of the latest ``tellNumbered(_:)``; `0` before the first.
    package var latestNumber: Int {
        state.withLock { $0.numbered }
    }
}
