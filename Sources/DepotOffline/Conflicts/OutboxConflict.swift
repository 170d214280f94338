import Depot
import Foundation
import JSONServerEngine

/// A queued write that collides with what another device wrote meanwhile, found when a
/// replay was about to send it: the record as the user saw it (``base``), as the user's write
/// leaves it (``mine``) and as the server holds it now (``theirs``).
///
/// ``OfflinePolicy/onConflict`` decides what happens to the write; ``OutboxEvent/conflict(_:_:)``
/// reports every conflict found, and a write kept for the app carries its conflict in
/// ``OutboxRefusal/conflict`` until ``Outbox/resolve(_:with:)``, ``Outbox/retry(_:)`` or
/// ``Outbox/discard(_:)`` settles it.
public struct OutboxConflict: Sendable, Hashable {
    /// How the two sides collide.
    public enum Kind: String, Sendable, Hashable {
        /// Both sides changed the same top-level fields (``OutboxConflict/fields``) to
        /// different values.
        case sameFields
        /// The user deletes a record another device changed.
        case deletedWhereChanged
        /// The user edits a record another device deleted (the server answers `404` or `410`).
        case changedWhereDeleted
    }

    /// How the two sides collide.
    public var kind: Kind
    /// The top-level fields both sides changed to different values, sorted; empty for the
    /// kinds that delete.
    public var fields: [String]
    /// The record as the user saw it when making the write: the stored answer it was made on,
    /// with the writes queued before it laid over.
    public var base: JSONValue?
    /// The record as the user's write leaves it: the `PUT`'s record, the base with the
    /// `PATCH` merged in; `nil` for a `DELETE`.
    public var mine: JSONValue?
    /// The record as the server holds it now; `nil` when it is gone.
    public var theirs: JSONValue?

    /// Creates the description of a conflict (the outbox does; tests and previews may too).
    public init(kind: Kind, fields: [String] = [], base: JSONValue?, mine: JSONValue?, theirs: JSONValue?) {
        self.kind = kind
        self.fields = fields
        self.base = base
        self.mine = mine
        self.theirs = theirs
    }
}

extension OutboxConflict {
    /// The conflict as the `conflict` column of the outbox keeps it: one JSON object.
    var stored: Data {
        var members: [String: JSONValue] = [
            "kind": .string(kind.rawValue), "fields": .array(fields.map { .string($0) }),
        ]
        members["base"] = base
        members["mine"] = mine
        members["theirs"] = theirs
        return JSONServerRules.encode(members)
    }

    /// The conflict the `conflict` column kept; `nil` when it does not read as one.
    init?(stored: Data) {
        guard case .object(let members)? = JSONServerRules.parse(stored),
            case .string(let kind)? = members["kind"], let kind = Kind(rawValue: kind)
        else { return nil }
        var fields: [String] = []
        if case .array(let names)? = members["fields"] {
            fields = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
        }
        self.init(
            kind: kind, fields: fields, base: members["base"], mine: members["mine"],
            theirs: members["theirs"])
    }
}
