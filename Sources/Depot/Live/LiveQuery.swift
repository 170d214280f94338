import Foundation
import Observation

/// A watched read as an observable model, for SwiftUI: its latest ``value``, ``error``,
/// ``source`` and whether it ``isRefreshing``, updated on the main actor as snapshots arrive.
///
/// ```swift
/// struct PostList: View {
///     @State private var posts = LiveQuery(repository.watch { try await $0.findAll().value })
///
///     var body: some View {
///         VStack {
///             List(posts.value ?? []) { post in Text(post.title) }
///             Button("Reload") { posts.refresh() }
///         }
///         .opacity(posts.isRefreshing ? 0.6 : 1)
///     }
/// }
/// ```
///
/// The watch runs from the model's creation until it is released. Observation is part of the
/// toolchain: macOS 14, iOS 17, tvOS 17, watchOS 10 and later, and Linux.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
@MainActor
@Observable
public final class LiveQuery<Value: Sendable> {
    /// The latest value; kept when a later read fails.
    public private(set) var value: Value?
    /// The error of the latest read, `nil` once one succeeds again.
    public private(set) var error: (any Error)?
    /// Whether a fresher answer is on its way: while the stored answer is shown, and after
    /// ``refresh()`` until its answer comes.
    public private(set) var isRefreshing = true
    /// Where the latest answers came from.
    public private(set) var source: AnswerSource = .network
    /// How many writes not yet sent the latest answers include.
    public private(set) var pendingWrites = 0

    @ObservationIgnored private let watch: LiveWatch<Value>
    @ObservationIgnored private let task = Locked<Task<Void, Never>?>(nil)

    /// Starts watching `watch`.
    public init(_ watch: LiveWatch<Value>) {
        self.watch = watch
        let started = Task { [weak self] in
            for await snapshot in watch {
                guard let self else { return }
                self.apply(snapshot)
            }
        }
        task.withLock { $0 = started }
    }

    deinit {
        task.withLock { $0 }?.cancel()
    }

    /// Reads again now; ``isRefreshing`` until the answer comes.
    public func refresh() {
        isRefreshing = true
        watch.refresh()
    }

    private func apply(_ snapshot: Snapshot<Value>) {
        switch snapshot.result {
        case .success(let value):
            self.value = value
            error = nil
        case .failure(let failure):
            error = failure
        }
        source = snapshot.source
        pendingWrites = snapshot.pendingWrites
        isRefreshing = snapshot.isRefreshing
    }
}
