import Depot

/// The three-way merge of a queued write: what the replay sends, given the record as the user
/// saw it (the base), as the write leaves it (mine) and as the server holds it (theirs),
/// member by member at the top level. Pure: the table of cases is its test.
enum ThreeWayMerge {
    /// What the replay does with the write.
    enum Outcome: Equatable {
        /// Nobody else changed the record: send the write as made.
        case unchanged
        /// The server's record with the user's changed members on top: send it (a `PATCH`
        /// sends only `changes`).
        case merged(record: [String: JSONValue], changes: [String: JSONValue])
        /// Both the user and the server removed the record: nothing is left to send.
        case alreadyGone
        /// The server's record holds every change the user made already (the write reached
        /// the server before a crash or a lost answer, or another device made the same
        /// changes): nothing is left to send.
        case alreadyApplied
        /// The two sides collide.
        case conflict(OutboxConflict.Kind, fields: [String])
    }

    /// Merges `mine` (`nil`: the write deletes the record) into `theirs` (`nil`: the server no
    /// longer has it), both made from `base`. The `id` member never counts as a change: the
    /// server keeps a record's id whatever a write sends.
    static func merge(
        base: [String: JSONValue], mine: [String: JSONValue]?, theirs: [String: JSONValue]?
    ) -> Outcome {
        guard let theirs else {
            return mine == nil ? .alreadyGone : .conflict(.changedWhereDeleted, fields: [])
        }
        let theirChanges = changes(from: base, to: theirs)
        if theirChanges.isEmpty { return .unchanged }
        guard let mine else { return .conflict(.deletedWhereChanged, fields: []) }
        let myChanges = changes(from: base, to: mine)
        let colliding = myChanges.keys.filter { key in
            theirChanges.keys.contains(key) && mine[key] != theirs[key]
        }
        if !colliding.isEmpty { return .conflict(.sameFields, fields: colliding.sorted()) }
        // Sent again, the write would be applied a second time.
        if myChanges.allSatisfy({ key, value in theirs[key] == value }) { return .alreadyApplied }
        var merged = theirs
        var changed: [String: JSONValue] = [:]
        for (key, value) in myChanges {
            merged[key] = value
            if let value { changed[key] = value }
        }
        return .merged(record: merged, changes: changed)
    }

    /// The members `after` changed from `before`, with their new values (`nil`: removed); `id`
    /// left out.
    static func changes(from before: [String: JSONValue], to after: [String: JSONValue]) -> [String:
        JSONValue?]
    {
        var changed: [String: JSONValue?] = [:]
        for (key, value) in after where key != "id" && before[key] != value { changed[key] = .some(value) }
        for key in before.keys where key != "id" && after[key] == nil { changed[key] = .some(nil) }
        return changed
    }
}
