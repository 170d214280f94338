/// One step of an ``OfflineStore``'s schema: the SQL that turns version `version - 1` into
/// `version`.
///
/// Steps are never edited once released: a change to the schema is a new step at the end of
/// ``StoreSchema/migrations``, and a test opens a file written by the first version with the
/// current code. Each open applies the steps the file lacks, in order, in one transaction
/// together with the new `PRAGMA user_version`, so a crash mid-way leaves the old version.
struct SchemaMigration: Sendable {
    /// The schema version this step produces (`PRAGMA user_version` afterwards).
    let version: Int
    /// The statements of the step, run as one script inside the migration's transaction.
    let sql: String
}

/// The store's schema: its application id and its migrations.
enum StoreSchema {
    /// `PRAGMA application_id` of every offline store ("Dpot"): tells a store apart from
    /// another app's SQLite database at the same path.
    static let applicationID: Int32 = 0x4470_6F74

    /// Every step, in order; the last one's version is the current schema version.
    static let migrations: [SchemaMigration] = [
        version1, version2, version3, version4, version5, version6, version7,
    ]

    /// The current schema version.
    static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// The first schema: stored responses and the outbox.
    ///
    /// - `answers`: one row per method + path + query + account (`account` is an app-chosen
    ///   identifier, never a credential; `query` the encoded query items in order), with the
    ///   response's status, header fields and body, the request's values of the fields the
    ///   response varies on, when it was stored (seconds since 1970), a use counter for LRU
    ///   eviction and the bytes it counts against the bound.
    /// - `outbox`: the queued writes, replayed by `position`: method, path, encoded query,
    ///   header fields without credentials, body, the `Idempotency-Key` sent with every
    ///   attempt, when it was queued and its state (`queued`, or kept after a refusal).
    static let version1 = SchemaMigration(
        version: 1,
        sql: """
            CREATE TABLE answers (
                id INTEGER PRIMARY KEY,
                method TEXT NOT NULL,
                path TEXT NOT NULL,
                query BLOB NOT NULL,
                account TEXT NOT NULL,
                status INTEGER NOT NULL,
                headers BLOB NOT NULL,
                body BLOB NOT NULL,
                varying BLOB NOT NULL,
                stored_at REAL NOT NULL,
                last_used INTEGER NOT NULL,
                bytes INTEGER NOT NULL,
                UNIQUE (method, path, query, account)
            );
            CREATE INDEX answers_by_use ON answers (last_used, bytes);
            CREATE TABLE outbox (
                id TEXT PRIMARY KEY NOT NULL,
                position INTEGER NOT NULL UNIQUE,
                method TEXT NOT NULL,
                path TEXT NOT NULL,
                query BLOB NOT NULL,
                headers BLOB NOT NULL,
                body BLOB NOT NULL,
                idempotency_key TEXT NOT NULL,
                created_at REAL NOT NULL,
                state TEXT NOT NULL
            );
            """
    )

    /// The second schema: why the server refused an outbox entry kept for the app to resolve
    /// (state `kept`): the status (`NULL` when the request could not be sent at all), the
    /// server's message, the response body (a 422's validation errors) and when it happened,
    /// so that a kept entry still explains itself after a restart.
    static let version2 = SchemaMigration(
        version: 2,
        sql: """
            ALTER TABLE outbox ADD COLUMN refused_status INTEGER;
            ALTER TABLE outbox ADD COLUMN refused_message TEXT;
            ALTER TABLE outbox ADD COLUMN refused_body BLOB;
            ALTER TABLE outbox ADD COLUMN refused_at REAL;
            """
    )

    /// Running totals of the stored responses (how many, how many bytes), kept by triggers,
    /// so that storing an answer checks its bounds by reading one row instead of counting
    /// every answer.
    static let version3 = SchemaMigration(
        version: 3,
        sql: """
            CREATE TABLE answer_totals (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                count INTEGER NOT NULL,
                bytes INTEGER NOT NULL
            );
            INSERT INTO answer_totals (id, count, bytes) SELECT 1, count(*), total(bytes) FROM answers;
            CREATE TRIGGER answers_counted AFTER INSERT ON answers BEGIN
                UPDATE answer_totals SET count = count + 1, bytes = bytes + new.bytes WHERE id = 1;
            END;
            CREATE TRIGGER answers_uncounted AFTER DELETE ON answers BEGIN
                UPDATE answer_totals SET count = count - 1, bytes = bytes - old.bytes WHERE id = 1;
            END;
            """
    )

    /// The outbox's order by resource, its one sender and its recent outcomes.
    ///
    /// - `outbox.resource`: the path of the entry's resource, without query, fragment or
    ///   surrounding `/` (its typed resource's path since version 6), indexed, so that a replay holds a queued
    ///   write behind a kept one to the same resource and a new write finds the entries of
    ///   its resource at once.
    /// - `outbox_sender`: the lease of the one outbox that replays (its id, its process, when
    ///   the lease ends): see `SenderLease`.
    /// - `outbox_outcomes`: the latest entries that left the outbox, sent (with the status,
    ///   header fields and first bytes of the server's answer) or discarded, in `sequence`
    ///   order.
    static let version4 = SchemaMigration(
        version: 4,
        sql: """
            ALTER TABLE outbox ADD COLUMN resource TEXT NOT NULL DEFAULT '';
            UPDATE outbox SET resource = substr(path, 1, instr(path || '?', '?') - 1);
            UPDATE outbox SET resource = trim(substr(resource, 1, instr(resource || '#', '#') - 1), '/');
            CREATE INDEX outbox_by_resource ON outbox (resource, position);
            CREATE TABLE outbox_sender (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                owner TEXT NOT NULL,
                pid INTEGER NOT NULL,
                expires_at REAL NOT NULL
            );
            CREATE TABLE outbox_outcomes (
                sequence INTEGER PRIMARY KEY,
                entry_id TEXT NOT NULL,
                method TEXT NOT NULL,
                path TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                created_at REAL NOT NULL,
                outcome TEXT NOT NULL,
                status INTEGER,
                headers BLOB NOT NULL,
                body BLOB NOT NULL,
                decided_at REAL NOT NULL
            );
            """
    )

    /// Local-first: the ids of records created offline.
    ///
    /// - `outbox.local_id`: a queued create's local id, as JSON (`-1`, `"local-…"`).
    /// - `local_ids`: the last negative id given out (`0` before the first), so that local ids
    ///   stay unique in the store for as long as it lives.
    /// - `id_map`: the id the server gave each record created offline (JSON, by the local id's
    ///   JSON), written in the transaction that removes the sent create, so entries behind it
    ///   are rewritten after any crash.
    static let version5 = SchemaMigration(
        version: 5,
        sql: """
            ALTER TABLE outbox ADD COLUMN local_id TEXT;
            CREATE TABLE local_ids (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                last INTEGER NOT NULL
            );
            INSERT INTO local_ids (id, last) VALUES (1, 0);
            CREATE TABLE id_map (
                local_id TEXT PRIMARY KEY NOT NULL,
                server_id TEXT NOT NULL,
                resource TEXT NOT NULL
            );
            """
    )

    /// Typed resources: what each queued write and each recent outcome addresses, as its
    /// request said it (`RequestResource`, as JSON: its segments, where the parent scope and
    /// the collection end, whether it names a record or a singular object, the foreign keys
    /// its repository stated). `NULL` for rows written before: their path is read by
    /// json-server's convention.
    static let version6 = SchemaMigration(
        version: 6,
        sql: """
            ALTER TABLE outbox ADD COLUMN addressed TEXT;
            ALTER TABLE outbox_outcomes ADD COLUMN addressed TEXT;
            """
    )

    /// Conflicts: what each queued `PUT`, `PATCH` or `DELETE` was made on, and the conflict a
    /// kept one waits with.
    ///
    /// - `outbox.base`: the record as reads showed it when the write was queued (a JSON
    ///   object), `NULL` for a create or a record the store held no answer for;
    ///   `base_etag` and `base_last_modified` the stored answer's strong `ETag` and
    ///   `Last-Modified`, while they still describe that record.
    /// - `outbox.conflict`: for an entry kept after a conflict (state `kept`), the conflict as
    ///   JSON (its kind, the colliding fields, base, mine and theirs), so that it still
    ///   explains itself after a restart and reads keep showing the write.
    static let version7 = SchemaMigration(
        version: 7,
        sql: """
            ALTER TABLE outbox ADD COLUMN base TEXT;
            ALTER TABLE outbox ADD COLUMN base_etag TEXT;
            ALTER TABLE outbox ADD COLUMN base_last_modified TEXT;
            ALTER TABLE outbox ADD COLUMN conflict TEXT;
            """
    )
}
