/// One child: its key and its node, ordered by key.
public struct ChildEntry: TreeElement {
    public let key: ChildKey
    public let value: Node
    public static func order(_ a: ChildEntry, _ b: ChildEntry) -> Int { ChildKey.compare(a.key, b.key) }
}

/// The children of a node, in key order: a persistent weight-balanced tree, so a write to a
/// list of a million children copies O(log n) tree nodes and old versions stay valid.
public struct ChildMap: Sendable, Sequence, Equatable {
    var tree: WeightBalancedTree<ChildEntry>
    /// How many children have a priority. With none, priority order is key order, which
    /// views then answer in O(log n) instead of scanning the children.
    public private(set) var prioritizedCount: Int

    public init() {
        tree = WeightBalancedTree()
        prioritizedCount = 0
    }

    init(tree: WeightBalancedTree<ChildEntry>, prioritizedCount: Int) {
        self.tree = tree
        self.prioritizedCount = prioritizedCount
    }

    /// Builds in O(n) from entries already in strictly increasing key order.
    public init<C: Collection>(sorted entries: C) where C.Element == (ChildKey, Node), C.Index == Int {
        tree = WeightBalancedTree(sorted: entries.map { ChildEntry(key: $0.0, value: $0.1) })
        prioritizedCount = entries.reduce(0) { $0 + ($1.1.priority == nil ? 0 : 1) }
    }

    /// A child not yet in a map, for `init(linking:)`.
    typealias Leaf = WeightBalancedTree<ChildEntry>.Branch

    static func leaf(_ key: ChildKey, _ value: Node) -> Leaf { Leaf(ChildEntry(key: key, value: value), nil, nil) }

    /// Builds from children read in any order (later duplicates win), linking them into the
    /// tree in place (see `WeightBalancedTree.init(linking:)`).
    init(linking leaves: [Leaf]) {
        var leaves = leaves
        // Data this project wrote (snapshots, logs, the wire) is already in key order.
        if !zip(leaves, leaves.dropFirst()).allSatisfy({ ChildKey.compare($0.element.key, $1.element.key) < 0 }) {
            // Swift's sort is stable: duplicates stay in document order, so the last one is kept.
            leaves.sort { ChildKey.compare($0.element.key, $1.element.key) < 0 }
            var unique: [Leaf] = []
            unique.reserveCapacity(leaves.count)
            for leaf in leaves {
                if let last = unique.last, last.element.key == leaf.element.key { unique[unique.count - 1] = leaf } else { unique.append(leaf) }
            }
            leaves = unique
        }
        tree = WeightBalancedTree(linking: leaves)
        prioritizedCount = leaves.reduce(0) { $0 + ($1.element.value.priority == nil ? 0 : 1) }
    }

    /// Builds from entries in any order; later duplicates win.
    public init(unsorted entries: [(ChildKey, Node)]) {
        self.init(linking: entries.map { ChildMap.leaf($0.0, $0.1) })
    }

    public var count: Int { tree.count }
    public var isEmpty: Bool { tree.isEmpty }

    public subscript(key: ChildKey) -> Node? { tree.find(ChildEntry(key: key, value: .empty))?.value }
    public subscript(name: String) -> Node? { self[ChildKey(name)] }

    public func inserting(_ key: ChildKey, _ value: Node) -> ChildMap {
        var prioritized = prioritizedCount
        // Most data has no priorities: then there is nothing to look up.
        if prioritized > 0 || value.priority != nil {
            if self[key]?.priority != nil { prioritized -= 1 }
            if value.priority != nil { prioritized += 1 }
        }
        return ChildMap(tree: tree.inserting(ChildEntry(key: key, value: value)), prioritizedCount: prioritized)
    }

    /// This map with the child at each of `keys` (strictly increasing) replaced by
    /// `change(i, old)` (`old` empty when there is none; an empty result removes it).
    public func updating(sorted keys: [ChildKey], _ change: (Int, Node) -> Node) -> ChildMap {
        var prioritized = prioritizedCount
        let tree = tree.updating(sorted: keys.map { ChildEntry(key: $0, value: .empty) }) { i, old in
            let new = change(i, old?.value ?? .empty)
            if old?.value.priority != nil { prioritized -= 1 }
            if new.priority != nil { prioritized += 1 }
            return new.isEmpty ? nil : ChildEntry(key: keys[i], value: new)
        }
        return ChildMap(tree: tree, prioritizedCount: prioritized)
    }

    public func removing(_ key: ChildKey) -> ChildMap {
        let prioritized = prioritizedCount > 0 && self[key]?.priority != nil ? prioritizedCount - 1 : prioritizedCount
        return ChildMap(tree: tree.removing(ChildEntry(key: key, value: .empty)), prioritizedCount: prioritized)
    }

    public var first: (key: ChildKey, value: Node)? { tree.first.map { ($0.key, $0.value) } }
    public var last: (key: ChildKey, value: Node)? { tree.last.map { ($0.key, $0.value) } }

    /// The entry at a position in key order.
    public func element(at index: Int) -> (key: ChildKey, value: Node) {
        let e = tree.element(at: index)
        return (e.key, e.value)
    }

    /// How many keys sort before `key`.
    public func rank(of key: ChildKey) -> Int { tree.rank(of: ChildEntry(key: key, value: .empty)) }

    public static func == (a: ChildMap, b: ChildMap) -> Bool {
        if a.tree.sameStorage(as: b.tree) { return true }
        guard a.count == b.count else { return false }
        return zip(a.tree, b.tree).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public struct Iterator: IteratorProtocol {
        var base: WeightBalancedTree<ChildEntry>.Iterator
        public mutating func next() -> (key: ChildKey, value: Node)? {
            base.next().map { ($0.key, $0.value) }
        }
    }

    public func makeIterator() -> Iterator { Iterator(base: tree.makeIterator()) }

    /// Visits the children in key order; cheaper than iterating (no stack to allocate).
    public func forEachChild(_ body: (ChildKey, Node) throws -> Void) rethrows {
        try tree.forEachInOrder { try body($0.key, $0.value) }
    }

    public var keys: [ChildKey] { map { $0.key } }

    /// Checks the balance and order invariants (for tests).
    public func checkInvariants() -> Bool { tree.checkInvariants() }
}
