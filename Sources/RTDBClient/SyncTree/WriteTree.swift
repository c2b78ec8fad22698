import RTDBData

// Follows the Firebase JS SDK's WriteTree (core/WriteTree.ts).

/// A user write not yet acknowledged: an overwrite or a merge, with its id.
struct UserWrite {
    enum Change {
        case overwrite(Node)
        case merge([(Path, Node)])
    }
    var id: Int
    var path: Path
    var change: Change
    /// False for a transaction still running: it raises no events yet.
    var visible: Bool

    /// The places this write replaces entirely, relative to `path`.
    var coveredRelatives: [Path] {
        switch change {
        case .overwrite: return [.root]
        case .merge(let entries): return entries.map { $0.0 }
        }
    }

    /// Whether this write covers `other` entirely.
    func covers(_ other: Path) -> Bool {
        switch change {
        case .overwrite: return path.contains(other)
        case .merge(let entries): return entries.contains { path.appending($0.0).contains(other) }
        }
    }
}

/// The client's pending writes, in order, and the visible ones layered into one
/// `CompoundWrite`: what the local view shows on top of the server's data.
///
/// Layering is paid only when something looks: a write joins the layer when the layer is
/// next read or a view is shown it (`layerPending`), so a write that nothing observes before
/// it is acknowledged (a piped script's, an import's) is appended and dropped, never layered.
final class WriteTree {
    /// The layer of the writes before `unlayered`; `visible` brings it up to date.
    private var layered = CompoundWrite.empty
    /// Pending writes, oldest first, from `head` on (acknowledged ones before it are dropped
    /// lazily, so acknowledging the oldest write is O(1) even with many in flight).
    private var storage: [UserWrite] = []
    private var head = 0
    /// Where the writes not yet in `layered` (nor in `coveredPaths`) start in `storage`.
    private var unlayered = 0
    /// The places layered writes replace (the others are not in the layer), so that
    /// acknowledging one that touches no other skips layering all of them anew.
    private var coveredPaths = PathCounter()

    var writes: ArraySlice<UserWrite> { storage[head...] }

    /// What the visible pending writes show, all of them layered in order.
    var visible: CompoundWrite {
        layerPending()
        return layered
    }

    func addOverwrite(_ path: Path, _ node: Node, id: Int, visible isVisible: Bool) {
        storage.append(UserWrite(id: id, path: path, change: .overwrite(node), visible: isVisible))
    }

    func addMerge(_ path: Path, _ entries: [(Path, Node)], id: Int) {
        storage.append(UserWrite(id: id, path: path, change: .merge(entries), visible: true))
    }

    /// Layers the writes appended since the layer was last read, in their order. A view that
    /// is shown a write (an operation applied to it) must find it layered, so that its
    /// acknowledgement or revert is shown too.
    func layerPending() {
        guard unlayered < storage.count else { return }
        for write in storage[unlayered...] where write.visible {
            switch write.change {
            case .overwrite(let node): layered.add(node, at: write.path)
            case .merge(let entries): layered.add(entries, at: write.path)
            }
            coveredPaths.add(write.coveredRelatives, under: write.path)
        }
        unlayered = storage.count
    }

    /// Forgets a write (acknowledged or reverted). Returns it, and whether it may have changed
    /// what the views show, so that they need recomputing; nil when no write has that id.
    func remove(id: Int) -> (write: UserWrite, mayChangeViews: Bool)? {
        guard let position = writes.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = storage[position]
        // Never layered: no view was shown it nor has anything looked since, so none shows it.
        if position >= unlayered {
            drop(at: position)
            return (removed, false)
        }
        layerPending()
        let index = position - head  // where the writes after it now start
        let wasOldest = position == head
        drop(at: position)
        return (removed, forget(removed, index: index, wasOldest: wasOldest))
    }

    /// Takes the write at `position` out of `storage`.
    private func drop(at position: Int) {
        if position == head {
            head += 1
            unlayered = max(unlayered, head)
            if head > 1024 && head * 2 > storage.count {
                storage.removeFirst(head)
                unlayered -= head
                head = 0
            }
        } else {
            storage.remove(at: position)
            if position < unlayered { unlayered -= 1 }
        }
    }

    /// Takes `removed`, layered and now out of `storage` (the writes after it start at `index`
    /// of `writes`), out of the layer.
    private func forget(_ removed: UserWrite, index: Int, wasOldest: Bool) -> Bool {
        guard removed.visible else { return false }
        coveredPaths.remove(removed.coveredRelatives, under: removed.path)
        // No other write at, above or below what it wrote (an import's many updates of one
        // list): it just leaves the visible layer.
        if !coveredPaths.anyAtOrAboveOrBelow(removed.coveredRelatives, under: removed.path) {
            removeVisible(removed)
            return true
        }
        // Entirely shadowed by a later write: what shows does not change. The oldest (as the
        // server answers) has only later ones, so the counter tells without a scan. Not so
        // over an earlier write's leaf: it made the leaf an object that a later deletion
        // of its child emptied, and without it the leaf shows again.
        let shadowed = wasOldest ? coveredPaths.anyAtOrAbove(removed.path)
            : writes.dropFirst(index).contains { $0.visible && $0.covers(removed.path) }
                && !writes.prefix(index).contains { $0.visible && $0.covers(removed.path) }
        if shadowed { return false }
        // Folded into or beside others' values: layer the rest anew.
        layered = layer(writes, at: .root) { $0.visible }
        return true
    }

    private func removeVisible(_ removed: UserWrite) {
        switch removed.change {
        case .overwrite: layered.remove(removed.path)
        case .merge: layered.remove(removed.coveredRelatives, at: removed.path)
        }
    }

    /// The writes that `include` selects, seen from `root`.
    func layer(_ writes: ArraySlice<UserWrite>, at root: Path, include: (UserWrite) -> Bool) -> CompoundWrite {
        var result = CompoundWrite.empty
        for write in writes where include(write) {
            switch write.change {
            case .overwrite(let node):
                if let relative = write.path.relative(to: root) {
                    result.add(node, at: relative)
                } else if let relative = root.relative(to: write.path) {
                    result.add(node.child(at: relative), at: .root)
                }
            case .merge(let entries):
                if let relative = write.path.relative(to: root) {
                    result.add(entries, at: relative)
                } else if let relative = root.relative(to: write.path), let front = relative.first {
                    // Only an entry named exactly by the next key reaches below the write.
                    if let entry = entries.last(where: { $0.0.count == 1 && $0.0.first == front }) {
                        result.add(entry.1.child(at: relative.dropFirst()), at: .root)
                    }
                }
            }
        }
        return result
    }

    // MARK: What views see (each relative to a location `treePath`)

    /// The complete value the user sees at `treePath`, or nil if it is not known.
    func completeEventCache(at treePath: Path, serverCache: Node?, excluding: Set<Int> = [], includeHidden: Bool = false) -> Node? {
        if excluding.isEmpty && !includeHidden {
            if let shadowing = visible.completeNode(at: treePath) { return shadowing }
            let merge = visible.child(at: treePath)
            if merge.isEmpty { return serverCache }
            if serverCache == nil && !merge.hasCompleteWrite(at: .root) { return nil }
            return merge.apply(to: serverCache ?? .empty)
        }
        let merge = visible.child(at: treePath)
        if !includeHidden && merge.isEmpty { return serverCache }
        if !includeHidden && serverCache == nil && !merge.hasCompleteWrite(at: .root) { return nil }
        let layered = layer(writes, at: treePath) { write in
            (write.visible || includeHidden) && !excluding.contains(write.id)
                && write.path.overlaps(treePath)
        }
        return layered.apply(to: serverCache ?? .empty)
    }

    /// The children known completely at `treePath`, from writes and complete server children.
    func completeEventChildren(at treePath: Path, serverChildren: Node?) -> Node {
        var result = Node.empty
        if let top = visible.completeNode(at: treePath) {
            if !top.isLeaf {
                for (key, child) in top.children { result = result.updatingChild(key, child) }
            }
            return result
        }
        let merge = visible.child(at: treePath)
        if let serverChildren {
            for (key, child) in serverChildren.children {
                result = result.updatingChild(key, merge.child(at: Path(keys: [key.name])).apply(to: child))
            }
        }
        for (key, node) in merge.completeChildren { result = result.updatingChild(key, node) }
        return result
    }

    /// What the user sees at `treePath/childPath` after the server overwrote it, or nil when
    /// a user write shadows it completely.
    func eventCacheAfterServerOverwrite(at treePath: Path, childPath: Path, serverNode: Node) -> Node? {
        let path = treePath.appending(childPath)
        if visible.hasCompleteWrite(at: path) { return nil }
        let merge = visible.child(at: path)
        return merge.isEmpty ? serverNode.child(at: childPath) : merge.apply(to: serverNode.child(at: childPath))
    }

    func completeChild(at treePath: Path, key: ChildKey, server: CacheNode) -> Node? {
        let path = treePath.child(key.name)
        if let shadowing = visible.completeNode(at: path) { return shadowing }
        guard server.isCompleteForChild(key.name) else { return nil }
        return visible.child(at: path).apply(to: server.node.child(key))
    }

    func shadowingWrite(at path: Path) -> Node? { visible.completeNode(at: path) }

    /// Up to `count` children after `start` in index order (before it when `reverse`).
    func indexedSlice(at treePath: Path, serverData: Node?, start: (key: ChildKey, node: Node), count: Int,
                      reverse: Bool, index: Index) -> [(key: ChildKey, node: Node)] {
        let merge = visible.child(at: treePath)
        let node: Node
        if let shadowing = merge.completeNode(at: .root) {
            node = shadowing
        } else if let serverData {
            node = merge.apply(to: serverData)
        } else {
            return []
        }
        guard !node.isEmpty, !node.isLeaf else { return [] }
        return IndexedChildren.after(start, in: node, index: index, reverse: reverse, count: count)
    }
}

/// A `WriteTree` seen from one location.
struct WriteTreeRef {
    let path: Path
    let tree: WriteTree

    func child(_ key: String) -> WriteTreeRef { WriteTreeRef(path: path.child(key), tree: tree) }

    func completeEventCache(_ serverCache: Node?) -> Node? { tree.completeEventCache(at: path, serverCache: serverCache) }
    func completeEventChildren(_ serverChildren: Node?) -> Node { tree.completeEventChildren(at: path, serverChildren: serverChildren) }
    func eventCacheAfterServerOverwrite(_ childPath: Path, serverNode: Node) -> Node? {
        tree.eventCacheAfterServerOverwrite(at: path, childPath: childPath, serverNode: serverNode)
    }
    func shadowingWrite(_ relative: Path) -> Node? { tree.shadowingWrite(at: path.appending(relative)) }
    func completeChild(_ key: ChildKey, server: CacheNode) -> Node? { tree.completeChild(at: path, key: key, server: server) }
    func indexedSlice(_ serverData: Node?, start: (key: ChildKey, node: Node), count: Int, reverse: Bool, index: Index) -> [(key: ChildKey, node: Node)] {
        tree.indexedSlice(at: path, serverData: serverData, start: start, count: count, reverse: reverse, index: index)
    }
}

/// Counts paths in a trie, to ask quickly whether any lies at, above or below a path.
/// A value type: a level without children holds no allocation of its own, and changes are
/// made in place, one dictionary access a level.
struct PathCounter {
    private var children: [String: PathCounter] = [:]
    private var here = 0
    private var total = 0  // here plus everything below

    mutating func add(_ path: Path) { update([.root], under: path.keys[...], by: 1) }
    mutating func remove(_ path: Path) { update([.root], under: path.keys[...], by: -1) }
    /// Counts each of `relatives` below `base`, walking to `base` once.
    mutating func add(_ relatives: [Path], under base: Path) { update(relatives, under: base.keys[...], by: 1) }
    mutating func remove(_ relatives: [Path], under base: Path) { update(relatives, under: base.keys[...], by: -1) }

    private mutating func update(_ relatives: [Path], under base: ArraySlice<String>, by delta: Int) {
        guard let front = base.first else {
            for relative in relatives { update(relative.keys[...], by: delta) }
            return
        }
        total += delta * relatives.count
        Self.change(&children[front]) { $0.update(relatives, under: base.dropFirst(), by: delta) }
    }

    private mutating func update(_ keys: ArraySlice<String>, by delta: Int) {
        total += delta
        guard let front = keys.first else { here += delta; return }
        Self.change(&children[front]) { $0.update(keys.dropFirst(), by: delta) }
    }

    /// Changes a child in place, making it if missing and dropping it once it counts nothing.
    private static func change(_ slot: inout PathCounter?, _ body: (inout PathCounter) -> Void) {
        if slot == nil { slot = PathCounter() }
        body(&slot!)
        if slot!.total == 0 { slot = nil }
    }

    func anyAtOrAbove(_ path: Path) -> Bool {
        var node = self
        if node.here > 0 { return true }
        for key in path.keys {
            guard let next = node.children[key] else { return false }
            node = next
            if node.here > 0 { return true }
        }
        return false
    }

    /// Whether any path lies at, above or below one of `relatives` below `base`.
    func anyAtOrAboveOrBelow(_ relatives: [Path], under base: Path) -> Bool {
        var node = self
        if node.here > 0 { return true }
        for key in base.keys {
            guard let next = node.children[key] else { return false }
            node = next
            if node.here > 0 { return true }
        }
        search: for relative in relatives {
            var below = node
            for key in relative.keys {
                guard let next = below.children[key] else { continue search }
                below = next
                if below.here > 0 { return true }
            }
            if below.total > 0 { return true }
        }
        return false
    }
}
