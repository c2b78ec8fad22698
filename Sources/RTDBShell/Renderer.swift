import RTDBData

/// How results are shown: pretty and coloured for a person at a terminal, compact JSON for
/// programs (not a terminal, or `--json`).
public struct Renderer: Sendable {
    public var pretty: Bool
    public var color: Bool

    public init(pretty: Bool, color: Bool) {
        self.pretty = pretty
        self.color = color
    }

    public static let machine = Renderer(pretty: false, color: false)

    public func value(_ node: Node, export: Bool = false) -> String {
        JSONWriter.string(node, options: .init(export: export, pretty: pretty, style: color ? .ansi : nil)) + "\n"
    }

    public func keys(_ node: Node, long: Bool) -> String {
        let children = node.children
        if !pretty {
            if long {
                // An object of key → child count (objects) or value (leaves).
                var summary = ChildMap()
                for (key, child) in children {
                    summary = summary.inserting(key, child.isLeaf ? child.withPriority(nil) : Node(Double(child.childCount)))
                }
                return JSONWriter.string(Node(children: summary), options: .init(export: true)) + "\n"
            }
            var out: [UInt8] = [UInt8(ascii: "[")]
            for (i, entry) in children.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(entry.key.name, to: &out)
            }
            out.append(contentsOf: Array("]\n".utf8))
            return String(decoding: out, as: UTF8.self)
        }
        var out = ""
        let width = long ? min(40, children.map { $0.key.name.count }.max() ?? 0) : 0
        for (key, child) in children {
            let name = color && !child.isLeaf ? "\u{1B}[34;1m\(key.name)\u{1B}[0m" : key.name
            guard long else { out += name + "\n"; continue }
            let pad = String(repeating: " ", count: max(0, width - key.name.count) + 2)
            if child.isLeaf {
                var text = JSONWriter.string(child.withPriority(nil), options: .init(style: color ? .ansi : nil))
                if text.count > 60 && !color { text = String(text.prefix(57)) + "..." }
                out += name + pad + text + "\n"
            } else {
                let n = child.childCount
                out += name + pad + "{\(n) \(n == 1 ? "child" : "children")}\n"
            }
        }
        return out
    }

    /// Query results in query order: a JSON array of {"key": K, "value": V}.
    public func queryResult(_ node: Node, index: Index) -> String {
        var entries = ChildMap()
        var position = 0
        for (key, child) in index.sortedChildren(of: node) {
            let item = Node(children: ChildMap(sorted: [(ChildKey("key"), Node(.string(key.name))), (ChildKey("value"), child.withPriority(nil))]))
            entries = entries.inserting(ChildKey(String(position)), item)
            position += 1
        }
        if position == 0 { return "[]\n" }
        return value(Node(children: entries))
    }

    /// Query results as one object whose keys come in query order (`get` with query flags).
    /// The text keeps the order; a JSON parser that sorts keys, or a map, does not.
    public func orderedObject(_ node: Node, index: Index, shallow: Bool, export: Bool) -> String {
        let entries = index.sortedChildren(of: node)
        if entries.isEmpty { return value(.empty) }
        var members: [String] = []
        for (key, child) in entries {
            let name = JSONWriter.string(Node(.string(key.name)))
            let shown = shallow ? (child.isLeaf ? child : Node(true)) : child
            var text = JSONWriter.string(shown, options: .init(export: export, pretty: pretty, style: color ? .ansi : nil))
            // Nested lines move in by one level.
            if pretty { text = text.replacingOccurrences(of: "\n", with: "\n  ") }
            members.append(pretty ? "  \(name): \(text)" : "\(name):\(text)")
        }
        return pretty ? "{\n" + members.joined(separator: ",\n") + "\n}\n" : "{" + members.joined(separator: ",") + "}\n"
    }

    /// A read's result for a derived `--format`: its children as one object in `index`
    /// order, a list's too (so its rows keep their keys, and a sparse list has no empty
    /// rows); a leaf as itself. Its ndjson lines are query's own `{"key", "value"}`.
    public func rows(_ node: Node, index: Index, shallow: Bool, export: Bool) -> String {
        node.isLeaf ? value(node, export: export) : orderedObject(node, index: index, shallow: shallow, export: export)
    }

    /// A rules verdict: `allowed` in green, `denied` in red.
    public func verdict(_ allowed: Bool) -> String {
        let word = allowed ? "allowed" : "denied"
        return color ? (allowed ? "\u{1B}[32m" : "\u{1B}[31m") + word + "\u{1B}[0m" : word
    }

    public func error(_ text: String) -> String {
        color ? "\u{1B}[31merror:\u{1B}[0m \(text)\n" : "error: \(text)\n"
    }
}
