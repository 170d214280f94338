import Foundation

/// Where a ``LiveMiddleware`` tells the watches of its chain what writes touched: each watch
/// subscribes with the resources its reads depend on, and is signalled when a change touches
/// one of them.
package final class ChangeFeed: Sendable {
    /// The feed of the ``LiveMiddleware`` a request is passing through, while it starts: a
    /// middleware behind it that learns of changes on its own (DepotOffline's replays) publishes
    /// them here.
    @TaskLocal package static var current: ChangeFeed?

    private struct Subscriber {
        var resources: Set<String>
        var signal: @Sendable () -> Void
    }

    private let subscribers = Locked((byID: [Int: Subscriber](), nextID: 0))

    package init() {}

    /// Calls `signal` whenever a change touches one of `resources` (paths without query or
    /// surrounding `/`), until the returned subscription is cancelled.
    func subscribe(_ resources: Set<String>, signal: @escaping @Sendable () -> Void) -> Subscription {
        let id = subscribers.withLock { state in
            defer { state.nextID += 1 }
            state.byID[state.nextID] = Subscriber(resources: resources, signal: signal)
            return state.nextID
        }
        return Subscription { [weak self] in
            _ = self?.subscribers.withLock { $0.byID.removeValue(forKey: id) }
        }
    }

    /// How many watches are subscribed now.
    var subscriberCount: Int {
        subscribers.withLock { $0.byID.count }
    }

    /// Tells every subscriber whose resources a change of the paths in `paths` touches (see
    /// ``touches(_:_:)``).
    package func publish(_ paths: [String]) {
        let changed = paths.map(StoredResponseKey.resource(of:))
        let signals = subscribers.withLock { state in
            state.byID.values.filter { subscriber in
                subscriber.resources.contains { resource in changed.contains { Self.touches($0, resource) } }
            }
            .map(\.signal)
        }
        for signal in signals { signal() }
    }

    /// Whether a write to `changed` touches what a read of `resource` answers: the record
    /// itself (`posts/7`), its collection (`posts`, also under a parent: `users/1/posts`); a
    /// write to a collection (a create) touches its listings.
    static func touches(_ changed: String, _ resource: String) -> Bool {
        if resource == changed { return true }
        guard let slash = changed.lastIndex(of: "/") else { return false }
        let collection = changed[..<slash]
        return resource == collection || resource.hasSuffix("/" + collection)
    }

    /// A subscription to a feed; cancelled when released, or by ``cancel()``.
    final class Subscription: Sendable {
        private let end: Locked<(@Sendable () -> Void)?>

        init(_ end: @escaping @Sendable () -> Void) {
            self.end = Locked(end)
        }

        deinit { cancel() }

        func cancel() {
            let end = self.end.withLock { end in
                defer { end = nil }
                return end
            }
            end?()
        }
    }
}
