import RTDBData

// Follows the Firebase JS SDK's CompoundWrite (core/CompoundWrite.ts).

/// Several user writes layered into one tree of overwrites: a write below an existing one
/// is folded into it; a write above replaces everything beneath.
struct CompoundWrite: Sendable {
    var tree: ImmutableTree<Node>

    static let empty = CompoundWrite(tree: ImmutableTree())

    var isEmpty: Bool { tree.isEmpty }

    /// Adds a write in place (the pending writes' hot path).
    mutating func add(_ node: Node, at path: Path) {
        if path.isRoot { tree = ImmutableTree(node); return }
        if let (rootPath, value) = tree.rootmost(on: path) {
            tree.set(rootPath, value.setting(path.relative(to: rootPath)!, to: node))
        } else {
            tree.setTree(path, ImmutableTree(node))
        }
    }

    mutating func add(_ updates: [(Path, Node)], at path: Path) {
        for (relative, node) in updates { add(node, at: path.appending(relative)) }
    }

    mutating func remove(_ path: Path) {
        if path.isRoot { self = .empty } else { tree.setTree(path, ImmutableTree()) }
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
        if let shadowing = completeNode(at: path) { return CompoundWrite(tree: ImmutableTree(shadowing)) }
        return CompoundWrite(tree: tree.subtree(path))
    }

    /// `node` with these writes applied on top.
    func apply(to node: Node) -> Node {
        CompoundWrite.apply(tree, at: .root, to: node)
    }

    private static func apply(_ tree: ImmutableTree<Node>, at path: Path, to node: Node) -> Node {
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
