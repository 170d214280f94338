import Depot

/// What a replay does with a queued write that collides with what another device wrote
/// meanwhile (an ``OutboxConflict``): ``OfflinePolicy/onConflict``.
///
/// ```swift
/// let policy = OfflinePolicy(onConflict: .merge { conflict in
///     // Keep their record, with my title.
///     guard case .object(var record)? = conflict.theirs, case .object(let mine)? = conflict.mine
///     else { return nil }
///     record["title"] = mine["title"]
///     return .object(record)
/// })
/// ```
///
/// Edits that do not collide never reach it: a replay merges changes to different fields on
/// its own, so both stand. Every conflict is reported on ``Outbox/events`` whatever the policy.
public struct ConflictPolicy: Sendable {
    enum Rule: Sendable {
        case keepForApp
        case serverWins
        case clientWins
        case merge(@Sendable (OutboxConflict) -> JSONValue?)
    }

    let rule: Rule

    /// The write is kept, with the later writes to its path, and reads keep showing it; its
    /// ``OutboxRefusal/conflict`` waits for ``Outbox/resolve(_:with:)`` (or ``Outbox/retry(_:)``,
    /// ``Outbox/discard(_:)``). The default: nobody's edit is lost until the app decides.
    public static let keepForApp = ConflictPolicy(rule: .keepForApp)

    /// The write is dropped (``OutboxEvent/discarded(_:)`` follows the conflict's event), and
    /// reads show the server's record.
    public static let serverWins = ConflictPolicy(rule: .serverWins)

    /// The write is sent as the user made it, over what the other device wrote.
    public static let clientWins = ConflictPolicy(rule: .clientWins)

    /// `resolve` gets the conflict and returns the record to send (a `PUT` of it, whatever the
    /// write was), or `nil` to drop the write as ``serverWins`` does. It runs on the replay's
    /// task, once per conflict found; it must not wait for the outbox.
    public static func merge(_ resolve: @escaping @Sendable (OutboxConflict) -> JSONValue?) -> ConflictPolicy
    {
        ConflictPolicy(rule: .merge(resolve))
    }
}
