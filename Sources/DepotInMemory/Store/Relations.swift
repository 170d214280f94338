import Depot
import Foundation
import JSONServerEngine

/// `_embed` and `_expand` for one request: children whose foreign key points at a
/// record (`posts?_embed=comments` adds `comments` by `postId`), and the parent a
/// record points at (`comments?_expand=post` adds `post` by `postId`).
///
/// Children are grouped once per request, from the foreign key's column, so embedding
/// costs O(parents + children). Lives for one request, under the store's lock.
struct Relations {
    private let embedded: [(key: String, children: RecordCollection?, groups: [String: [Int]])]
    private let expanded: [(key: String, foreignKey: String, parents: RecordCollection)]

    /// Whether there is nothing to add.
    var isEmpty: Bool { embedded.isEmpty && expanded.isEmpty }

    /// The relations asked for on a listing or record of collection `name`.
    ///
    /// As in json-server 0.17, embedding a name that is not a collection adds an
    /// empty array, and expanding one that has no collection adds nothing.
    init(collection name: String, embed: [String], expand: [String], database: Database) {
        let foreignKey = Inflector.singular(name) + "Id"
        embedded = embed.map { child in
            guard let children = database.collection(child) else { return (child, nil, [:]) }
            var groups: [String: [Int]] = [:]
            for (position, value) in children.column(foreignKey).values.enumerated() {
                guard let value else { continue }
                groups[JSText.equalityKey(value), default: []].append(position)
            }
            return (child, children, groups)
        }
        expanded = expand.compactMap { parent in
            let candidates = [Inflector.plural(parent), parent + "s"]
            guard let collection = candidates.lazy.compactMap({ database.collection($0) }).first else {
                return nil
            }
            return (parent, parent + "Id", collection)
        }
    }

    /// `record`'s JSON with the relations added.
    ///
    /// As json-server 0.17 does, a parent that is not found replaces a member of
    /// the same name with nothing; a record without the foreign key (or with `null`)
    /// is left as it is (json-server fails with a 500 there).
    func bytes(of record: StoredRecord) -> Data {
        guard !isEmpty else { return record.bytes }
        let members = record.members()
        var extra: [(key: String, records: [StoredRecord], single: Bool)] = []
        var removed: [String] = []
        for (key, children, groups) in embedded {
            let positions = members["id"].flatMap { groups[JSText.equalityKey($0)] } ?? []
            extra.append((key, positions.compactMap { children?.record(at: $0) }, false))
        }
        for (key, foreignKey, parents) in expanded {
            guard let id = JSText.idText(members[foreignKey]) else { continue }
            guard let parent = parents.record(id: id) else {
                removed.append(key)
                continue
            }
            extra.append((key, [parent], true))
        }
        let pieces = extra.map { item in
            (
                key: item.key,
                bytes: item.single ? item.records[0].bytes : JSONSplice.array(item.records.map(\.bytes))
            )
        }
        if removed.allSatisfy({ members[$0] == nil }),
            let spliced = JSONSplice.object(record, members: members, adding: pieces)
        {
            return spliced
        }
        var rewritten = members
        for key in removed { rewritten[key] = nil }
        for item in extra {
            rewritten[item.key] = item.single ? item.records[0].value : .array(item.records.map(\.value))
        }
        return JSONWriter.encode(object: rewritten)
    }
}
