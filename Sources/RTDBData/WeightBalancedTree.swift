/// Elements that know their own order.
public protocol TreeElement: Sendable {
    /// Negative when `a` sorts before `b`, zero when they are the same entry.
    static func order(_ a: Self, _ b: Self) -> Int
}

/// Reads stored branches of a tree kept in a file (see `NodeFile`).
protocol BranchLoader<Element>: AnyObject, Sendable {
    associatedtype Element: TreeElement
    /// The branch stored at `offset`, whose subtree holds `size` elements: its element and its
    /// two subtrees, themselves stored. Never traps: damage gives a stand-in branch.
    func loadBranch(at offset: Int, size: Int) -> WeightBalancedTree<Element>.Branch
    /// Whether `other` reads the same stored branches (another mapping of the same file).
    func sameStorage(as other: any BranchLoader<Element>) -> Bool
}

/// A weight-balanced search tree (delta 3, ratio 2) with copy-on-write branches.
///
/// A change made in place (`modify`, `insert`, `remove`) changes the branches this tree alone
/// holds and copies the O(log n) on its path that another version shares, so old versions
/// stay valid; `updating` makes many changes in one pass, copying what it passes. Sizes kept
/// in each branch answer rank and element-at-index in O(log n). It holds a node's children
/// (`ChildMap`) and the engine's query indexes.
///
/// A subtree is either a branch in memory or a stored one, read from its file each time it is
/// visited: a tree opened from a file costs nothing until it is walked, and a change reads the
/// branches on its path into memory (where they stay), leaving the rest where it is.
///
/// The engine's query indexes, in another module, use it with `IndexEntry`: the operations
/// they call are also compiled for that element here (`@_specialize(exported:)`), where a
/// generic call from another module would run unspecialized, through witness tables (a
/// third more instructions for each write to an indexed child: `RTDBBenchmarks
/// index-updates` under callgrind).
///
/// `@unchecked Sendable`: its branches are classes, and one changes in place only while one
/// tree alone holds it (`modify`), so no other thread can see it change.
public struct WeightBalancedTree<Element: TreeElement>: @unchecked Sendable, Sequence {
    /// A branch in memory or a stored subtree; `branch` gives the top branch either way.
    class Subtree {
        final var size: Int
        final let isStored: Bool

        init(size: Int, isStored: Bool) {
            self.size = size
            self.isStored = isStored
        }

        /// The branch at the top (read from the file when stored).
        @inline(__always) final var branch: Branch {
            isStored ? unsafeDowncast(self, to: StoredSubtree.self).load() : unsafeDowncast(self, to: Branch.self)
        }
    }

    final class Branch: Subtree {
        /// A constant, so the lookups that compare with it at every level lend it rather than
        /// copy it (a copy retained the child it holds: a cache miss per level). `modify`
        /// changes an element by taking its branch apart.
        let element: Element
        var left: Subtree?
        var right: Subtree?

        init(_ element: Element, _ left: Subtree?, _ right: Subtree?) {
            self.element = element
            self.left = left
            self.right = right
            super.init(size: (left?.size ?? 0) + (right?.size ?? 0) + 1, isStored: false)
        }

        /// A branch whose subtrees are known to hold `size` elements in all.
        init(_ element: Element, _ left: Subtree?, _ right: Subtree?, size: Int) {
            self.element = element
            self.left = left
            self.right = right
            super.init(size: size, isStored: false)
        }
    }

    /// A subtree in a file, at `offset`.
    final class StoredSubtree: Subtree {
        let loader: any BranchLoader<Element>
        let offset: Int

        init(loader: any BranchLoader<Element>, offset: Int, size: Int) {
            self.loader = loader
            self.offset = offset
            super.init(size: size, isStored: true)
        }

        func load() -> Branch { loader.loadBranch(at: offset, size: size) }
    }

    var root: Subtree?

    public init() { root = nil }
    init(root: Subtree?) { self.root = root }

    /// Builds in O(n) from elements already in strictly increasing order.
    public init<C: Collection>(sorted elements: C) where C.Element == Element, C.Index == Int {
        self.init(count: elements.count) { elements[elements.startIndex + $0] }
    }

    /// Builds in O(n) from `count` elements given by position, in strictly increasing order
    /// (with no array of them: an index of a million children built one first).
    @_specialize(exported: true, where Element == IndexEntry)
    public init(count: Int, sorted element: (Int) -> Element) {
        func build(_ lo: Int, _ hi: Int) -> Branch? {
            if lo >= hi { return nil }
            let mid = (lo + hi) / 2
            let left = build(lo, mid)
            return Branch(element(mid), left, build(mid + 1, hi))
        }
        root = build(0, count)
    }

    /// The tree stored at `offset` in a file.
    init(loader: any BranchLoader<Element>, offset: Int, size: Int) {
        root = size > 0 ? StoredSubtree(loader: loader, offset: offset, size: size) : nil
    }

    public var count: Int { root?.size ?? 0 }
    public var isEmpty: Bool { root == nil }

    /// The stored element that orders equal to `probe`.
    @_specialize(exported: true, where Element == IndexEntry)
    public func find(_ probe: Element) -> Element? {
        var t = root
        while let n = t?.branch {
            let c = Element.order(probe, n.element)
            if c == 0 { return n.element }
            t = c < 0 ? n.left : n.right
        }
        return nil
    }

    /// Adds `element`, replacing an equal one.
    public func inserting(_ element: Element) -> WeightBalancedTree {
        var copy = self
        copy.insert(element)
        return copy
    }

    public func removing(_ probe: Element) -> WeightBalancedTree {
        var copy = self
        copy.remove(probe)
        return copy
    }

    /// Whether no other tree holds this one's top branch (so a change is made in place).
    mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&root) }

    /// Changes the element equal to `probe` where it is, in one descent: `change` edits it
    /// (keeping its order) and says whether it stays; `add` gives the element to put there
    /// when there is none (nil: nothing is added).
    ///
    /// A branch only this tree holds is changed in place; a branch another version shares is
    /// copied on the way down (so that version stays as it was), and a stored one is read into
    /// memory and kept there. A write to a list of a million children then allocates nothing
    /// where the path is the tree's own, where a persistent update allocated a branch per level.
    @_specialize(exported: true, where Element == IndexEntry)
    public mutating func modify(_ probe: Element, change: (inout Element) -> Bool, add: () -> Element?) {
        withoutActuallyEscaping(change) { change in
            withoutActuallyEscaping(add) { add in
                var change = change, add = add
                Self.modify(&root, probe, &change, &add)
            }
        }
    }

    /// Adds `element` in place, replacing an equal one (see `modify`).
    @_specialize(exported: true, where Element == IndexEntry)
    public mutating func insert(_ element: Element) {
        modify(element, change: { $0 = element; return true }, add: { element })
    }

    /// Removes the element equal to `probe` in place (see `modify`).
    @_specialize(exported: true, where Element == IndexEntry)
    public mutating func remove(_ probe: Element) {
        modify(probe, change: { _ in false }, add: { nil })
    }

    /// `change` and `add` are passed `inout` (by address): passed by value, the optimizer
    /// handed the values their context captured (a caller's node being written, its key)
    /// down the recursion one by one, and copied them at every level.
    /// Returns how the number of elements changed (-1, 0 or 1): when none did (a change to
    /// an element that stays), the sizes on the path stand, and the branches beside it are
    /// not visited (each a likely cache miss in a big tree).
    @discardableResult
    private static func modify(_ t: inout Subtree?, _ probe: Element, _ change: inout (inout Element) -> Bool,
                               _ add: inout () -> Element?) -> Int {
        guard t != nil else {
            guard let added = add() else { return 0 }
            assert(Element.order(added, probe) == 0, "an added element goes where its probe was looked for")
            t = Branch(added, nil, nil)
            return 1
        }
        // No name for the branch here: one held over the change below would keep its
        // element from being changed in place.
        let c = Element.order(probe, own(&t).element)
        if c == 0 {
            var (element, left, right, size) = takeApart(&t)
            guard change(&element) else {
                t = glue(left, right)
                return -1
            }
            assert(Element.order(element, probe) == 0, "a changed element keeps its place")
            t = Branch(element, left, right, size: size)
            return 0
        }
        guard let b = t.map({ unsafeDowncast($0, to: Branch.self) }) else { return 0 }
        // The subtree is moved out of the branch and back, not passed as `&b.left`: an inout
        // access to a class's property is checked at run time for as long as it lasts, and
        // the checks of nested accesses grow with the depth.
        let delta: Int
        if c < 0 {
            var left = b.left.take()
            delta = modify(&left, probe, &change, &add)
            b.left = left
        } else {
            var right = b.right.take()
            delta = modify(&right, probe, &change, &add)
            b.right = right
        }
        guard delta != 0 else { return 0 }
        b.size += delta
        let ls = size(b.left), rs = size(b.right)
        if ls + rs > 1 && (rs > self.delta * ls || ls > self.delta * rs) { t = balance(b.element, b.left, b.right) }
        return delta
    }

    /// The element, subtrees and size of the branch at `t`, which this tree owns (`own`),
    /// leaving nil there: the branch is freed on return, so they are held once, and the
    /// element changes in place.
    private static func takeApart(_ t: inout Subtree?) -> (Element, Subtree?, Subtree?, Int) {
        guard let node = t else { preconditionFailure("takeApart is called on an owned branch") }
        let b = unsafeDowncast(node, to: Branch.self)
        t = nil
        return (b.element, b.left, b.right, b.size)
    }

    /// The branch at `t` (not nil), made this tree's own: in place when nothing else holds
    /// it, else a copy in memory (of a shared branch) or the branch read from the file (of a
    /// stored one, read fresh at each visit, so no one else holds it).
    @inline(__always) private static func own(_ t: inout Subtree?) -> Branch {
        if isKnownUniquelyReferenced(&t), let node = t, !node.isStored { return unsafeDowncast(node, to: Branch.self) }
        guard let node = t else { preconditionFailure("own is called on a subtree") }
        let copy: Branch
        if node.isStored {
            copy = unsafeDowncast(node, to: StoredSubtree.self).load()
        } else {
            let shared = unsafeDowncast(node, to: Branch.self)
            copy = Branch(shared.element, shared.left, shared.right)
        }
        t = copy
        return copy
    }

    /// Changes an element for each of `probes` (in strictly increasing order), in one pass:
    /// `change(i, &element)` edits the element equal to probe `i` (keeping its order) and
    /// says whether it stays; `add(i)` gives the element to put where there is none (nil:
    /// nothing). Branches are owned as in `modify` (changed in place when this tree alone
    /// holds them, else copied or read into memory); a changed element's branch is taken
    /// apart and linked again.
    ///
    /// Split around the tree's own branches and linked back, so k changes to n elements
    /// visit O(k log(n/k + 1)) branches, where k descents visit k log n (each a likely cache
    /// miss in a big tree), and elements added below one branch are built into a balanced
    /// subtree at once.
    public mutating func update(sorted probes: [Element], change: (Int, inout Element) -> Bool, add: (Int) -> Element?) {
        withoutActuallyEscaping(change) { change in
            withoutActuallyEscaping(add) { add in
                var change = change, add = add
                Self.update(&root, probes, probes.indices, &change, &add)
            }
        }
    }

    /// The closures are `inout` for the reason given at `modify`.
    private static func update(_ t: inout Subtree?, _ probes: [Element], _ range: Range<Int>,
                               _ change: inout (Int, inout Element) -> Bool, _ add: inout (Int) -> Element?) {
        if range.isEmpty { return }
        guard t != nil else {
            let added = range.compactMap { add($0) }
            t = WeightBalancedTree(count: added.count) { added[$0] }.root
            return
        }
        // The branch has no name here, for the reason given at `modify`.
        let (at, found) = firstNotBelow(probes, range, own(&t))
        if found {
            var (element, left, right, _) = takeApart(&t)
            let keep = change(at, &element)
            assert(!keep || Element.order(element, probes[at]) == 0, "a changed element keeps its place")
            update(&left, probes, range.lowerBound..<at, &change, &add)
            update(&right, probes, (at + 1)..<range.upperBound, &change, &add)
            t = keep ? link(left, element, right) : merge(left, right)
            return
        }
        guard let b = t.map({ unsafeDowncast($0, to: Branch.self) }) else { return }
        // Moved out and back, for the reason given at `modify`.
        var left = b.left.take(), right = b.right.take()
        update(&left, probes, range.lowerBound..<at, &change, &add)
        update(&right, probes, at..<range.upperBound, &change, &add)
        b.left = left
        b.right = right
        let ls = size(b.left), rs = size(b.right)
        if ls + rs <= 1 || (rs <= delta * ls && ls <= delta * rs) {
            b.size = ls + rs + 1
        } else {
            t = link(b.left, b.element, b.right)
        }
    }

    /// The first of `probes[range]` not below `branch`'s element, and whether it is equal to it.
    private static func firstNotBelow(_ probes: [Element], _ range: Range<Int>, _ branch: Branch) -> (Int, Bool) {
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi {
            let mid = (lo + hi) / 2
            if Element.order(probes[mid], branch.element) < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < range.upperBound && Element.order(probes[lo], branch.element) == 0)
    }

    /// `l`, `e` and `r` as one balanced tree, everything in `l` below `e` and in `r` above.
    private static func link(_ l: Subtree?, _ e: Element, _ r: Subtree?) -> Branch {
        guard let l else { return insert(r, e) }
        guard let r else { return insert(l, e) }
        if delta * l.size < r.size, case let rb = r.branch { return balance(rb.element, link(l, e, rb.left), rb.right) }
        if delta * r.size < l.size, case let lb = l.branch { return balance(lb.element, lb.left, link(lb.right, e, r)) }
        return Branch(e, l, r)
    }

    /// `l` and `r` as one balanced tree, everything in `l` below everything in `r`.
    private static func merge(_ l: Subtree?, _ r: Subtree?) -> Subtree? {
        guard let l else { return r }
        guard let r else { return l }
        if delta * l.size < r.size, case let rb = r.branch { return balance(rb.element, merge(l, rb.left), rb.right) }
        if delta * r.size < l.size, case let lb = l.branch { return balance(lb.element, lb.left, merge(lb.right, r)) }
        return glue(l, r)
    }

    public var first: Element? {
        guard var t = root?.branch else { return nil }
        while let n = t.left?.branch { t = n }
        return t.element
    }

    public var last: Element? {
        guard var t = root?.branch else { return nil }
        while let n = t.right?.branch { t = n }
        return t.element
    }

    @_specialize(exported: true, where Element == IndexEntry)
    public func element(at index: Int) -> Element {
        precondition(index >= 0 && index < count, "index out of range")
        guard var t = root?.branch else { preconditionFailure("index out of range") }
        var i = index
        while true {
            // A damaged stored subtree can hold fewer elements than its parent says: the
            // nearest one stands in rather than a trap.
            let ls = Self.size(t.left)
            if i < ls, let l = t.left?.branch { t = l } else if i <= ls { return t.element } else if let r = t.right?.branch {
                i -= ls + 1
                t = r
            } else {
                return t.element
            }
        }
    }

    /// How many elements sort before `probe`.
    public func rank(of probe: Element) -> Int {
        rank { Element.order(probe, $0) }
    }

    /// How many elements sort before a position described by `compare(position, element)`.
    @_specialize(exported: true, where Element == IndexEntry)
    public func rank(_ compare: (Element) -> Int) -> Int {
        var t = root
        var r = 0
        while let n = t?.branch {
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
        init(_ root: Subtree?) {
            stack.reserveCapacity(48)
            pushLeft(root)
        }
        mutating func pushLeft(_ t: Subtree?) {
            var t = t
            while let n = t?.branch { stack.append(n); t = n.left }
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

    /// Visits the elements at the positions in `range`, in order: each branch on the way is
    /// read once (where `element(at:)` for each position descends from the root again, and
    /// reads a stored tree's branches from the file each time).
    @_specialize(exported: true, where Element == IndexEntry)
    public func forEachInOrder(in range: Range<Int>, _ body: (Element) throws -> Void) rethrows {
        guard let root, !range.isEmpty else { return }
        try withExtendedLifetime(self) { try Self.visit(Unmanaged.passUnretained(root), range, first: 0, body) }
    }

    /// `first`: the position of the subtree's first element.
    private static func visit(_ subtree: Unmanaged<Subtree>, _ range: Range<Int>, first: Int, _ body: (Element) throws -> Void) rethrows {
        try subtree._withUnsafeGuaranteedRef { subtree in
            if subtree.isStored {
                let branch = unsafeDowncast(subtree, to: StoredSubtree.self).load()
                try visit(Unmanaged.passUnretained(branch), range, first: first, body)
                return
            }
            let branch = unsafeDowncast(subtree, to: Branch.self)
            let here = first + size(branch.left)
            if range.lowerBound < here, let left = branch.left.map(Unmanaged.passUnretained) { try visit(left, range, first: first, body) }
            if range.contains(here) { try body(branch.element) }
            if range.upperBound > here + 1, let right = branch.right.map(Unmanaged.passUnretained) { try visit(right, range, first: here + 1, body) }
        }
    }

    /// Unretained: the tree (held above for the whole walk) keeps every branch in memory
    /// alive, and a retain and release per branch visited was most of a walk's cost. A stored
    /// branch is read into a local that keeps it for its own visit.
    private static func visit(_ subtree: Unmanaged<Subtree>, _ body: (Element) throws -> Void) rethrows {
        try subtree._withUnsafeGuaranteedRef { subtree in
            if subtree.isStored {
                let branch = unsafeDowncast(subtree, to: StoredSubtree.self).load()
                try visit(Unmanaged.passUnretained(branch), body)
                return
            }
            let branch = unsafeDowncast(subtree, to: Branch.self)
            if let left = branch.left.map(Unmanaged.passUnretained) { try visit(left, body) }
            try body(branch.element)
            if let right = branch.right.map(Unmanaged.passUnretained) { try visit(right, body) }
        }
    }

    /// Whether both trees are the same storage: the same branch in memory, or the same
    /// place in the same file.
    func sameStorage(as other: WeightBalancedTree) -> Bool {
        if root === other.root { return true }
        guard let a = root, let b = other.root, a.isStored, b.isStored else { return false }
        let x = unsafeDowncast(a, to: StoredSubtree.self), y = unsafeDowncast(b, to: StoredSubtree.self)
        return x.offset == y.offset && x.loader.sameStorage(as: y.loader)
    }

    /// The stored subtree at the top, for a writer that keeps what a file already holds.
    var storedRoot: (loader: any BranchLoader<Element>, offset: Int)? {
        guard let root, root.isStored else { return nil }
        let stored = unsafeDowncast(root, to: StoredSubtree.self)
        return (stored.loader, stored.offset)
    }

    /// The top branch's element and its two subtrees as trees (for a writer walking a tree).
    var top: (element: Element, left: WeightBalancedTree, right: WeightBalancedTree)? {
        guard let branch = root?.branch else { return nil }
        return (branch.element, WeightBalancedTree(root: branch.left), WeightBalancedTree(root: branch.right))
    }

    // MARK: Balancing

    private static var delta: Int { 3 }
    private static var ratio: Int { 2 }

    @inline(__always) private static func size(_ t: Subtree?) -> Int { t?.size ?? 0 }

    private static func insert(_ t: Subtree?, _ e: Element) -> Branch {
        guard let t = t?.branch else { return Branch(e, nil, nil) }
        let c = Element.order(e, t.element)
        if c == 0 { return Branch(e, t.left, t.right) }
        if c < 0 { return balance(t.element, insert(t.left, e), t.right) }
        return balance(t.element, t.left, insert(t.right, e))
    }

    private static func glue(_ l: Subtree?, _ r: Subtree?) -> Subtree? {
        guard let l else { return r }
        guard let r else { return l }
        if l.size > r.size {
            let (e, rest) = removeMax(l.branch)
            return balance(e, rest, r)
        } else {
            let (e, rest) = removeMin(r.branch)
            return balance(e, l, rest)
        }
    }

    private static func removeMin(_ t: Branch) -> (Element, Subtree?) {
        guard let l = t.left?.branch else { return (t.element, t.right) }
        let (e, rest) = removeMin(l)
        return (e, balance(t.element, rest, t.right))
    }

    private static func removeMax(_ t: Branch) -> (Element, Subtree?) {
        guard let r = t.right?.branch else { return (t.element, t.left) }
        let (e, rest) = removeMax(r)
        return (e, balance(t.element, t.left, rest))
    }

    private static func balance(_ e: Element, _ l: Subtree?, _ r: Subtree?) -> Branch {
        let ls = size(l), rs = size(r)
        if ls + rs <= 1 { return Branch(e, l, r) }
        if rs > delta * ls, let r = r?.branch { return rotateLeft(e, l, r) }
        if ls > delta * rs, let l = l?.branch { return rotateRight(e, l, r) }
        return Branch(e, l, r)
    }

    private static func rotateLeft(_ e: Element, _ l: Subtree?, _ r: Branch) -> Branch {
        if size(r.left) < ratio * size(r.right) {
            return Branch(r.element, Branch(e, l, r.left), r.right)
        }
        guard let rl = r.left?.branch else { return Branch(e, l, r) }
        return Branch(rl.element, Branch(e, l, rl.left), Branch(r.element, rl.right, r.right))
    }

    private static func rotateRight(_ e: Element, _ l: Branch, _ r: Subtree?) -> Branch {
        if size(l.right) < ratio * size(l.left) {
            return Branch(l.element, l.left, Branch(e, l.right, r))
        }
        guard let lr = l.right?.branch else { return Branch(e, l, r) }
        return Branch(lr.element, Branch(l.element, l.left, lr.left), Branch(e, lr.right, r))
    }

    /// Checks the balance and order invariants (for tests).
    public func checkInvariants() -> Bool {
        func check(_ t: Subtree?, _ lo: Element?, _ hi: Element?) -> Bool {
            guard let t = t?.branch else { return true }
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
