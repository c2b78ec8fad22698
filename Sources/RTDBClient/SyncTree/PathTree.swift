import RTDBData

// Follows the Firebase JS SDK's ImmutableTree (core/util/ImmutableTree.ts), but changes in
// place where that one copies.

/// A tree keyed by path segments with an optional value at each node: where writes,
/// sync points and acknowledged paths are kept. Children are visited in plain string order.
///
/// A value type: copies are independent. The mutating methods change it in place when it is
/// not shared, so a long-lived tree (the pending writes) costs O(depth) per change, not a
/// copy of every sibling level.
struct PathTree<T> {
    var value: T?
    var children: [String: PathTree<T>] = [:]

    init(_ value: T? = nil, children: [String: PathTree<T>] = [:]) {
        self.value = value
        self.children = children
    }

    var isEmpty: Bool { value == nil && children.isEmpty }

    var sortedChildren: [(key: String, tree: PathTree<T>)] {
        children.sorted { ChildKey.compareUTF16($0.key, $1.key) < 0 }.map { ($0.key, $0.value) }
    }

    /// The value nearest the root on the way to `path`, and where it is.
    func rootmost(on path: Path) -> (path: Path, value: T)? {
        var tree = self
        var depth = 0
        while true {
            if let value = tree.value { return (Path(keys: Array(path.keys.prefix(depth))), value) }
            guard depth < path.keys.count, let child = tree.children[path.keys[depth]] else { return nil }
            tree = child
            depth += 1
        }
    }

    func subtree(_ path: Path) -> PathTree<T> {
        var tree = self
        for key in path.keys {
            guard let child = tree.children[key] else { return PathTree() }
            tree = child
        }
        return tree
    }

    func get(_ path: Path) -> T? { subtree(path).value }

    func setting(_ path: Path, _ value: T?) -> PathTree<T> {
        guard let front = path.first else { return PathTree(value, children: children) }
        var copy = self
        copy.children[front] = (children[front] ?? PathTree()).setting(path.dropFirst(), value)
        return copy
    }

    func removing(_ path: Path) -> PathTree<T> {
        guard let front = path.first else {
            return children.isEmpty ? PathTree() : PathTree(nil, children: children)
        }
        guard let child = children[front] else { return self }
        var copy = self
        let updated = child.removing(path.dropFirst())
        copy.children[front] = updated.isEmpty ? nil : updated
        return copy.value == nil && copy.children.isEmpty ? PathTree() : copy
    }

    mutating func set(_ path: Path, _ value: T?) {
        modify(path.keys[...]) { $0.value = value }
    }

    mutating func setTree(_ path: Path, _ tree: PathTree<T>) {
        modify(path.keys[...]) { $0 = tree }
    }

    /// Runs `body` on the subtree at `keys` in place, making it if missing and dropping it
    /// if left empty: one dictionary access a level, and no copy of an unshared level.
    @discardableResult
    mutating func modify<R>(_ keys: ArraySlice<String>, _ body: (inout PathTree<T>) -> R) -> R {
        guard let front = keys.first else { return body(&self) }
        return Self.modify(&children[front], keys.dropFirst(), body)
    }

    private static func modify<R>(_ slot: inout PathTree<T>?, _ keys: ArraySlice<String>,
                                  _ body: (inout PathTree<T>) -> R) -> R {
        if slot == nil { slot = PathTree() }
        let result = slot!.modify(keys, body)
        if slot!.isEmpty { slot = nil }
        return result
    }

    func settingTree(_ path: Path, _ tree: PathTree<T>) -> PathTree<T> {
        guard let front = path.first else { return tree }
        var copy = self
        let updated = (children[front] ?? PathTree()).settingTree(path.dropFirst(), tree)
        copy.children[front] = updated.isEmpty ? nil : updated
        return copy
    }

    /// Children first (in order), then this node's value.
    func forEach(_ path: Path = .root, _ body: (Path, T) -> Void) {
        for (key, child) in sortedChildren { child.forEach(path.child(key), body) }
        if let value { body(path, value) }
    }

    /// Folds from the leaves up: `body(path, value, childResults)`.
    func fold<V>(_ path: Path = .root, _ body: (Path, T?, [(String, V)]) -> V) -> V {
        let results = sortedChildren.map { ($0.key, $0.tree.fold(path.child($0.key), body)) }
        return body(path, value, results)
    }

    /// Calls `body` for each value strictly above `path`, root first; returns the tree at `path`.
    @discardableResult
    func forEachAbove(_ path: Path, _ body: (Path, T) -> Void) -> PathTree<T> {
        var tree = self
        var soFar = Path.root
        for key in path.keys {
            if let value = tree.value { body(soFar, value) }
            guard let child = tree.children[key] else { return PathTree() }
            tree = child
            soFar = soFar.child(key)
        }
        return tree
    }

    /// The first non-nil result of `body` for values from the root down to `path` (inclusive).
    func firstOnPath<V>(_ path: Path, _ body: (Path, T) -> V?) -> V? {
        var tree = self
        var soFar = Path.root
        var remaining = path.keys[...]
        while true {
            if let value = tree.value, let result = body(soFar, value) { return result }
            guard let front = remaining.first, let child = tree.children[front] else { return nil }
            tree = child
            soFar = soFar.child(front)
            remaining = remaining.dropFirst()
        }
    }
}

extension PathTree: Sendable where T: Sendable {}
