import RTDBData

/// The children of one location in one ordering, kept sorted as writes land, so that a
/// query (bounds and a limit) is answered in O(log n + limit) instead of sorting the list.
///
/// A value: copies share their tree (copy-on-write), so a checkpoint keeps the index as of a
/// record as cheaply as it keeps the data tree, and stores it with the tree; the database's
/// own copy, held nowhere else, changes in place.
struct QueryIndex {
    let path: Path
    let index: Index
    private(set) var entries = WeightBalancedTree<IndexEntry>()
    /// Where `entries` is read from, when it was stored: a damaged record found there means
    /// the index must be built again.
    private var stored: StoredIndexBranches?

    init(path: Path, index: Index, node: Node) {
        self.path = path
        self.index = index
        rebuild(from: node)
    }

    /// An index read from a node file (see `NodeFile.storedIndex`).
    init(path: Path, index: Index, stored: WeightBalancedTree<IndexEntry>, branches: StoredIndexBranches) {
        self.path = path
        self.index = index
        entries = stored
        self.stored = branches
    }

    /// Whether a stored record of this index turned out damaged (it cannot be trusted).
    var isDamaged: Bool { stored?.isDamaged ?? false }
    /// Whether it was read from a node file and not built again since.
    var isStored: Bool { stored != nil }
    /// Whether the list was replaced since it was built: `answer` builds it again.
    private(set) var isStale = false

    /// Drops the entries: the list was replaced (`answer` builds them again).
    mutating func invalidate() {
        entries = WeightBalancedTree()
        stored = nil
        isStale = true
    }

    mutating func rebuild(from node: Node) {
        stored = nil
        isStale = false
        guard index != .key else { return }  // key order is the children's own order
        // The children come in key order, which breaks ties between equal values. The list
        // is sized up front: a million children grown by doubling spent a third of the build
        // copying and faulting in fresh pages.
        var list: [IndexEntry] = []
        list.reserveCapacity(node.childCount)
        node.children.forEachChild { key, child in list.append(IndexEntry(value: index.orderingValue(of: child), key: key)) }
        let order = Index.sortedPositions(count: list.count) { list[$0].value }
        entries = WeightBalancedTree(count: order.count) { list[order[$0]] }
    }

    /// Whether `update` changes anything: not for key order (the children's own), nor while
    /// stale (the next answer builds it again), so the caller need not look the child up.
    var followsWrites: Bool { index != .key && !isStale }

    /// One child changed from `old` to `new` (either may be empty).
    mutating func update(_ key: ChildKey, old: Node, new: Node) {
        guard followsWrites else { return }
        let was = index.orderingValue(of: old), now = index.orderingValue(of: new)
        // A write that leaves the child where it sorts (most writes to a child change other
        // fields than the one the list is ordered by) leaves the entries as they are, where
        // taking the entry out and in again copied two paths through a tree of the whole list.
        // Not for a value that is an object: objects all sort alike, and the entry would keep
        // the old object alive.
        if !old.isEmpty && !new.isEmpty && was.children.isEmpty && Index.compareValues(was, now) == 0 { return }
        if !old.isEmpty { entries.remove(IndexEntry(value: was, key: key)) }
        if !new.isEmpty { entries.insert(IndexEntry(value: now, key: key)) }
    }

    /// `evaluate`, from an index built again from `node` when the list was replaced or a
    /// stored record of it is damaged (found before or while answering).
    mutating func answer(_ params: QueryParams, on node: Node, reusing previous: Node = .empty,
                         changed: (ChildKey) -> Bool = { _ in true }) -> Node {
        if isStale || isDamaged { rebuild(from: node) }
        let result = evaluate(params, on: node, reusing: previous, changed: changed)
        guard isDamaged else { return result }
        rebuild(from: node)
        return evaluate(params, on: node, reusing: previous, changed: changed)
    }

    var count: Int { entries.count }

    /// The children of `node` (the data at `path`) that `params` selects. A child that is in
    /// `previous` (an earlier result) and not `changed` since is taken from it rather than
    /// looked up again in the list. Only on an index neither stale nor damaged (`answer`).
    func evaluate(_ params: QueryParams, on node: Node, reusing previous: Node = .empty,
                  changed: (ChildKey) -> Bool = { _ in true }) -> Node {
        guard !node.isLeaf, (params.limit ?? 1) > 0 else { return .empty }
        let total = index == .key ? node.childCount : entries.count
        // An open end is the list's own (no descent: most limited queries have no bounds).
        let lo = params.start == nil ? 0 : boundary(params.startPosition, inclusiveBelow: !params.startInclusive, node)
        let hi = params.end == nil ? total : boundary(params.endPosition, inclusiveBelow: params.endInclusive, node)
        guard lo < hi else { return .empty }
        var range = lo..<min(hi, total)
        if let limit = params.limit {
            // Saturating: a limit larger than the list takes all of it.
            let count = min(limit, range.count)
            range = params.isViewFromLeft ? range.lowerBound..<(range.lowerBound + count)
                                          : (range.upperBound - count)..<range.upperBound
        }
        var result: [(ChildKey, Node)] = []
        result.reserveCapacity(range.count)
        // The window's positions visited in one walk of the list (a page of an export, say,
        // reads each stored branch once, not once per child).
        func take(_ key: ChildKey, _ value: Node?) {
            if !changed(key), let child = previous.children[key] {
                result.append((key, child))
            } else {
                result.append((key, value ?? node.child(key)))
            }
        }
        if index == .key {
            node.children.forEach(in: range) { take($0, $1) }
        } else {
            entries.forEachInOrder(in: range) { take($0.key, nil) }
        }
        return Node(children: ChildMap(unsorted: result))
    }

    /// How many children sort before `position`, counting one equal to it when
    /// `inclusiveBelow` (so the result is the first index past it).
    private func boundary(_ position: IndexPosition, inclusiveBelow: Bool, _ node: Node) -> Int {
        if index == .key {
            let children = node.children
            let below = children.rank(of: position.key)
            let equal = !position.key.isSentinel && children[position.key] != nil
            return below + (inclusiveBelow && equal ? 1 : 0)
        }
        let below = entries.rank { entry in index.compare(position, IndexPosition(value: .node(entry.value), key: entry.key)) }
        guard inclusiveBelow, case .node(let value) = position.value, !position.key.isSentinel else { return below }
        return below + (entries.find(IndexEntry(value: value, key: position.key)) != nil ? 1 : 0)
    }
}
