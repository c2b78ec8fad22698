/// The children of a node: an immutable, persistent, weight-balanced search tree in key order.
///
/// Updates copy only the O(log n) nodes on the path to the change, so a list of a million
/// children costs a few allocations per write, old versions stay valid (snapshots are free),
/// and sizes kept in each node give positional access (rank, element at index) in O(log n).
public struct ChildMap: Sendable, Sequence, Equatable {
    final class Tree: @unchecked Sendable {
        let key: ChildKey
        let value: Node
        let left: Tree?
        let right: Tree?
        let size: Int

        init(_ key: ChildKey, _ value: Node, _ left: Tree?, _ right: Tree?) {
            self.key = key
            self.value = value
            self.left = left
            self.right = right
            self.size = (left?.size ?? 0) + (right?.size ?? 0) + 1
        }
    }

    var root: Tree?

    public init() { root = nil }
    init(root: Tree?) { self.root = root }

    /// Builds in O(n) from entries already in strictly increasing key order.
    public init<C: Collection>(sorted entries: C) where C.Element == (ChildKey, Node), C.Index == Int {
        func build(_ lo: Int, _ hi: Int) -> Tree? {
            if lo >= hi { return nil }
            let mid = (lo + hi) / 2
            let (k, v) = entries[mid]
            return Tree(k, v, build(lo, mid), build(mid + 1, hi))
        }
        root = build(entries.startIndex, entries.endIndex)
    }

    /// Builds from entries in any order; later duplicates win.
    public init(unsorted entries: [(ChildKey, Node)]) {
        // Data this project wrote (snapshots, logs, the wire) is already in key order.
        if zip(entries, entries.dropFirst()).allSatisfy({ ChildKey.compare($0.0, $1.0) < 0 }) {
            self.init(sorted: entries)
            return
        }
        var sorted = entries
        sorted.sort { ChildKey.compare($0.0, $1.0) < 0 }
        var unique: [(ChildKey, Node)] = []
        unique.reserveCapacity(sorted.count)
        for e in sorted {
            if let last = unique.last, last.0 == e.0 { unique[unique.count - 1] = e } else { unique.append(e) }
        }
        self.init(sorted: unique)
    }

    public var count: Int { root?.size ?? 0 }
    public var isEmpty: Bool { root == nil }

    public subscript(key: ChildKey) -> Node? {
        var t = root
        while let n = t {
            let c = ChildKey.compare(key, n.key)
            if c == 0 { return n.value }
            t = c < 0 ? n.left : n.right
        }
        return nil
    }

    public subscript(name: String) -> Node? { self[ChildKey(name)] }

    public func inserting(_ key: ChildKey, _ value: Node) -> ChildMap {
        ChildMap(root: Self.insert(root, key, value))
    }

    public func removing(_ key: ChildKey) -> ChildMap {
        ChildMap(root: Self.remove(root, key))
    }

    public var first: (key: ChildKey, value: Node)? {
        var t = root
        while let n = t?.left { t = n }
        return t.map { ($0.key, $0.value) }
    }

    public var last: (key: ChildKey, value: Node)? {
        var t = root
        while let n = t?.right { t = n }
        return t.map { ($0.key, $0.value) }
    }

    /// The entry at a position in key order.
    public func element(at index: Int) -> (key: ChildKey, value: Node) {
        precondition(index >= 0 && index < count, "index out of range")
        var t = root!
        var i = index
        while true {
            let ls = t.left?.size ?? 0
            if i < ls { t = t.left! } else if i == ls { return (t.key, t.value) } else { i -= ls + 1; t = t.right! }
        }
    }

    /// How many keys sort before `key`.
    public func rank(of key: ChildKey) -> Int {
        var t = root
        var r = 0
        while let n = t {
            let c = ChildKey.compare(key, n.key)
            if c < 0 {
                t = n.left
            } else if c == 0 {
                return r + Self.size(n.left)
            } else {
                r += Self.size(n.left) + 1
                t = n.right
            }
        }
        return r
    }

    public static func == (a: ChildMap, b: ChildMap) -> Bool {
        if a.root === b.root { return true }
        guard a.count == b.count else { return false }
        var ia = a.makeIterator(), ib = b.makeIterator()
        while let x = ia.next(), let y = ib.next() {
            if x.key != y.key || x.value != y.value { return false }
        }
        return true
    }

    // MARK: Iteration

    public struct Iterator: IteratorProtocol {
        var stack: [Tree] = []
        init(_ root: Tree?) {
            stack.reserveCapacity(48)
            pushLeft(root)
        }
        mutating func pushLeft(_ t: Tree?) {
            var t = t
            while let n = t { stack.append(n); t = n.left }
        }
        public mutating func next() -> (key: ChildKey, value: Node)? {
            guard let n = stack.popLast() else { return nil }
            pushLeft(n.right)
            return (n.key, n.value)
        }
    }

    public func makeIterator() -> Iterator { Iterator(root) }

    public var keys: [ChildKey] { map { $0.key } }

    // MARK: Balancing (weight-balanced, delta 3, ratio 2)

    private static let delta = 3
    private static let ratio = 2

    @inline(__always) private static func size(_ t: Tree?) -> Int { t?.size ?? 0 }

    private static func insert(_ t: Tree?, _ k: ChildKey, _ v: Node) -> Tree {
        guard let t else { return Tree(k, v, nil, nil) }
        let c = ChildKey.compare(k, t.key)
        if c == 0 { return Tree(k, v, t.left, t.right) }
        if c < 0 { return balance(t.key, t.value, insert(t.left, k, v), t.right) }
        return balance(t.key, t.value, t.left, insert(t.right, k, v))
    }

    private static func remove(_ t: Tree?, _ k: ChildKey) -> Tree? {
        guard let t else { return nil }
        let c = ChildKey.compare(k, t.key)
        if c < 0 {
            let l = remove(t.left, k)
            return l === t.left ? t : balance(t.key, t.value, l, t.right)
        }
        if c > 0 {
            let r = remove(t.right, k)
            return r === t.right ? t : balance(t.key, t.value, t.left, r)
        }
        return glue(t.left, t.right)
    }

    private static func glue(_ l: Tree?, _ r: Tree?) -> Tree? {
        guard let l else { return r }
        guard let r else { return l }
        if l.size > r.size {
            let (k, v, rest) = removeMax(l)
            return balance(k, v, rest, r)
        } else {
            let (k, v, rest) = removeMin(r)
            return balance(k, v, l, rest)
        }
    }

    private static func removeMin(_ t: Tree) -> (ChildKey, Node, Tree?) {
        guard let l = t.left else { return (t.key, t.value, t.right) }
        let (k, v, rest) = removeMin(l)
        return (k, v, balance(t.key, t.value, rest, t.right))
    }

    private static func removeMax(_ t: Tree) -> (ChildKey, Node, Tree?) {
        guard let r = t.right else { return (t.key, t.value, t.left) }
        let (k, v, rest) = removeMax(r)
        return (k, v, balance(t.key, t.value, t.left, rest))
    }

    private static func balance(_ k: ChildKey, _ v: Node, _ l: Tree?, _ r: Tree?) -> Tree {
        let ls = size(l), rs = size(r)
        if ls + rs <= 1 { return Tree(k, v, l, r) }
        if rs > delta * ls { return rotateLeft(k, v, l, r!) }
        if ls > delta * rs { return rotateRight(k, v, l!, r) }
        return Tree(k, v, l, r)
    }

    private static func rotateLeft(_ k: ChildKey, _ v: Node, _ l: Tree?, _ r: Tree) -> Tree {
        if size(r.left) < ratio * size(r.right) {
            return Tree(r.key, r.value, Tree(k, v, l, r.left), r.right)
        }
        let rl = r.left!
        return Tree(rl.key, rl.value, Tree(k, v, l, rl.left), Tree(r.key, r.value, rl.right, r.right))
    }

    private static func rotateRight(_ k: ChildKey, _ v: Node, _ l: Tree, _ r: Tree?) -> Tree {
        if size(l.right) < ratio * size(l.left) {
            return Tree(l.key, l.value, l.left, Tree(k, v, l.right, r))
        }
        let lr = l.right!
        return Tree(lr.key, lr.value, Tree(l.key, l.value, l.left, lr.left), Tree(k, v, lr.right, r))
    }

    /// Checks the balance and order invariants (for tests).
    public func checkInvariants() -> Bool {
        func check(_ t: Tree?, _ lo: ChildKey?, _ hi: ChildKey?) -> Bool {
            guard let t else { return true }
            if let lo, ChildKey.compare(lo, t.key) >= 0 { return false }
            if let hi, ChildKey.compare(t.key, hi) >= 0 { return false }
            let ls = Self.size(t.left), rs = Self.size(t.right)
            if ls + rs > 1 && (ls > Self.delta * rs || rs > Self.delta * ls) { return false }
            if t.size != ls + rs + 1 { return false }
            return check(t.left, lo, t.key) && check(t.right, t.key, hi)
        }
        return check(root, nil, nil)
    }
}
