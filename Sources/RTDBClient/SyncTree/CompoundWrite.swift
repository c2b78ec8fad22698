import RTDBData

// Follows the Firebase JS SDK's CompoundWrite (core/CompoundWrite.ts).

/// Several user writes layered into one tree of overwrites: a write below an existing one
/// is folded into it; a write above replaces everything beneath.
struct CompoundWrite: Sendable {
    var tree: PathTree<Node>

    static let empty = CompoundWrite(tree: PathTree())

    var isEmpty: Bool { tree.isEmpty }

    /// Adds a write in place (the pending writes' hot path).
    mutating func add(_ node: Node, at path: Path) {
        CompoundWrite.add(node, at: path.keys[...], to: &tree)
    }

    /// Adds a merge's entries below `path`: the way to `path` is walked once, not once an
    /// entry (an import's updates have 10,000 of them).
    mutating func add(_ updates: [(Path, Node)], at path: Path) {
        if let (rootPath, value) = tree.rootmost(on: path) {
            let base = path.relative(to: rootPath)!
            tree.set(rootPath, value.merging(updates.map { (base.appending($0.0), $0.1) }))
            return
        }
        tree.modify(path.keys[...]) { below in
            for (relative, node) in updates { CompoundWrite.add(node, at: relative.keys[...], to: &below) }
        }
    }

    private static func add(_ node: Node, at keys: ArraySlice<String>, to tree: inout PathTree<Node>) {
        // A write already covering the place takes the new one into its value.
        if let value = tree.value {
            tree.value = value.setting(Path(keys: Array(keys)), to: node)
            return
        }
        guard let front = keys.first else {
            tree = PathTree(node)
            return
        }
        add(node, at: keys.dropFirst(), into: &tree.children[front])
    }

    private static func add(_ node: Node, at keys: ArraySlice<String>, into slot: inout PathTree<Node>?) {
        if slot == nil { slot = PathTree() }
        add(node, at: keys, to: &slot!)
    }

    mutating func remove(_ path: Path) {
        if path.isRoot { self = .empty } else { tree.setTree(path, PathTree()) }
    }

    /// Removes the places `relatives` below `path`, walking to `path` once.
    mutating func remove(_ relatives: some Sequence<Path>, at path: Path) {
        tree.modify(path.keys[...]) { below in
            for relative in relatives {
                if relative.isRoot { below = PathTree() } else { below.setTree(relative, PathTree()) }
            }
        }
    }

    /// The complete value at `path` when a write covers it.
    func completeNode(at path: Path) -> Node? {
        guard let (rootPath, value) = tree.rootmost(on: path) else { return nil }
        return value.child(at: path.relative(to: rootPath)!)
    }

    func hasCompleteWrite(at path: Path) -> Bool { completeNode(at: path) != nil }

    /// Children known completely from writes at this level.
    var completeChildren: [(key: ChildKey, node: Node)] {
        if let node = tree.value {
            return node.isLeaf ? [] : Index.priority.sortedChildren(of: node)
        }
        return tree.sortedChildren.compactMap { entry in entry.tree.value.map { (ChildKey(entry.key), $0) } }
    }

    func child(at path: Path) -> CompoundWrite {
        if path.isRoot { return self }
        if let shadowing = completeNode(at: path) { return CompoundWrite(tree: PathTree(shadowing)) }
        return CompoundWrite(tree: tree.subtree(path))
    }

    /// `node` with these writes applied on top.
    func apply(to node: Node) -> Node {
        CompoundWrite.apply(tree, at: .root, to: node)
    }

    private static func apply(_ tree: PathTree<Node>, at path: Path, to node: Node) -> Node {
        if let value = tree.value { return node.setting(path, to: value) }
        var node = node
        var priority: Node?
        for (key, child) in tree.sortedChildren {
            if key == ".priority" {
                priority = child.value
            } else {
                node = apply(child, at: path.child(key), to: node)
            }
        }
        if let priority, !node.child(at: path).isEmpty {
            node = node.setting(path.child(".priority"), to: priority)
        }
        return node
    }
}
