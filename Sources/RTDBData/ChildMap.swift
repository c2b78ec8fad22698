/// One child: its key and its node, ordered by key.
public struct ChildEntry: TreeElement {
    public let key: ChildKey
    public internal(set) var value: Node
    // Inlined, so a tree comparing its probe with a branch reads only the branch's key: a call
    // took a copy of the whole entry, and retained (a cache miss) the child it holds.
    @inline(__always)
    public static func order(_ a: ChildEntry, _ b: ChildEntry) -> Int { ChildKey.compare(a.key, b.key) }
}

/// The children of a node, in key order.
///
/// A few children (at most `packedLimit`, most objects in real data) are one sorted array:
/// one allocation for all of them, where a tree takes one per child, and a walk is a loop.
/// More are a persistent weight-balanced tree, so a write to a list of a million children
/// copies O(log n) tree nodes and old versions stay valid. A tree read from a file stays a
/// tree (only the branches a change passes through are copied), whatever its size. Many
/// read from a large JSON text stay that text (`EncodedChildren`) until a change.
public struct ChildMap: Sendable, Sequence, Equatable {
    /// Above this many children, an array's copy on each change costs more than a tree's path.
    static let packedLimit = 16

    enum Storage: Sendable {
        /// Strictly increasing keys, no empty values, at most `packedLimit` of them.
        case packed(ContiguousArray<ChildEntry>)
        case tree(WeightBalancedTree<ChildEntry>)
        /// More than `packedLimit`, still in a document's text; read into a tree to change.
        case encoded(EncodedChildren)
    }

    var storage: Storage
    /// How many children have a priority. With none, priority order is key order, which
    /// views then answer in O(log n) instead of scanning the children.
    public private(set) var prioritizedCount: Int

    public init() {
        storage = .packed([])
        prioritizedCount = 0
    }

    /// Children in a document's text: none has a priority (a document holds none).
    init(encoded: EncodedChildren) {
        storage = .encoded(encoded)
        prioritizedCount = 0
    }

    /// The text, when these children are still a document's and it may be written as it is
    /// in `form`.
    func withText<R>(_ form: EncodedChildren.TextForm, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard case .encoded(let encoded) = storage else { return nil }
        return encoded.withText(form, body)
    }

    /// The whole text of the document these children are, shared, when they are all of it
    /// and it may be written as it is in `form`.
    func wholeText(_ form: EncodedChildren.TextForm) -> [UInt8]? {
        guard case .encoded(let encoded) = storage else { return nil }
        return encoded.wholeText(form)
    }

    /// How many bytes of a document's text these children are (0 when they are not).
    var textCount: Int {
        guard case .encoded(let encoded) = storage else { return 0 }
        return encoded.container.end - encoded.container.start
    }

    /// Whether these children are still a document's text, which was checked as it came in:
    /// no priority, no server value, every number finite, every key valid.
    var isValidatedText: Bool {
        if case .encoded = storage { return true }
        return false
    }

    /// The longest path below, relative to this map, when it is a document's text (known
    /// without reading it).
    var textExtent: (depth: Int, pathBytes: Int)? {
        guard case .encoded(let encoded) = storage else { return nil }
        return (encoded.container.depth, encoded.container.pathBytes)
    }

    /// Reads a document's children into a tree, before a change.
    private mutating func readText() {
        if case .encoded(let encoded) = storage { storage = .tree(encoded.tree()) }
    }

    init(tree: WeightBalancedTree<ChildEntry>, prioritizedCount: Int) {
        storage = .tree(tree)
        self.prioritizedCount = prioritizedCount
    }

    /// Entries in strictly increasing key order, packed or as a tree by their number.
    init(sortedEntries entries: ContiguousArray<ChildEntry>, prioritizedCount: Int) {
        storage = entries.count <= ChildMap.packedLimit ? .packed(entries) : .tree(WeightBalancedTree(sorted: entries))
        self.prioritizedCount = prioritizedCount
    }

    /// Builds in O(n) from entries already in strictly increasing key order.
    public init<C: Collection>(sorted entries: C) where C.Element == (ChildKey, Node), C.Index == Int {
        let entries = ContiguousArray(entries.lazy.map { ChildEntry(key: $0.0, value: $0.1) })
        self.init(sortedEntries: entries, prioritizedCount: ChildMap.countPrioritized(entries))
    }

    /// Builds from entries in any order; later duplicates win.
    public init(unsorted entries: [(ChildKey, Node)]) {
        let buffer = UnsafeMutableBufferPointer<ChildEntry>.allocate(capacity: entries.count)
        defer { buffer.deallocate() }
        let (_, initialized) = buffer.initialize(from: entries.lazy.map { ChildEntry(key: $0.0, value: $0.1) })
        precondition(initialized == entries.count, "an array gives as many elements as it counts")
        self.init(movingFrom: buffer)
    }

    /// Builds from children read in any order (later duplicates win): a document's object.
    /// Takes the entries out of `buffer`, which is left uninitialized: each is moved once, to
    /// its place in the map (a copy retains and later releases its key and value).
    init(movingFrom buffer: UnsafeMutableBufferPointer<ChildEntry>) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            self.init()
            return
        }
        var kept = buffer.count
        if ChildMap.sortFindingDuplicates(buffer) {
            // The sort is stable: of equal keys, the one read last is last, and is kept.
            kept = 0
            for i in buffer.indices {
                if kept > 0 && ChildKey.compare(buffer[kept - 1].key, buffer[i].key) == 0 {
                    buffer.swapAt(kept - 1, i)
                } else {
                    buffer.swapAt(kept, i)
                    kept += 1
                }
            }
            (base + kept).deinitialize(count: buffer.count - kept)
        }
        let prioritized = ChildMap.countPrioritized(buffer[..<kept])
        if kept <= ChildMap.packedLimit {
            // Reserved, then appended: an array made with `unsafeUninitializedCapacity` went
            // through the standard library's unspecialized code, which looked the storage's
            // type up at every map made.
            var entries = ContiguousArray<ChildEntry>()
            entries.reserveCapacity(kept)
            for i in 0..<kept { entries.append((base + i).move()) }
            self.init(sortedEntries: entries, prioritizedCount: prioritized)
        } else {
            // `build` asks for each position once.
            self.init(tree: WeightBalancedTree(count: kept) { (base + $0).move() }, prioritizedCount: prioritized)
        }
    }

    /// Sorts by key, stably; true when two keys are equal.
    private static func sortFindingDuplicates(_ buffer: UnsafeMutableBufferPointer<ChildEntry>) -> Bool {
        guard let base = buffer.baseAddress else { return false }
        if buffer.count > packedLimit {
            // Data this project wrote (snapshots, logs, the wire) is already in key order.
            var sorted = true
            for i in buffer.indices.dropFirst() where ChildKey.compare(base[i - 1].key, base[i].key) >= 0 {
                sorted = false
                break
            }
            return sorted ? false : sortByPositions(buffer)
        }
        // An object's few keys: an insertion sort that moves entries rather than copying
        // them (a copy retains, and a sorted input costs only its n - 1 comparisons).
        var duplicates = false
        for i in buffer.indices.dropFirst() {
            var j = i
            while j > 0 {
                let c = ChildKey.compare(base[j - 1].key, base[i].key)
                if c == 0 { duplicates = true }
                if c <= 0 { break }
                j -= 1
            }
            if j < i {
                let moving = (base + i).move()
                (base + j + 1).moveInitialize(from: base + j, count: i - j)
                (base + j).initialize(to: moving)
            }
        }
        return duplicates
    }

    /// A big list's sort: the positions are sorted (ties by position, so it is stable), then
    /// each entry is moved once to its place. Sorting the entries themselves copied (and so
    /// retained and released) each one at every step of the merge.
    private static func sortByPositions(_ buffer: UnsafeMutableBufferPointer<ChildEntry>) -> Bool {
        guard let base = buffer.baseAddress else { return false }
        var order = ContiguousArray<Int>(buffer.indices)
        order.sort { a, b in
            let c = ChildKey.compare(base[a].key, base[b].key)
            return c < 0 || (c == 0 && a < b)
        }
        var duplicates = false
        for k in order.indices.dropFirst() where ChildKey.compare(base[order[k - 1]].key, base[order[k]].key) == 0 {
            duplicates = true
            break
        }
        // Place k takes the entry at order[k]; each cycle of that permutation is walked
        // once, the place it starts from held aside. A place done is marked with -1.
        for start in order.indices where order[start] >= 0 {
            guard order[start] != start else { continue }
            let held = (base + start).move()
            var place = start
            while true {
                let from = order[place]
                order[place] = -1
                if from == start {
                    (base + place).initialize(to: held)
                    break
                }
                (base + place).moveInitialize(from: base + from, count: 1)
                place = from
            }
        }
        return duplicates
    }

    /// Keeps `count`, the children with a priority, as the child `old` gives way to `new`.
    private static func recount(_ count: inout Int, _ old: Node?, _ new: Node) {
        if old?.priority != nil { count -= 1 }
        if new.priority != nil { count += 1 }
    }

    private static func countPrioritized(_ entries: some Collection<ChildEntry>) -> Int {
        var n = 0
        for entry in entries where entry.value.priority != nil { n += 1 }
        return n
    }

    public var count: Int {
        switch storage {
        case .packed(let entries): return entries.count
        case .tree(let tree): return tree.count
        case .encoded(let encoded): return encoded.count
        }
    }

    public var isEmpty: Bool { count == 0 }

    /// Where `key` is in a packed array, or where it would go.
    private static func search(_ entries: ContiguousArray<ChildEntry>, _ key: ChildKey) -> (index: Int, found: Bool) {
        search(key, count: entries.count) { entries[$0].key }
    }

    /// Where `key` is among `count` keys in key order (`keyAt(i)` the i-th), or where it
    /// would go: the one binary search of every storage that is not a tree.
    @inline(__always)
    static func search(_ key: ChildKey, count: Int, keyAt: (Int) -> ChildKey) -> (index: Int, found: Bool) {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = ChildKey.compare(keyAt(mid), key)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    public subscript(key: ChildKey) -> Node? {
        switch storage {
        case .packed(let entries):
            let at = ChildMap.search(entries, key)
            return at.found ? entries[at.index].value : nil
        case .tree(let tree):
            return tree.find(ChildEntry(key: key, value: .empty))?.value
        case .encoded(let encoded):
            return encoded[key]
        }
    }

    public subscript(name: String) -> Node? { self[ChildKey(name)] }

    /// This map with `value` at `key` (an empty value removes the child).
    public func inserting(_ key: ChildKey, _ value: Node) -> ChildMap { modifying(key) { _ in value } }

    public func removing(_ key: ChildKey) -> ChildMap { modifying(key) { _ in .empty } }

    /// This map with the child at `key` replaced by `change(old)` (`old` empty when there is
    /// none; an empty result removes it), looked up once.
    public func modifying(_ key: ChildKey, _ change: (Node) -> Node) -> ChildMap {
        var copy = self
        copy.modify(key) { $0 = change($0) }
        return copy
    }

    /// Changes the child at `key` where it is: `change` gets it (empty when there is none)
    /// and edits it; an empty result removes it. Storage only this map holds is changed in
    /// place (see `WeightBalancedTree.modify`), so a child no one else holds is too.
    public mutating func modify(_ key: ChildKey, _ change: (inout Node) -> Void) {
        readText()
        var prioritized = prioritizedCount
        defer { prioritizedCount = prioritized }
        switch storage {
        case .packed(var entries):
            storage = .packed([])  // `entries` alone holds the array now
            let at = ChildMap.search(entries, key)
            if at.found {
                let had = entries[at.index].value.priority != nil
                change(&entries[at.index].value)
                if had { prioritized -= 1 }
                if entries[at.index].value.priority != nil { prioritized += 1 }
                if entries[at.index].value.isEmpty { entries.remove(at: at.index) }
                storage = .packed(entries)
                return
            }
            var node = Node.empty
            change(&node)
            if !node.isEmpty {
                if node.priority != nil { prioritized += 1 }
                entries.insert(ChildEntry(key: key, value: node), at: at.index)
            }
            storage = entries.count <= ChildMap.packedLimit ? .packed(entries) : .tree(WeightBalancedTree(sorted: entries))
        case .tree(var tree):
            storage = .packed([])
            tree.modify(ChildEntry(key: key, value: .empty), change: { entry in
                if entry.value.priority != nil { prioritized -= 1 }
                change(&entry.value)
                if entry.value.priority != nil { prioritized += 1 }
                return !entry.value.isEmpty
            }, add: {
                var node = Node.empty
                change(&node)
                if node.priority != nil { prioritized += 1 }
                return node.isEmpty ? nil : ChildEntry(key: key, value: node)
            })
            storage = .tree(tree)
        case .encoded:
            preconditionFailure("read into a tree above")
        }
    }

    /// This map with the child at each of `keys` (strictly increasing) replaced by
    /// `change(i, old)` (`old` empty when there is none; an empty result removes it).
    public func updating(sorted keys: [ChildKey], _ change: (Int, Node) -> Node) -> ChildMap {
        var copy = self
        copy.update(sorted: keys) { i, node in node = change(i, node) }
        return copy
    }

    /// Changes the child at each of `keys` (strictly increasing) where it is: `change(i, &node)`
    /// gets the position of the key and the child (empty when there is none) and edits it; an
    /// empty result removes it. In one pass over the map (see `WeightBalancedTree.update`).
    public mutating func update(sorted keys: [ChildKey], _ change: (Int, inout Node) -> Void) {
        readText()
        var prioritized = prioritizedCount
        switch storage {
        case .packed(var entries):
            storage = .packed([])
            var out = ContiguousArray<ChildEntry>()
            out.reserveCapacity(entries.count + keys.count)
            var i = 0
            for (k, key) in keys.enumerated() {
                while i < entries.count && ChildKey.compare(entries[i].key, key) < 0 {
                    out.append(entries[i])
                    i += 1
                }
                var node = Node.empty
                if i < entries.count && ChildKey.compare(entries[i].key, key) == 0 {
                    swap(&node, &entries[i].value)  // the child alone holds what it held
                    i += 1
                }
                if node.priority != nil { prioritized -= 1 }
                change(k, &node)
                if node.priority != nil { prioritized += 1 }
                if !node.isEmpty { out.append(ChildEntry(key: key, value: node)) }
            }
            out.append(contentsOf: entries[i...])
            self = ChildMap(sortedEntries: out, prioritizedCount: prioritized)
        case .tree(var tree):
            storage = .packed([])
            tree.update(sorted: keys.map { ChildEntry(key: $0, value: .empty) }, change: { i, entry in
                if entry.value.priority != nil { prioritized -= 1 }
                change(i, &entry.value)
                if entry.value.priority != nil { prioritized += 1 }
                return !entry.value.isEmpty
            }, add: { i in
                var node = Node.empty
                change(i, &node)
                if node.priority != nil { prioritized += 1 }
                return node.isEmpty ? nil : ChildEntry(key: keys[i], value: node)
            })
            self = ChildMap(tree: tree, prioritizedCount: prioritized)
        case .encoded:
            preconditionFailure("read into a tree above")
        }
    }

    public var first: (key: ChildKey, value: Node)? {
        switch storage {
        case .packed(let entries): return entries.first.map { ($0.key, $0.value) }
        case .tree(let tree): return tree.first.map { ($0.key, $0.value) }
        case .encoded(let encoded): return encoded.count == 0 ? nil : { let e = encoded.entry(at: 0); return (e.key, e.value) }()
        }
    }

    public var last: (key: ChildKey, value: Node)? {
        switch storage {
        case .packed(let entries): return entries.last.map { ($0.key, $0.value) }
        case .tree(let tree): return tree.last.map { ($0.key, $0.value) }
        case .encoded(let encoded): return encoded.count == 0 ? nil : { let e = encoded.entry(at: encoded.count - 1); return (e.key, e.value) }()
        }
    }

    /// The largest key, without copying its child.
    public var lastKey: ChildKey? {
        switch storage {
        case .packed(let entries): return entries.last?.key
        case .tree(let tree): return tree.last?.key
        case .encoded(let encoded): return encoded.count == 0 ? nil : encoded.key(at: encoded.count - 1)
        }
    }

    /// The entry at a position in key order.
    public func element(at index: Int) -> (key: ChildKey, value: Node) {
        let e: ChildEntry
        switch storage {
        case .packed(let entries): e = entries[index]
        case .tree(let tree): e = tree.element(at: index)
        case .encoded(let encoded): e = encoded.entry(at: index)
        }
        return (e.key, e.value)
    }

    /// The entries at the positions in `range` (in key order), each found once: a tree's
    /// branches are read once for the whole range, not once per entry.
    public func forEach(in range: Range<Int>, _ body: (ChildKey, Node) throws -> Void) rethrows {
        switch storage {
        case .packed(let entries):
            for e in entries[range.clamped(to: entries.indices)] { try body(e.key, e.value) }
        case .tree(let tree):
            try tree.forEachInOrder(in: range) { try body($0.key, $0.value) }
        case .encoded(let encoded):
            for i in range.clamped(to: 0..<encoded.count) {
                let e = encoded.entry(at: i)
                try body(e.key, e.value)
            }
        }
    }

    /// How many keys sort before `key`.
    public func rank(of key: ChildKey) -> Int {
        switch storage {
        case .packed(let entries): return ChildMap.search(entries, key).index
        case .tree(let tree): return tree.rank(of: ChildEntry(key: key, value: .empty))
        case .encoded(let encoded): return encoded.search(key).index
        }
    }

    public static func == (a: ChildMap, b: ChildMap) -> Bool {
        switch (a.storage, b.storage) {
        case let (.tree(x), .tree(y)) where x.sameStorage(as: y): return true
        case let (.packed(x), .packed(y)) where x.withUnsafeBufferPointer({ $0.baseAddress }) == y.withUnsafeBufferPointer({ $0.baseAddress }):
            return true
        case let (.encoded(x), .encoded(y)) where x.isSame(as: y):
            return true
        default:
            guard a.count == b.count else { return false }
            return zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        }
    }

    public struct Iterator: IteratorProtocol {
        // Two fields rather than an enum: an iterator taken out of an enum to be advanced
        // would copy its stack each time.
        let packed: ContiguousArray<ChildEntry>
        var position = 0
        var tree: WeightBalancedTree<ChildEntry>.Iterator?
        var encoded: (children: EncodedChildren, walk: EntryWalk)?

        public mutating func next() -> (key: ChildKey, value: Node)? {
            if tree != nil { return tree?.next().map { ($0.key, $0.value) } }
            if let (children, walk) = encoded {
                var advanced = walk
                let entry = children.document.text.withUnsafeBufferPointer { bytes in
                    var reader = children.document.reader(bytes)
                    return advanced.next(children.document, &reader)
                }
                encoded = (children, advanced)
                return entry.map { ($0.key, $0.value) }
            }
            guard position < packed.count else { return nil }
            position += 1
            return (packed[position - 1].key, packed[position - 1].value)
        }
    }

    public func makeIterator() -> Iterator {
        switch storage {
        case .packed(let entries): return Iterator(packed: entries)
        case .tree(let tree): return Iterator(packed: [], tree: tree.makeIterator())
        case .encoded(let encoded): return Iterator(packed: [], encoded: (encoded, EntryWalk(encoded.container)))
        }
    }

    /// Visits the children in key order; cheaper than iterating (no stack to allocate).
    public func forEachChild(_ body: (ChildKey, Node) throws -> Void) rethrows {
        try forEachEntry { try body($0.key, $0.value) }
    }

    /// The children as entries, in key order (for the writers), each lent rather than
    /// copied: a for-in loop over the array copied every entry it passed.
    func forEachEntry(_ body: (ChildEntry) throws -> Void) rethrows {
        switch storage {
        case .packed(let entries):
            try entries.withUnsafeBufferPointer { buffer in
                for i in buffer.indices { try body(buffer[i]) }
            }
        case .tree(let tree): try tree.forEachInOrder(body)
        case .encoded(let encoded): try encoded.forEachEntry(body)
        }
    }

    /// The keys in order; a document's are read without their values.
    public var keys: [ChildKey] {
        guard case .encoded(let encoded) = storage else { return map { $0.key } }
        return (0..<encoded.count).map { encoded.key(at: $0) }
    }

    /// Whether these children are a document's array (which the plain form writes as one).
    var isTextArray: Bool {
        if case .encoded(let encoded) = storage { return encoded.container.isArray }
        return false
    }

    /// Checks the order and balance invariants (for tests).
    public func checkInvariants() -> Bool {
        switch storage {
        case .packed(let entries):
            return entries.count <= ChildMap.packedLimit
                && zip(entries, entries.dropFirst()).allSatisfy { ChildKey.compare($0.key, $1.key) < 0 }
                && entries.allSatisfy { !$0.value.isEmpty }
        case .tree(let tree):
            return tree.checkInvariants()
        case .encoded(let encoded):
            var previous: ChildKey?
            var ordered = true
            encoded.forEachEntry { entry in
                if let previous, ChildKey.compare(previous, entry.key) >= 0 { ordered = false }
                if entry.value.isEmpty || entry.value.priority != nil { ordered = false }
                previous = entry.key
            }
            return ordered && encoded.count > ChildMap.packedLimit
        }
    }
}
