import RTDBData

/// A database's query indexes, by location and ordering, as of one state of its tree: the
/// database keeps the current ones, and the store those of each record it has not yet
/// stored, so a checkpoint stores the indexes of the tree it stores.
struct QueryIndexes {
    /// An index's location and ordering.
    struct Key: Hashable, Sendable {
        let path: Path
        let index: Index
    }

    private var byKey: [Key: QueryIndex] = [:]

    static func key(_ path: Path, _ index: Index) -> Key { Key(path: path, index: index) }

    var isEmpty: Bool { byKey.isEmpty }
    var keys: Dictionary<Key, QueryIndex>.Keys { byKey.keys }
    var values: Dictionary<Key, QueryIndex>.Values { byKey.values }

    subscript(key: Key) -> QueryIndex? {
        get { byKey[key] }
        set { byKey[key] = newValue }
    }

    /// Keeps every index current after `record` took the tree from `before` to `after`: a
    /// write below a child updates that child's entry; a write at or above the indexed
    /// location replaces the whole list, so the index is built again when a query next uses
    /// it (not here, where the store's replays would build it again each time).
    mutating func apply(_ record: LogRecord, before: Node, after: Node) {
        update(for: record, old: { before.child(at: $0) }, new: { after.child(at: $0) })
    }

    /// Applies `record` to `root` in place, and keeps every index current as `apply(_:before:after:)`
    /// does: the old value of each indexed child written below is read first (one lookup per
    /// child, and the child alone is copied when the write changes it).
    mutating func apply(_ record: LogRecord, to root: inout Node) {
        guard !byKey.isEmpty else { return record.apply(to: &root) }
        var old: [Path: Node] = [:]
        for index in byKey.values where index.followsWrites {
            for (written, _) in record.sets {
                guard let child = QueryIndexes.indexedChild(written, of: index.path) else { continue }
                if old[child] == nil { old[child] = root.child(at: child) }
            }
        }
        record.apply(to: &root)
        update(for: record, old: { old[$0] ?? .empty }, new: { root.child(at: $0) })
    }

    /// The child of the list at `path` that a write at `written` changes, when it is below
    /// one (the list's own priority is not one of its children).
    private static func indexedChild(_ written: Path, of path: Path) -> Path? {
        guard written.count > path.count, path.contains(written), written.keys[path.count] != ".priority" else { return nil }
        return path.child(written.keys[path.count])
    }

    private mutating func update(for record: LogRecord, old: (Path) -> Node, new: (Path) -> Node) {
        guard !byKey.isEmpty else { return }
        for i in byKey.values.indices {
            let path = byKey.values[i].path
            for (written, _) in record.sets {
                if written.contains(path) {
                    byKey.values[i].invalidate()
                    break
                }
                if byKey.values[i].followsWrites, let child = QueryIndexes.indexedChild(written, of: path) {
                    byKey.values[i].update(ChildKey(child.keys[path.count]), old: old(child), new: new(child))
                }
            }
        }
    }

    /// The indexes a checkpoint stores: not a key index (key order is the children's own),
    /// not an empty one (nothing to read back), not one found damaged.
    var storable: [QueryIndex] { byKey.values.filter { $0.index != .key && !$0.entries.isEmpty && !$0.isDamaged } }

    /// Takes from `rebased` each index this table also holds: the same entries, read from a
    /// checkpoint where they did not change since. Indexes made after that checkpoint stay.
    mutating func adopt(_ rebased: QueryIndexes) {
        for (key, index) in rebased.byKey where byKey[key] != nil { byKey[key] = index }
    }

    /// After refused writes were taken out of the tree (now as `rebuilt`'s): each index is
    /// taken from `rebuilt`, or, made since, built again when next used.
    mutating func takeBack(to rebuilt: QueryIndexes) {
        for key in Array(byKey.keys) {
            if let index = rebuilt.byKey[key] { byKey[key] = index } else { byKey[key]?.invalidate() }
        }
    }

    /// The indexes `keep` accepts.
    func filter(_ keep: (QueryIndex) -> Bool) -> QueryIndexes {
        var kept = QueryIndexes()
        kept.byKey = byKey.filter { keep($0.value) }
        return kept
    }
}
