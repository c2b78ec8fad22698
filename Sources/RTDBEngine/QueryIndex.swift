import RTDBData

/// A child's place in an ordering: its ordering value and its key.
struct IndexEntry: TreeElement {
    let value: Node
    let key: ChildKey
    static func order(_ a: IndexEntry, _ b: IndexEntry) -> Int {
        let c = Index.compareValues(a.value, b.value)
        return c != 0 ? c : ChildKey.compare(a.key, b.key)
    }
}

/// The children of one location in one ordering, kept sorted as writes land, so that a
/// query (bounds and a limit) is answered in O(log n + limit) instead of sorting the list.
final class QueryIndex {
    let path: Path
    let index: Index
    private var entries = WeightBalancedTree<IndexEntry>()
    /// Listens using this index; it is dropped when none is left.
    var users = 0

    init(path: Path, index: Index, node: Node) {
        self.path = path
        self.index = index
        rebuild(from: node)
    }

    func rebuild(from node: Node) {
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

    /// One child changed from `old` to `new` (either may be empty).
    func update(_ key: ChildKey, old: Node, new: Node) {
        guard index != .key else { return }
        if !old.isEmpty { entries = entries.removing(IndexEntry(value: index.orderingValue(of: old), key: key)) }
        if !new.isEmpty { entries = entries.inserting(IndexEntry(value: index.orderingValue(of: new), key: key)) }
    }

    var count: Int { entries.count }

    /// The children of `node` (the data at `path`) that `params` selects. A child that is in
    /// `previous` (an earlier result) and not `changed` since is taken from it rather than
    /// looked up again in the list.
    func evaluate(_ params: QueryParams, on node: Node, reusing previous: Node = .empty,
                  changed: (ChildKey) -> Bool = { _ in true }) -> Node {
        guard !node.isLeaf, (params.limit ?? 1) > 0 else { return .empty }
        let total = index == .key ? node.childCount : entries.count
        let lo = boundary(params.startPosition, inclusiveBelow: !params.startInclusive, node)
        let hi = boundary(params.endPosition, inclusiveBelow: params.endInclusive, node)
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
        let children = node.children
        for i in range {
            let key = index == .key ? children.element(at: i).key : entries.element(at: i).key
            if !changed(key), let child = previous.children[key] {
                result.append((key, child))
            } else {
                result.append((key, node.child(key)))
            }
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
