import Foundation
import RTDBData

// Plays the part of the mobile SDKs' PersistenceManager: the one object the core talks to,
// over a storage engine, a tracked-query manager and a cache policy.

/// The client's disk cache for one database: the server data it received
/// (`CachedServerData`), which queries that data is complete for (`TrackedQueries`), the
/// writes not yet acknowledged (`CacheWriteQueue`) and the kept-synced paths, in one SQLite
/// file that one process holds at a time (`CacheStorage`); what it keeps is decided by
/// `CachePolicy`.
///
/// Changes are grouped into one transaction until `commit()` (the core commits after each
/// burst of work on its queue); `commit()` returns once they are on disk. Used from the
/// core's queue only.
public final class DiskCache {
    private let storage: CacheStorage
    let writes: CacheWriteQueue
    private let data: CachedServerData
    private let queries: TrackedQueries
    private var policy: CachePolicy
    /// The listened paths that kept the last eviction from bringing the cache under its
    /// limit (their data was in use, as a watch's is): evict again when one is no longer.
    private(set) var evictionBlockedBy: Set<Path> = []

    /// Opens (creating) the cache in `folder`, mode 0700. Throws `DiskCacheError.inUse`
    /// when another process has it. A damaged file is moved aside and the cache starts empty.
    public init(folder: String, limit: Int = 10_000_000) throws {
        storage = try CacheStorage(folder: folder)
        writes = CacheWriteQueue(storage: storage, fresh: storage.openNote != nil)
        data = CachedServerData(storage: storage)
        queries = TrackedQueries(storage: storage)
        policy = CachePolicy(limit: limit)
        do {
            try writes.verify()
        } catch {
            storage.close()
            throw DiskCacheError.unusable(folder: folder, reason: "\(error)")
        }
    }

    deinit { close() }

    /// The folder holding `cache.sqlite`.
    public var folder: String { storage.folder }
    /// Said once after opening: the file was damaged (or made by a newer rtdb) and the cache
    /// starts empty, or its queue was damaged; the old file is kept beside it.
    public var openNote: String? { storage.openNote }
    /// The first error met since opening (a full disk, say): what was kept may be incomplete.
    public var failure: String? { storage.failure }
    /// Past this many bytes of cached data, the least recently used is evicted.
    public var limit: Int { policy.limit }

    public func setLimit(_ bytes: Int) {
        policy.limit = bytes
    }

    /// Called when a change opens a new transaction: the owner schedules its `commit()`.
    var onFirstChange: (() -> Void)? {
        get { storage.onFirstChange }
        set { storage.onFirstChange = newValue }
    }

    /// Puts what changed since the last commit on disk; false (and `failure` says why) when
    /// that failed, and what it held is not kept.
    @discardableResult
    public func commit() -> Bool {
        storage.commit()
    }

    /// Commits and releases the folder.
    public func close() {
        guard !storage.closed else { return }
        storage.commit()
        storage.close()
    }

    // MARK: Server data and the queries it is complete for

    /// The server's value at `path` replaced by `node`.
    func overwrite(_ path: Path, _ node: Node) {
        data.overwrite(path, node)
    }

    /// The server's data at `path` as cached (empty where nothing is known).
    func node(at path: Path) -> Node {
        data.node(at: path)
    }

    /// Bytes of cached server data.
    public var dataSize: Int { data.size }

    /// Records that `query` was used now (listened to or read), creating it incomplete.
    func touch(_ query: QuerySpec) {
        queries.touch(query)
    }

    /// The server said the data it sent for `query` is complete; for a filtered query,
    /// `keys` are the children it holds.
    func setComplete(_ query: QuerySpec, keys: Set<String>?) {
        queries.setComplete(query, keys: keys)
    }

    /// The children a complete filtered query holds now.
    func setKeys(_ query: QuerySpec, _ keys: Set<String>) {
        queries.setKeys(query, keys)
    }

    /// The server's whole value at `path` (a read's answer, a write it acknowledged): as
    /// `overwrite`, and the location is complete (unless one above already is: no tracked
    /// query for each write).
    func overwriteComplete(_ path: Path, _ node: Node) {
        overwrite(path, node)
        guard path.last != ".priority" else { return }
        var covered = false
        storage.attempt { covered = try queries.isComplete(atOrAbove: path) }
        if !covered { queries.setComplete(QuerySpec(path: path), keys: nil) }
    }

    /// The server's whole answer to `query`: for a filtered one, its children, and that the
    /// query is complete with them (as when its listen completes). Unless a listen keeps it
    /// fresh, the location is no longer known whole: children outside the answer may have
    /// gone since it was.
    func overwriteComplete(_ query: QuerySpec, _ node: Node, locationKeptFresh: Bool) {
        guard !query.params.loadsAllData else { return overwriteComplete(query.path, node) }
        // A leaf has no children to select: what the query holds there is not said.
        guard node.isEmpty || !node.children.isEmpty else { return }
        overwriteChildren(at: query.path, node)
        if !locationKeptFresh { storage.change { try queries.markIncomplete(atAndAbove: query.path) } }
        queries.setComplete(query, keys: Set(node.children.map { $0.key.name }))
    }

    /// A query's data at `path`: its children, not the location's (children outside it are
    /// not known gone).
    func overwriteChildren(at path: Path, _ node: Node) {
        for (key, child) in node.children { overwrite(path.child(key.name), child) }
    }

    /// Forgets what the cache holds at and below `path` (the server's value there is not
    /// known), but for the locations `kept` below it: its rows and queries go, and the
    /// queries above are no longer complete. Returns the bytes and queries removed.
    @discardableResult
    func forget(_ path: Path, except kept: [Path] = []) -> (bytes: Int, queries: Int) {
        var removed = (bytes: 0, queries: 0)
        // A kept location's data may lie in a row above it (between it and `path`), which goes.
        let keptData = kept.map { ($0, node(at: $0)) }
        defer { for (location, node) in keptData { overwrite(location, node) } }
        storage.change {
            let range = CachedServerData.rowRange(path) + kept.flatMap { CachedServerData.rowRange($0) }
            let rows = "path >= ? AND path < ?" + String(repeating: " AND NOT (path >= ? AND path < ?)", count: kept.count)
            removed.bytes = try data.forget(where: rows, range)
            removed.queries = try queries.forget(where: rows, range)
            if let parent = path.parent { try queries.markIncomplete(atAndAbove: parent) }
        }
        return removed
    }

    /// What the cache knows for `query`: its server data, and whether it is complete (the
    /// server said so for this location or one above, or for a query that holds every child
    /// this one can show). Incomplete, only the children known complete. Nil when nothing is.
    func serverCache(for query: QuerySpec) -> (node: Node, complete: Bool)? {
        var result: (Node, Bool)?
        storage.attempt {
            let path = query.path
            if try queries.isComplete(atOrAbove: path) {
                result = (node(at: path), true)
                return
            }
            guard let (keys, complete) = try queries.knownChildren(for: query) else { return }
            let data = node(at: path)
            var children: [(ChildKey, Node)] = []
            for name in keys {
                let child = data.child(ChildKey(name))
                if !child.isEmpty { children.append((ChildKey(name), child)) }
            }
            result = (Node(children: ChildMap(unsorted: children)), complete)
        }
        return result
    }

    /// Records a write the server acknowledged, as `CachePolicy.steps` says.
    func acknowledged(_ path: Path, written: [(path: Path, node: Node, estimated: Bool)], cached: Bool,
                      listened: [Path], whole: [Path], wholeBefore: [Path]) {
        for step in CachePolicy.steps(acknowledging: path, written: written, cached: cached,
                                      listened: listened, whole: whole, wholeBefore: wholeBefore) {
            switch step {
            case let .forget(location, except: kept): forget(location, except: kept)
            case let .keep(location, node): overwriteComplete(location, node)
            }
        }
    }

    /// Forgets every cached value and what queries were complete (the write queue stays).
    func clearData() {
        storage.change {
            try data.forgetAll()
            try queries.forgetAll()
        }
        commit()
    }

    // MARK: Kept-synced locations and settings

    public var keptSynced: [Path] { storage.keptSynced }

    func setKeptSynced(_ path: Path, _ on: Bool) {
        storage.setKeptSynced(path, on)
    }

    /// A setting kept with the cache (the kind of credential last used: never the credential).
    public func setting(_ name: String) -> String? {
        storage.setting(name)
    }

    public func setSetting(_ name: String, _ value: String) {
        storage.setSetting(name, value)
    }

    // MARK: Eviction

    /// At open: a file larger than the limit may hold more data than that (a smaller limit
    /// than before, or evictions cut short), which is evicted. The file's size bounds the
    /// data's, so a file within the limit is not measured (measuring reads all of it).
    func evictIfOverLimitWhenOpened(pinned listened: [Path]) {
        // If the file's size cannot be read (not a failure of the cache), the data is measured.
        if let bytes = storage.fileBytes, bytes <= policy.limit { return }
        evictIfNeeded(pinned: listened, force: true)
    }

    /// Evicts the least recently used queries' data until the cache is under the policy's
    /// target, when it has grown past its bounds. Data at, above or below `pinned` paths
    /// (those listened to) and below kept-synced ones stays.
    func evictIfNeeded(pinned listened: [Path], force: Bool = false) {
        guard force || policy.shouldCheck(written: data.writtenSinceCheck, queriesUsed: queries.usedSinceCheck) else { return }
        data.writtenSinceCheck = 0
        queries.usedSinceCheck = 0
        var size = dataSize
        var count = queries.count
        evictionBlockedBy = []
        guard policy.isOver(size: size, queries: count) else { return }
        storage.change {
            let candidates = try queries.leastRecentlyUsed()
            let kept = keptSynced
            var blockedBy: Set<Path> = []
            defer { evictionBlockedBy = policy.isOver(size: size, queries: count) ? blockedBy : [] }
            for candidate in candidates where policy.isAboveTarget(size: size, queries: count) {
                // Data a pinned location uses is not this query's alone: rows at or above the
                // pin hold it, and rows below it are part of it.
                let pins = listened.filter { $0.overlaps(candidate) }
                blockedBy.formUnion(pins)
                if !pins.isEmpty || kept.contains(where: { $0.overlaps(candidate) }) { continue }
                let removed = forget(candidate)
                size -= removed.bytes
                count -= removed.queries
            }
        }
        commit()
        storage.giveBackFreePages()
    }
}

/// Why a cache could not be used.
public enum DiskCacheError: Error, CustomStringConvertible {
    case inUse(folder: String, pid: String?)
    case unusable(folder: String, reason: String)

    public var description: String {
        switch self {
        case let .inUse(folder, pid):
            return "the cache in \(folder) is in use by another rtdb" + (pid.map { " (pid \($0))" } ?? "")
        case let .unusable(folder, reason):
            return "the cache in \(folder) cannot be used: \(reason)"
        }
    }
}
