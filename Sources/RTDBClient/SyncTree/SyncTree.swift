import RTDBData
import RTDBProtocol

// Follows the Firebase JS SDK's SyncTree (core/SyncTree.ts).

/// Tells the connection which listens the server must serve.
protocol ListenProvider: AnyObject {
    /// Starts a listen; `complete` is called with the server's status when it answers.
    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (ResponseStatus) -> [Event]) -> [Event]
    func stopListening(_ query: QuerySpec, tag: Int?)
}

/// The client's local cache: sync points (views) by location, the user's pending writes,
/// and the tags of queries the server filters. Every change in goes through here and comes
/// out as the events each registration must see.
final class SyncTree {
    private(set) var syncPoints = PathTree<SyncPoint>()
    let pendingWrites = WriteTree()
    private var tagToQuery: [Int: String] = [:]
    private var queryToTag: [String: Int] = [:]
    private var nextTag = 1
    weak var listenProvider: ListenProvider?
    /// The disk cache: server data and completed queries are kept there, and a new listen
    /// starts from what it holds when nothing in memory is complete.
    var diskCache: DiskCache?
    /// Filtered queries whose view was made to bypass the disk cache (`DiskCacheUse`): their
    /// data is not kept there, and the cache does not track them.
    private var uncachedQueries: Set<String> = []

    init(listenProvider: ListenProvider?) {
        self.listenProvider = listenProvider
    }

    // MARK: User writes

    func applyUserOverwrite(_ path: Path, _ node: Node, writeID: Int, visible: Bool = true) -> [Event] {
        pendingWrites.addOverwrite(path, node, id: writeID, visible: visible)
        guard visible, anySyncPoint(touching: path) else { return [] }
        pendingWrites.layerPending()
        return applyToSyncPoints(.overwrite(.user, path, node))
    }

    func applyUserMerge(_ path: Path, _ entries: [(Path, Node)], writeID: Int) -> [Event] {
        pendingWrites.addMerge(path, entries, id: writeID)
        guard anySyncPoint(touching: path) else { return [] }
        pendingWrites.layerPending()
        return applyToSyncPoints(.merge(.user, path, SyncTree.tree(entries)))
    }

    /// The server accepted (`revert: false`) or rejected the write.
    func ackUserWrite(_ writeID: Int, revert: Bool = false) -> [Event] {
        guard let (write, mayChangeViews) = pendingWrites.remove(id: writeID), mayChangeViews,
              anySyncPoint(touching: write.path) else { return [] }
        var affected = PathTree<Bool>()
        switch write.change {
        case .overwrite: affected.set(.root, true)
        case .merge(let entries): for (path, _) in entries { affected.set(path, true) }
        }
        return applyToSyncPoints(.ackUserWrite(write.path, affected: affected, revert: revert))
    }

    /// Whether a sync point lies at, above or below `path`: if none does, no view sees a
    /// change there, and a big merge need not be made into an operation at all.
    private func anySyncPoint(touching path: Path) -> Bool {
        syncPoints.rootmost(on: path) != nil || !syncPoints.subtree(path).isEmpty
    }

    // MARK: Server data

    func applyServerOverwrite(_ path: Path, _ node: Node) -> [Event] {
        diskCache?.overwrite(path, node)
        return applyToSyncPoints(.overwrite(.server, path, node))
    }

    func applyServerMerge(_ path: Path, _ entries: [(Path, Node)]) -> [Event] {
        if let diskCache { for (relative, node) in entries { diskCache.overwrite(path.appending(relative), node) } }
        return applyToSyncPoints(.merge(.server, path, SyncTree.tree(entries)))
    }

    func applyListenComplete(_ path: Path) -> [Event] {
        applyToSyncPoints(.listenComplete(.server, path))
    }

    func applyTaggedOverwrite(_ path: Path, _ node: Node, tag: Int) -> [Event] {
        guard let (queryPath, id, key) = query(forTag: tag), let relative = path.relative(to: queryPath) else { return [] }
        if let diskCache, !uncachedQueries.contains(key) {
            if relative.isRoot { diskCache.overwriteChildren(at: path, node) } else { diskCache.overwrite(path, node) }
        }
        return applyTagged(queryPath, .overwrite(.taggedQuery(id), relative, node))
    }

    func applyTaggedMerge(_ path: Path, _ entries: [(Path, Node)], tag: Int) -> [Event] {
        guard let (queryPath, id, key) = query(forTag: tag), let relative = path.relative(to: queryPath) else { return [] }
        if let diskCache, !uncachedQueries.contains(key) { for (below, node) in entries { diskCache.overwrite(path.appending(below), node) } }
        return applyTagged(queryPath, .merge(.taggedQuery(id), relative, SyncTree.tree(entries)))
    }

    func applyTaggedListenComplete(_ path: Path, tag: Int) -> [Event] {
        guard let (queryPath, id, _) = query(forTag: tag), let relative = path.relative(to: queryPath) else { return [] }
        return applyTagged(queryPath, .listenComplete(.taggedQuery(id), relative))
    }

    private func applyTagged(_ queryPath: Path, _ operation: Operation) -> [Event] {
        guard let syncPoint = syncPoints.get(queryPath) else { return [] }
        let events = syncPoint.apply(operation, writes: WriteTreeRef(path: queryPath, tree: pendingWrites), completeServerCache: nil)
        if let diskCache, let id = operation.source.queryID, let view = syncPoint.view(id), view.cache.server.complete,
           !uncachedQueries.contains(view.query.key) {
            diskCache.setKeys(view.query, Set(view.serverCache.children.map { $0.key.name }))
        }
        return events
    }

    private static func tree(_ entries: [(Path, Node)]) -> PathTree<Node> {
        var tree = PathTree<Node>()
        for (path, node) in entries { tree.set(path, node) }
        return tree
    }

    // MARK: Registrations

    /// `diskCache` says how a new view uses the disk cache; a registration joining an
    /// existing view takes it as it is.
    func addRegistration(_ registration: EventRegistration, for query: QuerySpec, diskCache use: DiskCacheUse = .startFromAndKeep) -> [Event] {
        let path = query.path
        var serverCache: Node?
        var ancestorHasCompleteView = false
        syncPoints.forEachAbove(path) { pointPath, syncPoint in
            let relative = path.relative(to: pointPath)!
            serverCache = serverCache ?? syncPoint.completeServerCache(at: relative)
            ancestorHasCompleteView = ancestorHasCompleteView || syncPoint.hasCompleteView
        }
        let syncPoint: SyncPoint
        if let existing = syncPoints.get(path) {
            syncPoint = existing
            ancestorHasCompleteView = ancestorHasCompleteView || existing.hasCompleteView
            serverCache = serverCache ?? existing.completeServerCache(at: .root)
        } else {
            syncPoint = SyncPoint()
            syncPoints = syncPoints.setting(path, syncPoint)
        }
        let viewExists = syncPoint.viewFor(query) != nil
        if !viewExists && use == .bypass && !query.params.loadsAllData { uncachedQueries.insert(query.key) }
        let onDisk = !uncachedQueries.contains(query.key)
        var serverComplete = serverCache != nil
        var cache = serverCache ?? .empty
        if onDisk { diskCache?.touch(query) }
        if !serverComplete, use == .startFromAndKeep, let (node, complete) = diskCache?.serverCache(for: query) {
            // Kept from an earlier session: complete as the server last said, or some children.
            cache = node
            serverComplete = complete
        }
        if !serverComplete {
            // Children below that are complete still help.
            for (key, child) in syncPoints.subtree(path).sortedChildren {
                if let childPoint = child.value, let complete = childPoint.completeServerCache(at: .root) {
                    cache = cache.updatingChild(ChildKey(key), complete)
                }
            }
        }
        if !viewExists && !query.params.loadsAllData {
            let tag = nextTag
            nextTag += 1
            queryToTag[query.key] = tag
            tagToQuery[tag] = query.key
        }
        let writes = WriteTreeRef(path: path, tree: pendingWrites)
        var events = syncPoint.add(registration, for: query, writes: writes, serverCache: cache, serverComplete: serverComplete)
        if !viewExists && !ancestorHasCompleteView, let view = syncPoint.viewFor(query) {
            events += setUpListener(query, view)
        }
        return events
    }

    /// Removes a registration (nil: all at the query). With an error (the server cancelled the
    /// listen), returns the cancel notices instead of stopping the listen.
    @discardableResult
    func removeRegistration(_ registration: EventRegistration?, for query: QuerySpec, error: DatabaseError? = nil)
        -> [(EventRegistration, DatabaseError)] {
        let path = query.path
        guard let syncPoint = syncPoints.get(path), query.identifier == "default" || syncPoint.viewFor(query) != nil else { return [] }
        let (removed, cancelled) = syncPoint.remove(registration, for: query, error: error)
        if syncPoint.isEmpty { syncPoints = syncPoints.removing(path) }
        let removingDefault = removed.contains { $0.params.loadsAllData }
        let covered = syncPoints.firstOnPath(path) { _, point in point.hasCompleteView ? true : nil } ?? false
        if removingDefault && !covered {
            // Listens below were shadowed by this one; they must be served again.
            let subtree = syncPoints.subtree(path)
            if !subtree.isEmpty {
                for view in SyncTree.distinctViews(subtree) {
                    let listener = makeListener(view)
                    _ = listenProvider?.startListening(SyncTree.queryForListening(view.query), tag: tag(for: view.query),
                                                       hash: listener.hash, complete: listener.complete)
                }
            }
        }
        if !covered && !removed.isEmpty && error == nil {
            if removingDefault {
                listenProvider?.stopListening(SyncTree.queryForListening(query), tag: nil)
            } else {
                for gone in removed { listenProvider?.stopListening(SyncTree.queryForListening(gone), tag: queryToTag[gone.key]) }
            }
        }
        for gone in removed where !gone.params.loadsAllData {
            if let tag = queryToTag.removeValue(forKey: gone.key) { tagToQuery[tag] = nil }
            uncachedQueries.remove(gone.key)
        }
        // However the listen ended (unlistened, refused, revoked, a transaction's), the
        // eviction it held up can run now.
        if let diskCache, syncPoints.get(path) == nil, diskCache.evictionBlockedBy.contains(path) {
            diskCache.evictIfNeeded(pinned: listenedPaths, force: true)
        }
        return cancelled
    }

    /// What the user sees at `path` (server data known to the client plus pending writes),
    /// including hidden writes (running transactions) unless excluded. With `knownOnly`,
    /// nil unless the value is known in full (no guessing that missing data is empty).
    func completeEventCache(at path: Path, excluding: Set<Int> = [], knownOnly: Bool = false) -> Node? {
        let serverCache = syncPoints.firstOnPath(path) { pointPath, point in
            point.completeServerCache(at: path.relative(to: pointPath)!)
        }
        return pendingWrites.completeEventCache(at: path, serverCache: serverCache, excluding: excluding, includeHidden: !knownOnly)
    }

    /// What the user sees at `path` when it is known in full: from memory, else from the
    /// disk cache (server data kept from earlier sessions, with the pending writes on top).
    func knownValue(at path: Path) -> Node? {
        if let node = completeEventCache(at: path, knownOnly: true) { return node }
        guard let (node, complete) = diskCache?.serverCache(for: QuerySpec(path: path)), complete else { return nil }
        return pendingWrites.completeEventCache(at: path, serverCache: node)
    }

    /// Every location with a listen (what the disk cache must not evict).
    var listenedPaths: [Path] {
        var paths: [Path] = []
        syncPoints.forEach { path, _ in paths.append(path) }
        return paths
    }

    /// The paths listened to whole (not only through a query, which the server answers with
    /// the children in its window alone): there the server's pushes keep the disk cache.
    var wholeListenedPaths: [Path] {
        var paths: [Path] = []
        syncPoints.forEach { path, point in if point.hasCompleteView { paths.append(path) } }
        return paths
    }

    func tag(for query: QuerySpec) -> Int? { queryToTag[query.key] }

    /// The location, identifier and key of the query with `tag`.
    private func query(forTag tag: Int) -> (Path, String, String)? {
        guard let key = tagToQuery[tag], let split = key.firstIndex(of: "$") else { return nil }
        return (Path(String(key[..<split])), String(key[key.index(after: split)...]), key)
    }

    // MARK: Applying operations down the tree

    private func applyToSyncPoints(_ operation: Operation) -> [Event] {
        apply(operation, syncPoints, serverCache: nil, writes: WriteTreeRef(path: .root, tree: pendingWrites))
    }

    private func apply(_ operation: Operation, _ tree: PathTree<SyncPoint>, serverCache: Node?, writes: WriteTreeRef) -> [Event] {
        if operation.path.isRoot { return applyToDescendants(operation, tree, serverCache: serverCache, writes: writes) }
        let syncPoint = tree.value
        var serverCache = serverCache
        if serverCache == nil, let syncPoint { serverCache = syncPoint.completeServerCache(at: .root) }
        var events: [Event] = []
        let key = operation.path.first!
        if let childTree = tree.children[key], let childOperation = operation.forChild(key) {
            events += apply(childOperation, childTree, serverCache: serverCache?.child(key), writes: writes.child(key))
        }
        if let syncPoint { events += syncPoint.apply(operation, writes: writes, completeServerCache: serverCache) }
        return events
    }

    private func applyToDescendants(_ operation: Operation, _ tree: PathTree<SyncPoint>, serverCache: Node?, writes: WriteTreeRef) -> [Event] {
        let syncPoint = tree.value
        var serverCache = serverCache
        if serverCache == nil, let syncPoint { serverCache = syncPoint.completeServerCache(at: .root) }
        var events: [Event] = []
        for (key, childTree) in tree.sortedChildren {
            if let childOperation = operation.forChild(key) {
                events += applyToDescendants(childOperation, childTree, serverCache: serverCache?.child(key), writes: writes.child(key))
            }
        }
        if let syncPoint { events += syncPoint.apply(operation, writes: writes, completeServerCache: serverCache) }
        return events
    }

    // MARK: Listens

    private func makeListener(_ view: View) -> (hash: () -> String, complete: (ResponseStatus) -> [Event]) {
        let query = view.query
        let tag = self.tag(for: query)
        return (
            hash: { view.serverCache.hashString },
            complete: { [weak self] status in
                // An answer to a listen whose view is gone (removed before the server
                // answered) says nothing about the data held now.
                guard let self, self.syncPoints.get(query.path)?.viewFor(query) === view else { return [] }
                if status == .ok {
                    if !self.uncachedQueries.contains(query.key) {
                        self.diskCache?.setComplete(query, keys: query.params.loadsAllData ? nil : Set(view.serverCache.children.map { $0.key.name }))
                    }
                    return tag.map { self.applyTaggedListenComplete(query.path, tag: $0) } ?? self.applyListenComplete(query.path)
                }
                let error = DatabaseError(status: status, message: SyncTree.message(forStatus: status))
                let cancelled = self.removeRegistration(nil, for: query, error: error)
                for (registration, error) in cancelled { registration.cancel(error) }
                return []
            }
        )
    }

    static func message(forStatus status: ResponseStatus) -> String {
        switch status {
        case .permissionDenied: return "Client doesn't have permission to access the desired data."
        case .unavailable: return "The service is unavailable"
        case .tooBig: return "The data requested exceeds the maximum size that can be accessed with a single request."
        default: return "the server refused the listen (\(status))"
        }
    }

    private func setUpListener(_ query: QuerySpec, _ view: View) -> [Event] {
        let tag = self.tag(for: query)
        let listener = makeListener(view)
        let events = listenProvider?.startListening(SyncTree.queryForListening(query), tag: tag,
                                                    hash: listener.hash, complete: listener.complete) ?? []
        if tag == nil {
            // A complete listen here covers every listen below: stop those.
            let subtree = syncPoints.subtree(query.path)
            let toStop: [QuerySpec] = subtree.fold { relative, point, children in
                if !relative.isRoot, let point, let complete = point.completeView { return [complete.query] }
                var queries = point?.queryViews.map(\.query) ?? []
                for (_, childQueries) in children { queries += childQueries }
                return queries
            }
            for stop in toStop { listenProvider?.stopListening(SyncTree.queryForListening(stop), tag: self.tag(for: stop)) }
        }
        return events
    }

    private static func distinctViews(_ subtree: PathTree<SyncPoint>) -> [View] {
        subtree.fold { _, point, children in
            if let point, let complete = point.completeView { return [complete] }
            var views = point?.queryViews ?? []
            for (_, childViews) in children { views += childViews }
            return views
        }
    }

    /// An ordered query without bounds is served by the plain listen.
    static func queryForListening(_ query: QuerySpec) -> QuerySpec {
        query.params.loadsAllData && !query.params.isDefault ? QuerySpec(path: query.path) : query
    }
}
