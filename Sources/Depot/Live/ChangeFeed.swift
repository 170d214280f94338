import Foundation

/// Where a ``LiveMiddleware`` tells the watches of its chain what writes touched: each watch
/// subscribes with the resources its reads depend on, and is signalled when a change touches
/// one of them.
package final class ChangeFeed: Sendable {
    private struct Subscriber {
        var resources: [RequestResource]
        var signal: @Sendable () -> Void
    }

    private struct State {
        var subscribers = Registry<Subscriber>()
        /// How many publications there have been: a read notes it when it starts.
        var version = 0
        /// The latest publications, oldest first, with the version each made.
        var recent: [(version: Int, changes: [Change])] = []
    }

    /// How many publications ``changed(since:touching:)`` remembers.
    static let remembered = 256

    private let state = Locked(State())
    /// The subscriptions this feed holds to the stores behind its middleware (see
    /// ``ChangeSource``): ended with the feed.
    private let sources = Locked([Followed]())
    /// Called with each publication before any subscriber is told.
    private let beforePublish: @Sendable ([Change]) -> Void

    /// A feed; `beforePublish` runs with each publication before the subscribers are told.
    package init(beforePublish: @escaping @Sendable ([Change]) -> Void = { _ in }) {
        self.beforePublish = beforePublish
    }

    /// The number of publications so far: note it when a read starts, and ask
    /// ``changed(since:touching:)`` once its watch has subscribed.
    package var version: Int {
        state.withLock { $0.version }
    }

    /// Calls `signal` whenever a change touches one of `resources` (what reads asked for),
    /// until the returned subscription is cancelled.
    func subscribe(_ resources: [RequestResource], signal: @escaping @Sendable () -> Void) -> Subscription {
        let id = state.withLock { $0.subscribers.add(Subscriber(resources: resources, signal: signal)) }
        return Subscription { [weak self] in
            _ = self?.state.withLock { $0.subscribers.remove(id) }
        }
    }

    /// Whether a publication after `version` touched one of `resources`: a read that started
    /// at `version` may have missed it. `true` when it was too long ago to tell.
    func changed(since version: Int, touching resources: [RequestResource]) -> Bool {
        state.withLock { state in
            guard version < state.version else { return false }
            guard let oldest = state.recent.first?.version, oldest <= version + 1 else { return true }
            for entry in state.recent.reversed() {
                guard entry.version > version else { return false }
                if entry.changes.contains(where: { change in resources.contains { change.touches($0) } }) {
                    return true
                }
            }
            return false
        }
    }

    /// Publishes what `source` reports from now on, while this feed lives (once per store,
    /// however many chains name it).
    func follow(_ source: any ChangeSource) {
        let store = source.changeSource
        let isFollowed = { (sources: inout [Followed]) -> Bool in
            // Stores released since are forgotten here, where one is added.
            sources.removeAll { $0.store == nil }
            return sources.contains { $0.store === store }
        }
        guard !sources.withLock(isFollowed) else { return }
        let subscription = source.subscribeChanges { [weak self] publication in
            guard let self, publication.publishedBy != ObjectIdentifier(self) else { return }
            self.publish(publication.changes)
        }
        let extra = sources.withLock { sources -> Subscription? in
            guard !isFollowed(&sources) else { return subscription }
            sources.append(Followed(store: store, subscription: subscription))
            return nil
        }
        extra?.cancel()
    }

    /// What a store reports: the changes, and the feed that publishes them itself (for a write
    /// queued through its chain), which skips them.
    package struct Publication: Sendable {
        /// What changed.
        package var changes: [Change]
        /// The feed of the `.live()` the write passed, if one did.
        package var publishedBy: ObjectIdentifier?

        /// A publication of `changes`, published already by `publishedBy`'s feed.
        package init(_ changes: [Change], publishedBy: ObjectIdentifier? = nil) {
            self.changes = changes
            self.publishedBy = publishedBy
        }
    }

    /// A store this feed follows, not kept alive by it, and the subscription to it.
    private struct Followed: @unchecked Sendable {
        weak var store: AnyObject?
        let subscription: Subscription
    }

    /// How many watches are subscribed now.
    var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Tells every subscriber whose resources one of `changes` touches (see
    /// ``Change/touches(_:)``).
    package func publish(_ changes: [Change]) {
        beforePublish(changes)
        let signals = state.withLock { state in
            state.version += 1
            state.recent.append((state.version, changes))
            if state.recent.count > Self.remembered {
                state.recent.removeFirst(state.recent.count - Self.remembered)
            }
            return state.subscribers.elements.filter { subscriber in
                subscriber.resources.contains { resource in changes.contains { $0.touches(resource) } }
            }
            .map(\.signal)
        }
        for signal in signals { signal() }
    }

    /// What a write changed, read from what its request addressed (``RequestResource``): a
    /// record (`posts/7`, by `PUT`, `PATCH` or `DELETE`; or by a `POST` to an action under it),
    /// a collection it added to (`posts`, `users/1/posts`, by `POST`), a whole collection, or
    /// a singular resource.
    package struct Change: Sendable, Equatable {
        /// What the write addressed.
        let resource: RequestResource
        /// Whether it added to the collection (a `POST`, or a collection named by hand) rather
        /// than changed what it addresses.
        let adds: Bool

        /// The change a `method` request to `resource` makes: `POST` adds to a collection (or
        /// acts on the record it names), the others change what they address.
        package init(_ method: HTTPMethod, _ resource: RequestResource) {
            self.resource = resource
            self.adds = method == .post
        }

        /// The change a `method` request to `path` makes, the path read by
        /// ``RequestResource/init(path:)``: for writes known only by their path (a stored
        /// outbox entry).
        package init(_ method: HTTPMethod, path: String) {
            self.init(method, RequestResource(path: path))
        }

        /// What a change of `resource` touches when no method tells (``LiveMiddleware/invalidate(_:)``):
        /// a record, what a write to it touches; a collection, what a create in it touches.
        package init(_ resource: RequestResource) {
            self.resource = resource
            self.adds = resource.id == nil && !resource.isSingular
        }

        /// Whether a read of `read` may answer differently after this change:
        /// - the same path, and what is under a record (`posts/7/comments`);
        /// - a record (`posts/7`): the same record under another parent (`users/1/posts/7`), and
        ///   every listing of its collection (`posts?…`, `users/1/posts`);
        /// - an action `POST` under a record (`posts/7/publish`): what a change of that record
        ///   touches;
        /// - a create (`POST posts`): every listing of the collection, and, when the collection
        ///   lies under a record (`movies/1/ratings`), what a change of that record touches;
        /// - a write to a whole collection (`DELETE posts`, or an action `POST` on it typed as
        ///   such, `.collection(["posts"]).appending("archive-all")`): its records and listings;
        /// - a singular resource (`profile`): itself and what is under it.
        package func touches(_ read: RequestResource) -> Bool {
            // The path itself; what is under it unless the write only added to it.
            if read.segments.starts(with: resource.segments),
                read.segments.count == resource.segments.count || !adds || !resource.action.isEmpty
            {
                return true
            }
            if resource.recordSegments != nil { return recordChangeTouches(read, of: resource) }
            if resource.isSingular { return false }
            guard adds, resource.action.isEmpty else {
                // The whole collection: its records and listings.
                return read.name == resource.name && !read.isSingular
            }
            if Self.isListing(read, of: resource.name) { return true }
            let parent = RequestResource(segments: Array(resource.parent))
            return parent.id != nil && recordChangeTouches(read, of: parent)
        }

        /// Whether a read of `read` may change with the record `record` addresses.
        private func recordChangeTouches(_ read: RequestResource, of record: RequestResource) -> Bool {
            if let path = record.recordSegments, read.segments.starts(with: path) { return true }
            if read.id != nil, read.id == record.id, read.name == record.name { return true }
            return Self.isListing(read, of: record.name)
        }

        /// Whether `read` lists the collection `name` (flat or under a parent).
        private static func isListing(_ read: RequestResource, of name: String?) -> Bool {
            read.id == nil && !read.isSingular && read.action.isEmpty && read.name == name
        }
    }

    /// A subscription to a feed; cancelled when released, or by ``cancel()``.
    package final class Subscription: Sendable {
        private let end: Locked<(@Sendable () -> Void)?>

        package init(_ end: @escaping @Sendable () -> Void) {
            self.end = Locked(end)
        }

        deinit { cancel() }

        package func cancel() {
            let end = self.end.withLock { end in
                defer { end = nil }
                return end
            }
            end?()
        }
    }
}
