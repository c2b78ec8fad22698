/// A server value placeholder, resolved by the server at write time.
public enum ServerValue: Hashable, Sendable {
    case timestamp
    case increment(Double)
}

/// What a leaf holds. `serverValue` only appears in data on its way to the server.
public enum LeafValue: Hashable, Sendable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case serverValue(ServerValue)
}

/// A value in the tree: empty, a leaf, or children — each optionally with a priority.
///
/// A value with copy-on-write storage: the functional changes (`setting`, `merging`) return a
/// new node that shares every unchanged part with the old one; the mutating ones (`set`,
/// `merge`) change in place the parts no other copy holds, and copy only those another copy
/// shares. Empty nodes never carry a priority, and a node whose children are all gone is empty.
public struct Node: Sendable, Equatable {
    public static let maxStringBytes = 10 * 1024 * 1024

    public enum Content: Sendable, Equatable {
        case empty
        case leaf(LeafValue)
        case children(ChildMap)
    }

    public private(set) var content: Content
    /// A number, a string or (unresolved) a server value; never set on an empty node.
    public private(set) var priority: LeafValue?

    public static let empty = Node(content: .empty, priority: nil)

    public init(content: Content, priority: LeafValue? = nil) {
        switch content {
        case .empty:
            self.content = .empty
            self.priority = nil
        case .children(let map) where map.isEmpty:
            self.content = .empty
            self.priority = nil
        default:
            self.content = content
            self.priority = priority
        }
    }

    public init(_ leaf: LeafValue, priority: LeafValue? = nil) {
        self.init(content: .leaf(leaf), priority: priority)
    }

    public init(children: ChildMap, priority: LeafValue? = nil) {
        self.init(content: .children(children), priority: priority)
    }

    public init(_ string: String) { self.init(.string(string)) }
    public init(_ number: Double) { self.init(.number(number)) }
    public init(_ bool: Bool) { self.init(.bool(bool)) }

    public var isEmpty: Bool { if case .empty = content { return true }; return false }
    public var isLeaf: Bool { if case .leaf = content { return true }; return false }

    public var leafValue: LeafValue? { if case .leaf(let v) = content { return v }; return nil }

    public var children: ChildMap {
        if case .children(let map) = content { return map }
        return ChildMap()
    }

    public var childCount: Int { children.count }

    public func child(_ key: String) -> Node {
        if key == ".priority" { return priority.map { Node($0) } ?? .empty }
        return child(ChildKey(key))
    }

    public func child(_ key: ChildKey) -> Node {
        if case .children(let map) = content { return map[key] ?? .empty }
        return .empty
    }

    public func child(at path: Path) -> Node {
        var node = self
        for key in path.keys {
            node = node.child(key)
            if node.isEmpty { return .empty }
        }
        return node
    }

    public func withPriority(_ priority: LeafValue?) -> Node {
        Node(content: content, priority: priority)
    }

    /// Replaces one child (empty removes it). Removing a child of a leaf leaves the leaf as it
    /// is; adding one turns the leaf into a children node that keeps the leaf's priority.
    public func updatingChild(_ key: ChildKey, _ node: Node) -> Node {
        modifyingChild(key) { _ in node }
    }

    /// Replaces one child with `change(old)` (`old` empty when there is none), looked up once;
    /// otherwise as `updatingChild`. The key ".priority" replaces the priority.
    public func modifyingChild(_ key: ChildKey, _ change: (Node) -> Node) -> Node {
        var copy = self
        copy.modifyChild(key) { $0 = change($0) }
        return copy
    }

    /// True when the child (or, for ".priority", the priority) is not empty; leaves have none.
    public func hasChild(_ key: String) -> Bool {
        if isLeaf { return false }
        return !child(key).isEmpty
    }

    /// Replaces the node at `path` (relative to this one). Empty removes; emptied parents vanish.
    public func setting(_ path: Path, to node: Node) -> Node {
        var copy = self
        copy.set(path, to: node)
        return copy
    }

    /// Applies a multi-path update: each entry replaces the node at its relative path, in
    /// order.
    public func merging(_ entries: [(Path, Node)]) -> Node {
        var copy = self
        copy.merge(entries)
        return copy
    }

    /// `modifyingChild`, in place: the child is changed where it is when no other copy holds
    /// it (the engine's live tree), copied only where one does.
    public mutating func modifyChild(_ key: ChildKey, _ change: (inout Node) -> Void) {
        if key.name == ".priority" {
            var node = child(key)
            change(&node)
            if !isEmpty { priority = node.leafValue }
            return
        }
        if case .children(var map) = content {
            content = .empty  // `map` alone holds the children now
            map.modify(key, change)
            if map.isEmpty { priority = nil } else { content = .children(map) }
            return
        }
        var node = Node.empty
        change(&node)
        if !node.isEmpty { content = .children(ChildMap().inserting(key, node)) }
    }

    /// `setting`, in place.
    public mutating func set(_ path: Path, to node: Node) {
        set(path.keys[...], to: node)
    }

    private mutating func set(_ keys: ArraySlice<String>, to node: Node) {
        guard let first = keys.first else {
            self = node
            return
        }
        modifyChild(ChildKey(first)) { $0.set(keys.dropFirst(), to: node) }
    }

    /// `merging`, in place. Many entries below the same children are written into each list
    /// at once (see `ChildMap.update`): an update of 10,000 children of a list of a million
    /// copied and freed the list's top branches 10,000 times when written one by one.
    public mutating func merge(_ entries: [(Path, Node)]) {
        set(batch: entries.map { ($0.0.keys[...], $0.1) }[...])
    }

    private mutating func set(batch: ArraySlice<(keys: ArraySlice<String>, value: Node)>) {
        // Few entries, one on this very node, a priority, or a leaf to turn into children:
        // one at a time, in order, is simplest and as fast.
        if batch.count < 8 || isLeaf || batch.contains(where: { $0.keys.first.map { $0 == ".priority" } ?? true }) {
            for entry in batch { set(entry.keys, to: entry.value) }
            return
        }
        let (keys, byChild, starts) = Node.group(batch)
        var map = children
        content = .empty  // `map` alone holds the children now
        map.update(sorted: keys) { i, child in
            let run = byChild[starts[i]..<starts[i + 1]]
            if run.count == 1, let only = run.first {
                child.set(batch[only.at].keys.dropFirst(), to: batch[only.at].value)
            } else {
                child.set(batch: run.map { (batch[$0.at].keys.dropFirst(), batch[$0.at].value) }[...])
            }
        }
        if map.isEmpty { priority = nil } else { content = .children(map) }
    }

    /// A batch's entries by child, in key order (entries for one child keep their order):
    /// the children's keys, the entries' positions in that order, and where each child's run
    /// of them starts (with the end last).
    private static func group(_ batch: ArraySlice<(keys: ArraySlice<String>, value: Node)>)
        -> (keys: [ChildKey], byChild: [(key: ChildKey, at: Int)], starts: [Int]) {
        let byChild = batch.indices.map { (key: ChildKey(batch[$0].keys[batch[$0].keys.startIndex]), at: $0) }
            .sorted { a, b in
                let c = ChildKey.compare(a.key, b.key)
                return c != 0 ? c < 0 : a.at < b.at
            }
        var keys: [ChildKey] = [], starts: [Int] = []
        for (i, entry) in byChild.enumerated() where keys.last != entry.key {
            keys.append(entry.key)
            starts.append(i)
        }
        starts.append(byChild.count)
        return (keys, byChild, starts)
    }

    /// Children replaced by `true`, for shallow reads; leaves unchanged.
    public var shallow: Node {
        guard case .children(let map) = content else { return Node(content: content) }
        return Node(children: ChildMap(sorted: map.keys.map { ($0, Node(true)) }))
    }

    /// The key of a cut object's one child: keys cannot hold a `.`, so no data has it.
    public static let cutCountKey = ChildKey(".count")

    /// The value with every object `depth` levels below it replaced by `{".count": N}`, its
    /// number of children (leaves and priorities above the cut kept): what a query cut to a
    /// depth sends, so a tree can show a node's children without what lies below them.
    public func cut(below depth: Int) -> Node {
        guard case .children(let map) = content else { return self }
        if depth <= 0 { return Node(children: ChildMap(sorted: [(Node.cutCountKey, Node(.number(Double(map.count))))])) }
        return Node(children: ChildMap(sorted: map.map { key, child in (key, child.cut(below: depth - 1)) }), priority: priority)
    }

    /// True if any leaf or priority below is an unresolved server value.
    public var containsServerValues: Bool {
        if case .serverValue = priority { return true }
        switch content {
        case .empty: return false
        case .leaf(let v): if case .serverValue = v { return true }; return false
        case .children(let map): return !map.isValidatedText && map.contains { $0.value.containsServerValues }
        }
    }

    /// How many bytes of documents' text this value holds, in it or its children's
    /// children (0 when none: documents are not looked for further down).
    public var textCount: Int {
        guard case .children(let map) = content else { return 0 }
        if map.textCount > 0 { return map.textCount }
        guard map.count <= ChildMap.packedLimit else { return 0 }
        return map.reduce(0) { sum, child in
            guard case .children(let inner) = child.value.content else { return sum }
            return sum + inner.textCount
        }
    }

    /// The number of leaves below (1 for a leaf).
    public var leafCount: Int {
        switch content {
        case .empty: return 0
        case .leaf: return 1
        case .children(let map): return map.reduce(0) { $0 + $1.value.leafCount }
        }
    }
}
