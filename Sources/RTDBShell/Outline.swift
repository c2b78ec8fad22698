import RTDBData

/// `tree` and `du`: the shape of a subtree and the size of its parts, from its value.
enum Outline {
    /// Children shown per object in `tree`; the rest are counted.
    static let childrenShown = 20

    // MARK: tree

    /// The keys under `node` to `depth` levels, drawn with branches; each object says how many
    /// children it has, each leaf shows its value cut to `width` columns.
    static func tree(_ node: Node, at path: Path, depth: Int, width: Int) -> String {
        var out = path.description + "  " + summary(node, width: max(10, width - path.description.count - 2)) + "\n"
        draw(node, prefix: "", depth: depth, width: width, into: &out)
        return out
    }

    private static func draw(_ node: Node, prefix: String, depth: Int, width: Int, into out: inout String) {
        guard depth > 0, !node.isLeaf else { return }
        let children = Array(node.children.prefix(childrenShown))
        let hidden = node.childCount - children.count
        for (i, (key, child)) in children.enumerated() {
            let last = i == children.count - 1 && hidden == 0
            let line = prefix + (last ? "└── " : "├── ") + key.name
            out += line + "  " + summary(child, width: max(10, width - line.count - 2)) + "\n"
            draw(child, prefix: prefix + (last ? "    " : "│   "), depth: depth - 1, width: width, into: &out)
        }
        if hidden > 0 { out += prefix + "└── … \(hidden) more\n" }
    }

    /// "{3 children}" for an object, the value's JSON (cut to `width`) for a leaf.
    private static func summary(_ node: Node, width: Int) -> String {
        if node.isEmpty { return "null" }
        if !node.isLeaf {
            let n = node.childCount
            return "{\(n) \(n == 1 ? "child" : "children")}"
        }
        let text = JSONWriter.string(node.withPriority(nil))
        return text.count > width ? String(text.prefix(max(1, width - 1))) + "…" : text
    }

    /// `tree --json`: the value to `depth` levels; an object below that is `{".children": N}`
    /// (no key has a dot, so it cannot be data).
    static func treeJSON(_ node: Node, depth: Int) -> Node {
        guard !node.isLeaf else { return node.withPriority(nil) }
        guard depth > 0 else { return Node(children: ChildMap(sorted: [(ChildKey(".children"), Node(Double(node.childCount)))])) }
        var children = ChildMap()
        for (key, child) in node.children { children = children.inserting(key, treeJSON(child, depth: depth - 1)) }
        return Node(children: children)
    }

    // MARK: du

    struct Size {
        var path: Path
        var bytes: Int
    }

    /// The size in bytes of compact JSON of `node` and of each subtree to `depth` levels
    /// below it, as `get --json` prints them (lists as JSON arrays): the whole first, then
    /// the parts, largest first.
    static func sizes(_ node: Node, at path: Path, depth: Int) -> [Size] {
        var parts: [Size] = []
        collect(node, at: path, depth: depth, into: &parts)
        return [Size(path: path, bytes: bytes(node))] + parts.sorted { $0.bytes != $1.bytes ? $0.bytes > $1.bytes : $0.path < $1.path }
    }

    private static func collect(_ node: Node, at path: Path, depth: Int, into parts: inout [Size]) {
        guard depth > 0, !node.isLeaf else { return }
        for (key, child) in node.children {
            let childPath = path.child(key.name)
            parts.append(Size(path: childPath, bytes: bytes(child)))
            collect(child, at: childPath, depth: depth - 1, into: &parts)
        }
    }

    private static func bytes(_ node: Node) -> Int {
        JSONWriter.string(node.withPriority(nil)).utf8.count
    }

    /// 512 B, 1.5 kB, 12 MB: decimal units, as disk sizes are told.
    static func humanBytes(_ bytes: Int) -> String {
        if bytes < 1000 { return "\(bytes) B" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let text = value < 10 ? String(format: "%.1f", value) : String(format: "%.0f", value)
        return text + " " + units[unit]
    }
}
