import Foundation

/// Where a ``LiveMiddleware`` tells the watches of its chain what writes touched: each watch
/// subscribes with the resources its reads depend on, and is signalled when a change touches
/// one of them.
package final class ChangeFeed: Sendable {
    private struct Subscriber {
        var resources: Set<String>
        var signal: @Sendable () -> Void
    }

    private struct State {
        var byID: [Int: Subscriber] = [:]
        var nextID = 0
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
    private let sources = Locked([ObjectIdentifier: Subscription]())
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

    /// Calls `signal` whenever a change touches one of `resources` (paths without query or
    /// surrounding `/`), until the returned subscription is cancelled.
    func subscribe(_ resources: Set<String>, signal: @escaping @Sendable () -> Void) -> Subscription {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.byID[state.nextID] = Subscriber(resources: resources, signal: signal)
            return state.nextID
        }
        return Subscription { [weak self] in
            _ = self?.state.withLock { $0.byID.removeValue(forKey: id) }
        }
    }

    /// Whether a publication after `version` touched one of `resources`: a read that started
    /// at `version` may have missed it. `true` when it was too long ago to tell.
    func changed(since version: Int, touching resources: Set<String>) -> Bool {
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
        let id = source.changeSourceID
        guard sources.withLock({ $0[id] == nil }) else { return }
        let subscription = source.subscribeChanges { [weak self] changes in self?.publish(changes) }
        let extra = sources.withLock { sources -> Subscription? in
            guard sources[id] == nil else { return subscription }
            sources[id] = subscription
            return nil
        }
        extra?.cancel()
    }

    /// How many watches are subscribed now.
    var subscriberCount: Int {
        state.withLock { $0.byID.count }
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
            return state.byID.values.filter { subscriber in
                subscriber.resources.contains { resource in changes.contains { $0.touches(resource) } }
            }
            .map(\.signal)
        }
        for signal in signals { signal() }
    }

    /// What a write changed: a record (`posts/7`, by `PUT`, `PATCH` or `DELETE`), or a
    /// collection it added to (`posts`, `users/1/posts`, by `POST`).
    package struct Change: Sendable, Equatable {
        /// The path's segments, without query or surrounding `/`.
        let segments: [Substring]
        /// Whether the path names a collection (a create) rather than a record.
        let isCollection: Bool

        /// A change of the record at `path`, or, when `isCollection`, of the collection there.
        package init(path: String, isCollection: Bool) {
            self.init(
                segments: StoredResponseKey.resource(of: path).split(separator: "/"),
                isCollection: isCollection)
        }

        private init(segments: [Substring], isCollection: Bool) {
            self.segments = segments
            self.isCollection = isCollection
        }

        /// The change a `method` request to `path` makes: `POST` adds to a collection, the
        /// others change a record.
        package init(_ method: HTTPMethod, path: String) {
            self.init(path: path, isCollection: method == .post)
        }

        /// What a change of `path` touches, when no method tells: a path whose last segment is
        /// a number names a record (`posts/7`), any other a collection (`posts`,
        /// `posts/7/comments`).
        package init(path: String) {
            let segments = StoredResponseKey.resource(of: path).split(separator: "/")
            let isRecord = segments.count >= 2 && segments.last?.allSatisfy(\.isNumber) == true
            self.init(segments: segments, isCollection: !isRecord)
        }

        /// Whether a read of `resource` (a path without query or surrounding `/`) may answer
        /// differently after this change:
        /// - the same path, and what is under a record (`posts/7/comments`);
        /// - for a `PUT`, `PATCH` or `DELETE` of a whole collection (`posts`), its records and
        ///   listings;
        /// - the same record under another parent (`posts/7` and `users/1/posts/7`);
        /// - any listing of the collection changed (`posts`, `users/1/posts`);
        /// - for a `POST` under a record (`movies/1/ratings`, `posts/7/publish`), what a change of
        ///   that record touches: an action may change it.
        package func touches(_ resource: String) -> Bool {
            let read = resource.split(separator: "/")
            // The path itself, and what is under a record (`posts/7/comments`).
            if read == segments || (!isCollection && read.starts(with: segments)) { return true }
            // A write to a whole collection (`DELETE posts`): its records and listings.
            if !isCollection, segments.count == 1, let name = segments.first {
                return read.last == name || read.dropLast().last == name
            }
            if isCollection, segments.count >= 2,
                Change(segments: Array(segments.dropLast()), isCollection: false).touches(resource)
            {
                return true
            }
            if !isCollection, segments.count >= 2, read.count >= 2,
                read.suffix(2).elementsEqual(segments.suffix(2))
            {
                return true
            }
            let collection = isCollection ? segments.last : segments.dropLast().last
            guard let collection, let name = read.last else { return false }
            return name == collection
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
