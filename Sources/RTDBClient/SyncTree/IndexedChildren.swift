import RTDBData

/// Positional questions about a node's children under an index: first, last, the one before
/// a child, the ones after a position.
///
/// Key order (and priority order when no child has a priority) is the children map's own
/// order, answered in O(log n); other orders scan the children once (O(n)), which views
/// only do over their own window or when a window needs refilling.
enum IndexedChildren {
    typealias Named = (key: ChildKey, node: Node)

    static func isNatural(_ node: Node, _ index: Index) -> Bool {
        index == .key || (index == .priority && node.children.prioritizedCount == 0)
    }

    static func first(of node: Node, index: Index) -> Named? {
        if isNatural(node, index) { return node.children.first.map { ($0.key, $0.value) } }
        return node.children.min { index.compare(($0.key, $0.value), ($1.key, $1.value)) < 0 }.map { ($0.key, $0.value) }
    }

    static func last(of node: Node, index: Index) -> Named? {
        if isNatural(node, index) { return node.children.last.map { ($0.key, $0.value) } }
        return node.children.max { index.compare(($0.key, $0.value), ($1.key, $1.value)) < 0 }.map { ($0.key, $0.value) }
    }

    /// The key of the child just before (`key`, `child`) in `node` under `index`.
    static func predecessor(of key: ChildKey, _ child: Node, in node: Node, index: Index) -> ChildKey? {
        let map = node.children
        if isNatural(node, index) {
            let rank = map.rank(of: key)
            return rank == 0 ? nil : map.element(at: rank - 1).key
        }
        var best: Named?
        for (k, n) in map where k != key {
            guard index.compare((k, n), (key, child)) < 0 else { continue }
            if best == nil || index.compare((k, n), best!) > 0 { best = (k, n) }
        }
        return best?.key
    }

    /// All children in index order.
    static func sorted(_ node: Node, index: Index) -> [Named] {
        index.sortedChildren(of: node).map { ($0.key, $0.node) }
    }

    /// Up to `count` children strictly after `start` (before it when `reverse`).
    static func after(_ start: Named, in node: Node, index: Index, reverse: Bool, count: Int) -> [Named] {
        let position = index.position(of: start.key, start.node)
        return after(position, in: node, index: index, reverse: reverse, count: count, inclusive: false)
    }

    static func after(_ position: IndexPosition, in node: Node, index: Index, reverse: Bool, count: Int, inclusive: Bool) -> [Named] {
        var result: [Named] = []
        let ordered = sorted(node, index: index)
        let sequence: [Named] = reverse ? ordered.reversed() : ordered
        for entry in sequence {
            let c = index.compare(index.position(of: entry.key, entry.node), position)
            let beyond = reverse ? (inclusive ? c <= 0 : c < 0) : (inclusive ? c >= 0 : c > 0)
            if beyond {
                result.append(entry)
                if result.count == count { break }
            }
        }
        return result
    }
}
