import Foundation
import RTDBData

/// Which queries the disk cache holds data for, and whether that data is complete
/// (`tracked_queries`, with the children of complete filtered queries in `tracked_keys`):
/// what lets a read answer from the disk while offline, and what eviction forgets least
/// recently used first.
final class TrackedQueries {
    private let storage: CacheStorage
    /// The tracked keys last saved per filtered query, so unchanged sets are not rewritten.
    private var savedKeys: [String: Set<String>] = [:]
    /// Queries used since the cache policy last counted them.
    var usedSinceCheck = 0

    init(storage: CacheStorage) {
        self.storage = storage
    }

    /// A query as tracked: filtered queries by their parameters, the rest as the location's.
    private static func trackedName(_ query: QuerySpec) -> String {
        query.params.loadsAllData ? "default" : query.params.identifier
    }

    private func trackedID(_ query: QuerySpec) throws -> Int64? {
        var id: Int64?
        try storage.database.run("SELECT id FROM tracked_queries WHERE path = ? AND query = ?",
                                 [.text(CachedServerData.rowKey(query.path)), .text(Self.trackedName(query))]) { id = $0.integer(0) }
        return id
    }

    /// How many queries are tracked.
    var count: Int {
        var count = 0
        storage.attempt { count = Int(try storage.database.integer("SELECT count(*) FROM tracked_queries")) }
        return count
    }

    /// Records that `query` was used now (listened to or read), creating it incomplete.
    func touch(_ query: QuerySpec) {
        usedSinceCheck += 1
        storage.change {
            let params = query.params.loadsAllData ? [] : Array(query.params.wireObject.serialized().utf8)
            try storage.database.run("""
                INSERT INTO tracked_queries (path, query, params, complete, last_use) VALUES (?, ?, ?, 0, ?)
                ON CONFLICT (path, query) DO UPDATE SET last_use = excluded.last_use
                """, [.text(CachedServerData.rowKey(query.path)), .text(Self.trackedName(query)), .blob(params),
                      .real(Date().timeIntervalSince1970)])
        }
    }

    /// The server said the data it sent for `query` is complete; for a filtered query,
    /// `keys` are the children it holds.
    func setComplete(_ query: QuerySpec, keys: Set<String>?) {
        touch(query)
        storage.change {
            try storage.database.run("UPDATE tracked_queries SET complete = 1 WHERE path = ? AND query = ?",
                                     [.text(CachedServerData.rowKey(query.path)), .text(Self.trackedName(query))])
        }
        if let keys, !query.params.loadsAllData { setKeys(query, keys) }
    }

    /// The children a complete filtered query holds now.
    func setKeys(_ query: QuerySpec, _ keys: Set<String>) {
        let name = query.key
        guard savedKeys[name] != keys else { return }
        storage.change {
            guard let id = try trackedID(query) else { return }
            try storage.database.run("DELETE FROM tracked_keys WHERE query_id = ?", [.integer(id)])
            for key in keys { try storage.database.run("INSERT INTO tracked_keys (query_id, key) VALUES (?, ?)", [.integer(id), .text(key)]) }
            savedKeys[name] = keys
        }
    }

    private func keys(ofTracked id: Int64) throws -> Set<String> {
        var keys: Set<String> = []
        try storage.database.run("SELECT key FROM tracked_keys WHERE query_id = ?", [.integer(id)]) { keys.insert($0.text(0)) }
        return keys
    }

    /// Whether the cache holds all of `path`: a complete location here or above.
    func isComplete(atOrAbove path: Path) throws -> Bool {
        var prefix = Path()
        for depth in 0...path.count {
            var complete = false
            try storage.database.run("SELECT complete FROM tracked_queries WHERE path = ? AND query = 'default'",
                                     [.text(CachedServerData.rowKey(prefix))]) { complete = $0.integer(0) == 1 }
            if complete { return true }
            if depth < path.count { prefix = prefix.child(path.keys[depth]) }
        }
        return false
    }

    /// The queries at `path` and above no longer hold all they say they do.
    func markIncomplete(atAndAbove path: Path) throws {
        var at: Path? = path
        while let location = at {
            try storage.database.run("UPDATE tracked_queries SET complete = 0 WHERE path = ?", [.text(CachedServerData.rowKey(location))])
            at = location.parent
        }
    }

    /// Forgets the queries of the rows selected by `rows` (an SQL condition on `path` with
    /// `range` as its arguments); returns how many. Inside a change.
    func forget(where rows: String, _ range: [SQLiteDatabase.Value]) throws -> Int {
        let count = Int(try storage.database.integer("SELECT count(*) FROM tracked_queries WHERE \(rows)", range))
        try storage.database.run("DELETE FROM tracked_keys WHERE query_id IN (SELECT id FROM tracked_queries WHERE \(rows))", range)
        try storage.database.run("DELETE FROM tracked_queries WHERE \(rows)", range)
        savedKeys = [:]
        return count
    }

    /// Forgets every tracked query. Inside a change.
    func forgetAll() throws {
        try storage.database.execute("DELETE FROM tracked_keys; DELETE FROM tracked_queries;")
        savedKeys = [:]
    }

    /// The children of `path` known complete on disk for `query` short of a complete
    /// location (`isComplete`): those of a complete filtered query there that holds every
    /// child `query` can show (`covering`), else the union of what complete filtered queries
    /// there and complete locations just below hold. Nil when none is known.
    func knownChildren(for query: QuerySpec) throws -> (keys: Set<String>, covering: Bool)? {
        let path = query.path
        var known: Set<String> = []
        var anyKnown = false
        var covering: Set<String>?
        var rows: [(Int64, [UInt8])] = []
        try storage.database.run("SELECT id, params FROM tracked_queries WHERE path = ? AND query != 'default' AND complete = 1",
                                 [.text(CachedServerData.rowKey(path))]) { rows.append(($0.integer(0), $0.blob(1))) }
        for (id, bytes) in rows {
            let keys = try keys(ofTracked: id)
            if !query.params.loadsAllData, let json = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)),
               Self.holdsAll(of: query.params, QueryParams(wire: json)) {
                covering = keys
            }
            known.formUnion(keys)
            anyKnown = true
        }
        // Locations just below known complete.
        try storage.database.run("SELECT path FROM tracked_queries WHERE query = 'default' AND complete = 1 AND path > ? AND path < ?",
                                 CachedServerData.rowRange(path)) { row in
            let below = CachedServerData.path(ofRowKey: row.text(0))
            if below.count == path.count + 1, let last = below.last {
                known.insert(last)
                anyKnown = true
            }
        }
        if let covering { return (covering, true) }
        return anyKnown ? (known, false) : nil
    }

    /// Whether a complete `held` query holds every child `wanted` can show: the same order
    /// and bounds, and no limit or a limit at least as large from the same side.
    static func holdsAll(of wanted: QueryParams, _ held: QueryParams) -> Bool {
        guard wanted.index == held.index, wanted.start == held.start, wanted.end == held.end else { return false }
        guard let heldLimit = held.limit else { return true }
        guard let wantedLimit = wanted.limit else { return false }
        return wanted.isViewFromLeft == held.isViewFromLeft && wantedLimit <= heldLimit
    }

    /// The tracked queries' locations, least recently used first: what eviction forgets first.
    func leastRecentlyUsed() throws -> [Path] {
        var paths: [Path] = []
        try storage.database.run("SELECT path FROM tracked_queries ORDER BY last_use, id") {
            paths.append(CachedServerData.path(ofRowKey: $0.text(0)))
        }
        return paths
    }
}
