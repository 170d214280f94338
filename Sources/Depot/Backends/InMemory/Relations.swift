import Foundation

/// `_embed` and `_expand` for one request: children whose foreign key points at a
/// record (`posts?_embed=comments` adds `comments` by `postId`), and the parent a
/// record points at (`comments?_expand=post` adds `post` by `postId`).
///
/// Children are grouped once per request, so embedding costs O(parents + children).
struct Relations {
    private let embedded: [(key: String, groups: [String: [StoredRecord]])]
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
            var groups: [String: [StoredRecord]] = [:]
            for record in database.collection(child)?.records ?? [] {
                guard let value = record.members[foreignKey] else { continue }
                groups[JSText.equalityKey(value), default: []].append(record)
            }
            return (child, groups)
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
        var extra: [(key: String, records: [StoredRecord], single: Bool)] = []
        var removed: [String] = []
        for (key, groups) in embedded {
            let children = record.members["id"].flatMap { groups[JSText.equalityKey($0)] } ?? []
            extra.append((key, children, false))
        }
        for (key, foreignKey, parents) in expanded {
            guard let id = JSText.idText(record.members[foreignKey]) else { continue }
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
        if removed.allSatisfy({ record.members[$0] == nil }),
            let spliced = JSONSplice.object(record, adding: pieces)
        {
            return spliced
        }
        var members = record.members
        for key in removed { members[key] = nil }
        for item in extra {
            members[item.key] = item.single ? item.records[0].value : .array(item.records.map(\.value))
        }
        return JSONWriter.encode(object: members)
    }
}
