import Foundation

/// Where the answers to a call came from: the network, or a store that kept an earlier
/// answer (DepotOffline's `.offline(store)` serves one when the network fails).
public enum AnswerSource: Sendable, Hashable {
    /// Every answer came from the server.
    case network
    /// At least one answer was served from storage; `savedAt` is when the oldest of them
    /// was received from the server.
    case stored(savedAt: Date)
}

/// Collects where the answers to the requests made inside `collect` came from,
/// so a UI can say "saved 10:42" for exactly the call it made, without a second call.
///
/// ```swift
/// let receipt = AnswerReceipt()
/// let posts = try await receipt.collect { try await repository.findAll().value }
/// if case .stored(let savedAt) = receipt.source { showBanner("Saved \(savedAt)") }
/// ```
///
/// With completion handlers, use ``collectStarts(_:)``. How it travels with each request, and
/// how a middleware reports to it: the article *Using Middleware*.
public final class AnswerReceipt: Sendable {
    private let sources = Locked<AnswerSource?>(nil)
    private let pending = Locked(0)

    /// An empty receipt.
    public init() {}

    /// Where the answers collected so far came from: ``AnswerSource/network`` until a
    /// stored response was served (and when nothing was answered yet).
    public var source: AnswerSource {
        sources.withLock { $0 } ?? .network
    }

    /// How many writes not yet sent to the server were applied to the answers collected so
    /// far: DepotOffline's `.offline(store)` answers reads as if the writes waiting in its
    /// outbox had been applied (the user's own writes show at once). `0` when every answer is
    /// the server's or the store's as it came.
    ///
    /// ```swift
    /// let posts = try await receipt.collect { try await repository.findAll().value }
    /// if receipt.pendingWrites > 0 { showBadge("\(receipt.pendingWrites) changes not yet sent") }
    /// ```
    public var pendingWrites: Int {
        pending.withLock { $0 }
    }

    /// The receipt of the call being made now, if its caller collects one.
    @available(*, deprecated, message: "read request.context.receipt: the request carries its receipt")
    public static var current: AnswerReceipt? {
        RequestContext.entered.receipt
    }

    /// Runs `body` with this receipt collecting the sources of the answers to the requests
    /// made in it.
    public func collect<T>(_ body: () async throws -> T) async rethrows -> T {
        try await RequestContext.entering({ $0.receipt = self }, body)
    }

    /// Runs `body`, which makes and starts futures with completion handlers, with this
    /// receipt collecting the sources of their answers (complete when each completion runs).
    public func collectStarts<T>(_ body: () throws -> T) rethrows -> T {
        try RequestContext.entering({ $0.receipt = self }, body)
    }

    /// Notes that `count` writes not yet sent were applied to one answer (see
    /// ``pendingWrites``).
    public func record(pendingWrites count: Int) {
        guard count > 0 else { return }
        pending.withLock { $0 += count }
    }

    /// Notes one answer's source: a stored response makes the receipt ``AnswerSource/stored(savedAt:)``
    /// with the oldest such date; a network answer changes nothing.
    public func record(_ source: AnswerSource) {
        guard case .stored(let savedAt) = source else { return }
        sources.withLock { current in
            if case .stored(let earlier)? = current, earlier <= savedAt { return }
            current = .stored(savedAt: savedAt)
        }
    }
}
