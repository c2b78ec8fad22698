/// Elements that know their own order.
public protocol TreeElement: Sendable {
    /// Negative when `a` sorts before `b`, zero when they are the same entry.
    static func order(_ a: Self, _ b: Self) -> Int
}

/// An immutable, persistent, weight-balanced search tree (delta 3, ratio 2).
///
/// Updates copy only the O(log n) nodes on the path to the change, so old versions stay
/// valid, and sizes kept in each node answer rank and element-at-index in O(log n). It holds
/// a node's children (`ChildMap`) and the engine's query indexes.
public struct WeightBalancedTree<Element: TreeElement>: Sendable, Sequence {
    // Unchecked: a branch is changed only by `init(linking:)`, before any tree holds it.
    final class Branch: @unchecked Sendable {
        let element: Element
        fileprivate(set) var left: Branch?
        fileprivate(set) var right: Branch?
        fileprivate(set) var size: Int

        init(_ element: Element, _ left: Branch?, _ right: Branch?) {
            self.element = element
            self.left = left
            self.right = right
            self.size = (left?.size ?? 0) + (right?.size ?? 0) + 1
        }
    }

    var root: Branch?

    public init() { root = nil }
    init(root: Branch?) { self.root = root }

    /// Builds in O(n) from elements already in strictly increasing order.
    public init<C: Collection>(sorted elements: C) where C.Element == Element, C.Index == Int {
        func build(_ lo: Int, _ hi: Int) -> Branch? {
            if lo >= hi { return nil }
            let mid = (lo + hi) / 2
            return Branch(elements[mid], build(lo, mid), build(mid + 1, hi))
        }
        root = build(elements.startIndex, elements.endIndex)
    }

    /// Builds in O(n) from unlinked single branches whose elements are in strictly increasing
    /// order, linking them in place: a large document's children are allocated once, as the
    /// tree's own nodes, with no array of their elements beside them.
    init(linking branches: [Branch]) {
        func link(_ lo: Int, _ hi: Int) -> Branch? {
            if lo >= hi { return nil }
            let mid = (lo + hi) / 2
            let branch = branches[mid]
            branch.left = link(lo, mid)
            branch.right = link(mid + 1, hi)
            branch.size = (branch.left?.size ?? 0) + (branch.right?.size ?? 0) + 1
            return branch
        }
        root = link(branches.startIndex, branches.endIndex)
    }

    public var count: Int { root?.size ?? 0 }
    public var isEmpty: Bool { root == nil }

    /// The stored element that orders equal to `probe`.
    public func find(_ probe: Element) -> Element? {
        var t = root
        while let n = t {
            let c = Element.order(probe, n.element)
            if c == 0 { return n.element }
            t = c < 0 ? n.left : n.right
        }
        return nil
    }

    /// Adds `element`, replacing an equal one.
    public func inserting(_ element: Element) -> WeightBalancedTree {
        WeightBalancedTree(root: Self.insert(root, element))
    }

    public func removing(_ probe: Element) -> WeightBalancedTree {
        WeightBalancedTree(root: Self.remove(root, probe))
    }

    public var first: Element? {
        var t = root
        while let n = t?.left { t = n }
        return t?.element
    }

    public var last: Element? {
        var t = root
        while let n = t?.right { t = n }
        return t?.element
    }

    public func element(at index: Int) -> Element {
        precondition(index >= 0 && index < count, "index out of range")
        var t = root!
        var i = index
        while true {
            let ls = Self.size(t.left)
            if i < ls { t = t.left! } else if i == ls { return t.element } else { i -= ls + 1; t = t.right! }
        }
    }

    /// How many elements sort before `probe`.
    public func rank(of probe: Element) -> Int {
        rank { Element.order(probe, $0) }
    }

    /// How many elements sort before a position described by `compare(position, element)`.
    public func rank(_ compare: (Element) -> Int) -> Int {
        var t = root
        var r = 0
        while let n = t {
            let c = compare(n.element)
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

    // MARK: Iteration

    public struct Iterator: IteratorProtocol {
        var stack: [Branch] = []
        init(_ root: Branch?) {
            stack.reserveCapacity(48)
            pushLeft(root)
        }
        mutating func pushLeft(_ t: Branch?) {
            var t = t
            while let n = t { stack.append(n); t = n.left }
        }
        public mutating func next() -> Element? {
            guard let n = stack.popLast() else { return nil }
            pushLeft(n.right)
            return n.element
        }
    }

    public func makeIterator() -> Iterator { Iterator(root) }

    /// Visits every element in order, without the iterator's stack (an allocation per
    /// iteration, which a writer walking many small objects pays for each one). The
    /// recursion is as deep as the tree: O(log n).
    public func forEachInOrder(_ body: (Element) throws -> Void) rethrows {
        guard let root else { return }
        try withExtendedLifetime(self) { try Self.visit(Unmanaged.passUnretained(root), body) }
    }

    /// Unretained: the tree (held above for the whole walk) keeps every branch alive, and a
    /// retain and release per branch visited was most of a walk's cost.
    private static func visit(_ branch: Unmanaged<Branch>, _ body: (Element) throws -> Void) rethrows {
        try branch._withUnsafeGuaranteedRef { branch in
            if let left = branch.left.map(Unmanaged.passUnretained) { try visit(left, body) }
            try body(branch.element)
            if let right = branch.right.map(Unmanaged.passUnretained) { try visit(right, body) }
        }
    }

    func sameStorage(as other: WeightBalancedTree) -> Bool { root === other.root }

    // MARK: Balancing

    private static var delta: Int { 3 }
    private static var ratio: Int { 2 }

    @inline(__always) private static func size(_ t: Branch?) -> Int { t?.size ?? 0 }

    private static func insert(_ t: Branch?, _ e: Element) -> Branch {
        guard let t else { return Branch(e, nil, nil) }
        let c = Element.order(e, t.element)
        if c == 0 { return Branch(e, t.left, t.right) }
        if c < 0 { return balance(t.element, insert(t.left, e), t.right) }
        return balance(t.element, t.left, insert(t.right, e))
    }

    private static func remove(_ t: Branch?, _ e: Element) -> Branch? {
        guard let t else { return nil }
        let c = Element.order(e, t.element)
        if c < 0 {
            let l = remove(t.left, e)
            return l === t.left ? t : balance(t.element, l, t.right)
        }
        if c > 0 {
            let r = remove(t.right, e)
            return r === t.right ? t : balance(t.element, t.left, r)
        }
        return glue(t.left, t.right)
    }

    private static func glue(_ l: Branch?, _ r: Branch?) -> Branch? {
        guard let l else { return r }
        guard let r else { return l }
        if l.size > r.size {
            let (e, rest) = removeMax(l)
            return balance(e, rest, r)
        } else {
            let (e, rest) = removeMin(r)
            return balance(e, l, rest)
        }
    }

    private static func removeMin(_ t: Branch) -> (Element, Branch?) {
        guard let l = t.left else { return (t.element, t.right) }
        let (e, rest) = removeMin(l)
        return (e, balance(t.element, rest, t.right))
    }

    private static func removeMax(_ t: Branch) -> (Element, Branch?) {
        guard let r = t.right else { return (t.element, t.left) }
        let (e, rest) = removeMax(r)
        return (e, balance(t.element, t.left, rest))
    }

    private static func balance(_ e: Element, _ l: Branch?, _ r: Branch?) -> Branch {
        let ls = size(l), rs = size(r)
        if ls + rs <= 1 { return Branch(e, l, r) }
        if rs > delta * ls { return rotateLeft(e, l, r!) }
        if ls > delta * rs { return rotateRight(e, l!, r) }
        return Branch(e, l, r)
    }

    private static func rotateLeft(_ e: Element, _ l: Branch?, _ r: Branch) -> Branch {
        if size(r.left) < ratio * size(r.right) {
            return Branch(r.element, Branch(e, l, r.left), r.right)
        }
        let rl = r.left!
        return Branch(rl.element, Branch(e, l, rl.left), Branch(r.element, rl.right, r.right))
    }

    private static func rotateRight(_ e: Element, _ l: Branch, _ r: Branch?) -> Branch {
        if size(l.right) < ratio * size(l.left) {
            return Branch(l.element, l.left, Branch(e, l.right, r))
        }
        let lr = l.right!
        return Branch(lr.element, Branch(l.element, l.left, lr.left), Branch(e, lr.right, r))
    }

    /// Checks the balance and order invariants (for tests).
    public func checkInvariants() -> Bool {
        func check(_ t: Branch?, _ lo: Element?, _ hi: Element?) -> Bool {
            guard let t else { return true }
            if let lo, Element.order(lo, t.element) >= 0 { return false }
            if let hi, Element.order(t.element, hi) >= 0 { return false }
            let ls = Self.size(t.left), rs = Self.size(t.right)
            if ls + rs > 1 && (ls > Self.delta * rs || rs > Self.delta * ls) { return false }
            if t.size != ls + rs + 1 { return false }
            return check(t.left, lo, t.element) && check(t.right, t.element, hi)
        }
        return check(root, nil, nil)
    }
}
