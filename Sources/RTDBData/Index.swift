/// An ordering of a node's children: the four orderings of queries.
///
/// Every ordering breaks ties by key order, so it is a total order on a node's children.
public enum Index: Hashable, Sendable, CustomStringConvertible {
    case priority
    case key
    case value
    case child(Path)

    public var description: String {
        switch self {
        case .priority: return ".priority"
        case .key: return ".key"
        case .value: return ".value"
        case .child(let p): return p.wireString
        }
    }

    /// The ordering `description` names: `.priority`, `.key`, `.value`, or else a child path.
    public init(name: String) {
        switch name {
        case ".key": self = .key
        case ".value": self = .value
        case ".priority": self = .priority
        default: self = .child(Path(name))
        }
    }

    /// The value a child is ordered by under this index.
    public func orderingValue(of node: Node) -> Node {
        switch self {
        case .priority: return node.priority.map { Node($0) } ?? .empty
        case .key: return .empty
        case .value: return node
        case .child(let path): return node.child(at: path)
        }
    }

    /// Compares two children (key and node) under this index.
    public func compare(_ a: (key: ChildKey, node: Node), _ b: (key: ChildKey, node: Node)) -> Int {
        if self != .key {
            let c = Index.compareValues(orderingValue(of: a.node), orderingValue(of: b.node))
            if c != 0 { return c }
        }
        return ChildKey.compare(a.key, b.key)
    }

    /// Compares an ordering value and key directly (for query bounds), `value` already extracted.
    public func compare(value a: Node, key ka: ChildKey, value b: Node, key kb: ChildKey) -> Int {
        if self != .key {
            let c = Index.compareValues(a, b)
            if c != 0 { return c }
        }
        return ChildKey.compare(ka, kb)
    }

    /// Value order: null < false < true < numbers < strings < objects (objects tie).
    public static func compareValues(_ a: Node, _ b: Node) -> Int {
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a.content, b.content) {
        case (.leaf(.number(let x)), .leaf(.number(let y))): return x == y ? 0 : (x < y ? -1 : 1)
        case (.leaf(.string(let x)), .leaf(.string(let y))): return ChildKey.compareUTF16(x, y)
        default: return 0
        }
    }

    private static func rank(_ n: Node) -> Int {
        switch n.content {
        case .empty: return 0
        case .leaf(.serverValue): return 1
        case .leaf(.bool(false)): return 2
        case .leaf(.bool(true)): return 3
        case .leaf(.number): return 4
        case .leaf(.string): return 5
        case .children: return 6
        }
    }

    /// The children of `node` sorted by this index.
    public func sortedChildren(of node: Node) -> [(key: ChildKey, node: Node)] {
        let entries = node.children.map { (key: $0.key, node: $0.value) }
        if self == .key { return entries }
        if self == .priority && node.children.prioritizedCount == 0 { return entries }
        let values = entries.map { orderingValue(of: $0.node) }
        return Index.sortedPositions(count: values.count) { values[$0] }.map { entries[$0] }
    }

    /// The positions `0..<count` in the order of their values (`value(i)`), ties in position
    /// order: for the ordering values of children listed in key order, their positions in
    /// this index's order.
    ///
    /// Each value is reduced to a rank and, for a number, its bits in an order-preserving
    /// form, so sorting compares integers and reads a node only to compare two strings; a
    /// comparison of nodes made sorting a million children take over a second.
    public static func sortedPositions(count: Int, _ value: (Int) -> Node) -> [Int] {
        struct SortKey {
            var rank: UInt8
            var bits: UInt64  // a number's order-preserving bits; 0 otherwise
            var position: Int
        }
        let stringRank = rank(Node(""))
        var keys: [SortKey] = []
        keys.reserveCapacity(count)
        for position in 0..<count {
            let value = value(position)
            guard case .leaf(.number(let x)) = value.content else {
                keys.append(SortKey(rank: UInt8(rank(value)), bits: 0, position: position))
                continue
            }
            // IEEE bits ordered as integers: flip all of a negative, the sign of a positive
            // (−0 counts as 0, as it compares equal).
            let raw = (x == 0 ? 0.0 : x).bitPattern
            keys.append(SortKey(rank: UInt8(rank(value)), bits: raw >> 63 == 1 ? ~raw : raw | (1 << 63), position: position))
        }
        keys.sort { a, b in
            if a.rank != b.rank { return a.rank < b.rank }
            if a.bits != b.bits { return a.bits < b.bits }
            if a.rank == stringRank, case .leaf(.string(let x)) = value(a.position).content,
               case .leaf(.string(let y)) = value(b.position).content {
                let c = ChildKey.compareUTF16(x, y)
                if c != 0 { return c < 0 }
            }
            return a.position < b.position
        }
        return keys.map(\.position)
    }
}
