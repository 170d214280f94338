import Depot
import Foundation
import JSONServerEngine

/// The ids the server named for records created while offline: each queued create's local id
/// (`-1`, `"local-…"`) and the id the server's `201` gave the record.
///
/// Local ids are unique in their store (negative numbers are counted down once per store, and
/// strings carry a UUID), so a local id alone says which record it stands for. A write queued
/// after the create, and a read, are rewritten with it before they are sent: an id of the
/// request's resource that is a mapped local id (`posts/-1` → `posts/101`), and the body's
/// `id` and foreign keys that hold one (`"postId": -1` → `"postId": 101`): the members the
/// repository states (``Depot/Repository/foreignKeys``), `…Id` ones by json-server's
/// convention.
struct LocalIDs: Sendable {
    /// The server's id by the local id's text.
    private var serverIDs: [String: JSONValue] = [:]

    /// Whether no local id was mapped.
    var isEmpty: Bool { serverIDs.isEmpty }

    /// Records that the record created with `local` is `server` on the server.
    mutating func map(_ local: JSONValue, to server: JSONValue) {
        guard let text = JSONServerRules.idText(local) else { return }
        serverIDs[text] = server
    }

    /// The server's id for the local id with text `text`, if the server has named it.
    func serverID(forText text: String) -> JSONValue? {
        serverIDs[text]
    }

    /// `resource` with each of its segments up to the record's id (its parent records', its
    /// collection's, its own id) that is a mapped local id replaced by the server's id:
    /// `posts/-1` → `posts/101`, `users/-1/posts` → `users/101/posts`. What an action names
    /// past them (`publish`) is left alone. (Local ids are negative numbers and `local-`
    /// strings, so no collection name is one.)
    func rewriting(_ resource: RequestResource) -> RequestResource {
        guard !serverIDs.isEmpty else { return resource }
        var rewritten = resource
        for index in resource.segments.indices.dropLast(resource.action.count) {
            if let server = serverIDs[resource.segments[index]], let text = JSONServerRules.idText(server) {
                rewritten = rewritten.replacingSegment(at: index, with: text)
            }
        }
        return rewritten
    }

    /// `path` (a server's URL, an absolute path: one that is not its request's resource's own)
    /// with each segment before its query that is a mapped local id replaced by the server's.
    private func rewriting(path: String) -> String {
        let end = path.firstIndex { $0 == "?" || $0 == "#" } ?? path.endIndex
        var changed = false
        let segments = path[..<end].split(separator: "/", omittingEmptySubsequences: false).map {
            segment -> String in
            guard let text = String(segment).removingPercentEncoding, let server = serverIDs[text],
                let serverText = JSONServerRules.idText(server)
            else { return String(segment) }
            changed = true
            return PathSegment.encode(serverText)
        }
        return changed ? segments.joined(separator: "/") + path[end...] : path
    }

    /// `members` with `id` and each foreign key (`keys`, as the repository states them:
    /// `…Id` members by json-server's convention) replaced by the server's id where it holds
    /// a mapped local id.
    func rewriting(members: [String: JSONValue], keys: ForeignKeys) -> [String: JSONValue] {
        guard !serverIDs.isEmpty else { return members }
        var members = members
        for (key, value) in members where key == "id" || keys.contains(key) {
            switch value {
            case .int, .string:
                if let text = JSONServerRules.idText(value), let server = serverIDs[text] {
                    members[key] = server
                }
            default: continue
            }
        }
        return members
    }

    /// `request` with its resource, path and JSON body rewritten (see ``LocalIDs``); the
    /// request itself when nothing in it is a mapped local id. The path changes with the
    /// resource when it is the resource's own (a server's URL is left as it is).
    func rewriting(_ request: BackendRequest) -> BackendRequest {
        guard !serverIDs.isEmpty else { return request }
        var request = request
        let resource = request.resource
        let rewritten = rewriting(resource)
        if rewritten != resource {
            if request.pathIsResource {
                request.path = rewritten.path
                request.address(rewritten)
            } else {
                // A path that says more than its resource (a leading `/`, an absolute URL):
                // its segments are rewritten where they are.
                request.path = rewriting(path: request.path)
                request.address(rewritten)
            }
        }
        if let body = request.body, !body.isEmpty, case .object(let members)? = JSONServerRules.parse(body) {
            let changed = rewriting(members: members, keys: resource.foreignKeys)
            if changed != members { request.body = JSONServerRules.encode(changed) }
        }
        return request
    }
}

// MARK: - In the store

extension LocalIDs {
    /// The local id a queued write's record gets, in the transaction that queues it: for a
    /// create (a `POST`, but not to a singular resource or an action:
    /// `posts/7/publish` creates nothing) whose body is a JSON object (or empty), the `id` it
    /// carries if it has one, otherwise the next negative number where the collection's ids
    /// are numbers (or nothing tells), or `"local-"` and a UUID where they are strings; `nil`
    /// for other writes. `resource` is the write's, `sent` its body read as a JSON object
    /// (`nil` when it has none or another value).
    static func newLocalID(
        for write: BackendRequest, resource: RequestResource, sent: [String: JSONValue]?,
        in connection: SQLiteConnection
    ) throws(OfflineStoreError) -> JSONValue? {
        guard write.method == .post else { return nil }
        // An action (`posts/7/publish`) or a singular resource, as the request's maker says:
        // nothing is created.
        guard resource.action.isEmpty, !resource.isSingular else { return nil }
        var members: [String: JSONValue] = [:]
        if let body = write.body, !body.isEmpty {
            guard let sent else { return nil }
            members = sent
        }
        if JSONServerRules.keepsOwnID(members), let own = members["id"] { return own }
        guard try idsAreNumbers(in: resource.collectionPath, connection) else {
            return .string("local-" + UUID.randomText())
        }
        try connection.execute("UPDATE local_ids SET last = last - 1 WHERE id = 1")
        return .int(Int(try connection.integer("SELECT last FROM local_ids WHERE id = 1") ?? -1))
    }

    /// Whether the records of the collection at `resource` have numbers for ids, as the
    /// ids the server gave records created offline, or else the responses stored for the
    /// collection or its records, tell; `true` when nothing tells.
    private static func idsAreNumbers(in resource: String, _ connection: SQLiteConnection)
        throws(OfflineStoreError) -> Bool
    {
        let mapped = try connection.texts(
            "SELECT server_id FROM id_map WHERE resource = ? LIMIT 1", [.text(resource)])
        if let server = mapped.first { return !server.hasPrefix("\"") }
        let stored = try connection.query(
            "SELECT path, body FROM answers WHERE method = 'GET' AND instr(path, ?) > 0 LIMIT 50",
            [.text(resource)]
        ) { row in (row.text(0), row.blob(1)) }
        for (path, body) in stored {
            let storedResource = StoredResponseKey.resource(of: path)
            guard storedResource == resource || storedResource.hasPrefix(resource + "/") else { continue }
            let id: JSONValue?
            switch JSONServerRules.parse(body) {
            case .array(let records)?: id = records.first?.objectValue?["id"]
            case .object(let record)?: id = record["id"]
            default: id = nil
            }
            switch id {
            case .string?: return false
            case .int?, .double?: return true
            default: continue
            }
        }
        return true
    }

    /// The id the server gave the record `entry` created: its answer's `id`, or else the last
    /// segment of its `Location`.
    static func serverID(in response: BackendResponse, for entry: OutboxEntry) -> JSONValue? {
        if case .object(let record)? = JSONServerRules.parse(response.body), let id = record["id"],
            JSONServerRules.idText(id) != nil
        {
            return id
        }
        guard let location = response.headers["Location"],
            let last = RequestResource(path: location).segments.last
        else { return nil }
        return PendingWrite.id(fromText: last)
    }

    /// Writes that the record created with `local` in the collection `resource` is `server`
    /// on the server.
    static func record(
        _ local: JSONValue, _ server: JSONValue, resource: String, in connection: SQLiteConnection
    )
        throws(OfflineStoreError)
    {
        try connection.execute(
            "INSERT OR REPLACE INTO id_map (local_id, server_id, resource) VALUES (?, ?, ?)",
            [.text(json(local)), .text(json(server)), .text(resource)])
    }

    /// `value` as JSON text, as the store keeps ids.
    static func json(_ value: JSONValue) -> String {
        String(decoding: JSONServerRules.encode(value: value), as: UTF8.self)
    }
}
