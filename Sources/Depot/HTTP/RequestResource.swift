import Foundation

/// What a request addresses, as the layer that made it knows it: a collection (nested under a
/// parent record or not), one record of it, a singular resource (`/profile`), and what a custom
/// endpoint names past them (an action: `posts/7/publish`). Repositories write it on each
/// request (``BackendRequest/resource``), so the layers below never guess it from the path:
/// the article *Defining repositories*.
///
/// ```swift
/// RequestResource.record("7", in: ["posts"])                     // posts/7
/// RequestResource.collection(["posts"], under: ["users", "1"])   // users/1/posts
/// RequestResource.singular(["profile"])                          // profile
/// RequestResource.record("7", in: ["posts"]).appending("publish") // posts/7/publish
/// ```
public struct RequestResource: Sendable, Hashable {
    /// The decoded path segments: the parent record's, the collection's, the record's id, then
    /// what a custom endpoint names past them.
    public let segments: [String]
    /// How many of ``segments`` name the parent record (its path, ending in its id).
    private let scopeEnd: Int
    /// Where the collection's segments end.
    private let collectionEnd: Int
    /// Whether the segment at `collectionEnd` is a record's id.
    private let hasID: Bool
    /// Whether the collection names one object (`/profile`) rather than a list of records.
    public let isSingular: Bool
    /// The members of the collection's records that hold another record's id, as the
    /// repository states them (``Repository/foreignKeys``); json-server's convention unless
    /// it says otherwise. What the records hold, not what is addressed: not part of the
    /// resource's equality, so reads of one resource share a request whatever keys their
    /// repositories state.
    public private(set) var foreignKeys: ForeignKeys = .jsonServer

    private init(segments: [String], scopeEnd: Int, collectionEnd: Int, hasID: Bool, isSingular: Bool) {
        self.segments = segments
        self.scopeEnd = scopeEnd
        self.collectionEnd = collectionEnd
        self.hasID = hasID
        self.isSingular = isSingular
    }

    /// The collection at `path` (its segments, decoded), nested under the record at `parent`
    /// (`["users", "1"]`) or at the root.
    public static func collection(_ path: [String], under parent: [String] = []) -> RequestResource {
        RequestResource(
            segments: parent + path, scopeEnd: parent.count, collectionEnd: parent.count + path.count,
            hasID: false, isSingular: false)
    }

    /// The record with `id` in the collection at `path`, nested under `parent` or not.
    public static func record(_ id: String, in path: [String], under parent: [String] = []) -> RequestResource
    {
        RequestResource(
            segments: parent + path + [id], scopeEnd: parent.count, collectionEnd: parent.count + path.count,
            hasID: true, isSingular: false)
    }

    /// A record whose path is `segments`, its id last, nested under the first `parentCount`
    /// of them: what a repository's ``Repository/segments(for:)`` gives, without copying it.
    @usableFromInline
    package static func record(at segments: [String], parentCount: Int = 0) -> RequestResource {
        let scopeEnd = min(max(parentCount, 0), max(segments.count - 1, 0))
        return RequestResource(
            segments: segments, scopeEnd: scopeEnd, collectionEnd: max(segments.count - 1, scopeEnd),
            hasID: !segments.isEmpty, isSingular: false)
    }

    /// The collection at `path`, a repository's ``Repository/collectionPath``: nested under a
    /// parent record by json-server's convention when the path is one (`users/1/posts`: three
    /// or more segments, names and ids alternating), at the root otherwise (`posts`, `v2/posts`).
    public static func collection(atPath path: [String]) -> RequestResource {
        let parentCount = parentCount(ofCollectionPath: path.count)
        guard parentCount > 0 else { return .collection(path) }
        return .collection([path[path.count - 1]], under: Array(path.dropLast()))
    }

    /// How many segments of a collection path of `count` segments name its parent record, by
    /// json-server's convention (see ``collection(atPath:)``): all but the last for three or
    /// more, names and ids alternating; none otherwise.
    @usableFromInline
    package static func parentCount(ofCollectionPath count: Int) -> Int {
        count >= 3 && count % 2 == 1 ? count - 1 : 0
    }

    /// The single object at `path` (`["profile"]`, `["me"]`): read and replaced, never listed.
    public static func singular(_ path: [String]) -> RequestResource {
        RequestResource(
            segments: path, scopeEnd: 0, collectionEnd: path.count, hasID: false, isSingular: true)
    }

    /// This resource with `segments` after it: a custom endpoint under a record or collection
    /// (`posts/7/publish`).
    public func appending(_ segments: String...) -> RequestResource {
        var appended = RequestResource(
            segments: self.segments + segments, scopeEnd: scopeEnd, collectionEnd: collectionEnd,
            hasID: hasID,
            isSingular: isSingular)
        appended.foreignKeys = foreignKeys
        return appended
    }

    /// This resource, its records' foreign keys being `keys` (see ``ForeignKeys``).
    public func referencing(_ keys: ForeignKeys) -> RequestResource {
        var resource = self
        resource.foreignKeys = keys
        return resource
    }

    /// Reads decoded path segments by json-server's convention, the default of an API
    /// description: names and ids alternate (`posts`, `posts/7`, `users/1/posts`,
    /// `users/1/posts/7`), so an even count ends in a record's id, and a collection after a
    /// record (`users/1/posts`) is nested under it.
    public init(segments: [String]) {
        let hasID = segments.count >= 2 && segments.count % 2 == 0
        let collectionEnd = hasID ? segments.count - 1 : segments.count
        self.init(
            segments: segments, scopeEnd: collectionEnd >= 3 ? collectionEnd - 1 : 0,
            collectionEnd: collectionEnd, hasID: hasID, isSingular: false)
    }

    /// Reads a request's path (relative, absolute, or an absolute URL; any query or fragment
    /// ignored) by json-server's convention (see ``init(segments:)``): the one place a path
    /// is read back into a resource.
    public init(path: String) {
        let parsed = PathReference(path, scheme: "http")
        var reference = parsed.path
        if parsed.absoluteURL != nil {
            // `scheme://host[:port]/path`: the path after the authority.
            let afterScheme = reference.range(of: "//").map { reference[$0.upperBound...] } ?? reference
            reference = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? ""
        }
        let segments = reference.utf8.split(separator: UInt8(ascii: "/")).map {
            PathSegment.decode(String(Substring($0)))
        }
        self.init(segments: segments)
    }

    /// The collection's segments, without the parent's (`["posts"]` for `users/1/posts/7`).
    public var collection: ArraySlice<String> { segments[scopeEnd..<collectionEnd] }

    /// The path of the parent record a collection is nested under (`["users", "1"]`), empty
    /// at the root.
    public var parent: ArraySlice<String> { segments[..<scopeEnd] }

    /// The record's id, when the request addresses one record.
    public var id: String? { hasID ? segments[collectionEnd] : nil }

    /// What a custom endpoint names past the collection or record (`["publish"]`).
    public var action: ArraySlice<String> { segments[(hasID ? collectionEnd + 1 : collectionEnd)...] }

    /// The collection's name, its last segment (`posts` for `users/1/posts/7`).
    public var name: String? { collection.last }

    /// The record's own path without any action (`users/1/posts/7`), for a record.
    package var recordSegments: ArraySlice<String>? {
        hasID ? segments[..<(collectionEnd + 1)] : nil
    }

    /// The percent-encoded path (`users/1/posts`): each segment encoded on its own.
    public var path: String { PathSegment.join(segments) }

    /// The percent-encoded path of the collection with its parent (`users/1/posts` for
    /// `users/1/posts/7/publish`): what the writes to a collection's listings are kept by.
    package var collectionPath: String { PathSegment.join(Array(segments[..<collectionEnd])) }

    /// This resource with the segment at `index` (any segment: DepotOffline rewrites each one
    /// up to the record's id that holds a local id) replaced by `segment`, its shape kept; the
    /// resource itself when there is no such segment.
    package func replacingSegment(at index: Int, with segment: String) -> RequestResource {
        guard segments.indices.contains(index) else { return self }
        var segments = segments
        segments[index] = segment
        var resource = RequestResource(
            segments: segments, scopeEnd: scopeEnd, collectionEnd: collectionEnd, hasID: hasID,
            isSingular: isSingular)
        resource.foreignKeys = foreignKeys
        return resource
    }
}

// MARK: - Kept with a queued write

extension RequestResource {
    /// The resource as JSON, for a store that keeps a request to send later (DepotOffline's
    /// outbox): read back by ``init(stored:)``.
    package var stored: JSONValue {
        var members: [String: JSONValue] = [
            "segments": .array(segments.map(JSONValue.string)),
            "scope": .int(scopeEnd),
            "collection": .int(collectionEnd),
            "id": .bool(hasID),
            "singular": .bool(isSingular),
        ]
        if let names = foreignKeys.names { members["foreignKeys"] = .array(names.map(JSONValue.string)) }
        return .object(members)
    }

    /// A resource kept as ``stored``; `nil` when `stored` is not one (a damaged row).
    package init?(stored: JSONValue) {
        guard case .object(let members) = stored, case .array(let values)? = members["segments"],
            let scopeEnd = members["scope"]?.intValue, let collectionEnd = members["collection"]?.intValue,
            case .bool(let hasID)? = members["id"], case .bool(let isSingular)? = members["singular"]
        else { return nil }
        let segments = values.compactMap(\.stringValue)
        guard segments.count == values.count, 0 <= scopeEnd, scopeEnd <= collectionEnd,
            collectionEnd <= segments.count, !hasID || collectionEnd < segments.count
        else { return nil }
        self.init(
            segments: segments, scopeEnd: scopeEnd, collectionEnd: collectionEnd, hasID: hasID,
            isSingular: isSingular)
        switch members["foreignKeys"] {
        case .array(let names)?: foreignKeys = .named(Set(names.compactMap(\.stringValue)))
        default: foreignKeys = .jsonServer
        }
    }
}

extension RequestResource {
    /// Whether both address the same thing: the same segments, read the same way (the foreign
    /// keys aside).
    public static func == (lhs: RequestResource, rhs: RequestResource) -> Bool {
        lhs.segments == rhs.segments && lhs.scopeEnd == rhs.scopeEnd && lhs.collectionEnd == rhs.collectionEnd
            && lhs.hasID == rhs.hasID && lhs.isSingular == rhs.isSingular
    }

    /// Hashes what `==` compares: the segments and how they are read, not the foreign keys.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(segments)
        hasher.combine(scopeEnd)
        hasher.combine(collectionEnd)
        hasher.combine(hasID)
        hasher.combine(isSingular)
    }
}

extension RequestResource: CustomStringConvertible {
    /// The path, with the id and the action marked: `posts/[7]`, `users/1/posts`,
    /// `profile (singular)`.
    public var description: String {
        var parts = Array(parent) + Array(collection)
        if let id { parts.append("[\(id)]") }
        parts += action
        return parts.joined(separator: "/") + (isSingular ? " (singular)" : "")
    }
}
