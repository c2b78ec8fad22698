import RTDBData

// Follows the Firebase JS SDK's IndexedFilter, RangedFilter and LimitedFilter (core/view/filter/).

/// Applies changes to a view's cache the way its query sees them, reporting child changes.
protocol NodeFilter {
    var index: Index { get }
    /// True when the filter can leave children out (ranges and limits).
    var filtersNodes: Bool { get }
    var indexedFilter: IndexedFilter { get }
    func updateChild(_ snap: Node, _ key: ChildKey, _ newChild: Node, _ affectedPath: Path,
                     _ source: CompleteChildSource, _ changes: ChildChangeAccumulator?) -> Node
    func updateFullNode(_ old: Node, _ new: Node, _ changes: ChildChangeAccumulator?) -> Node
    func updatePriority(_ old: Node, _ priority: Node) -> Node
}

func makeFilter(for params: QueryParams) -> NodeFilter {
    if params.loadsAllData { return IndexedFilter(index: params.index) }
    if params.limit != nil { return LimitedFilter(params) }
    return RangedFilter(params)
}

/// Every child passes; only change tracking.
struct IndexedFilter: NodeFilter {
    let index: Index
    var filtersNodes: Bool { false }
    var indexedFilter: IndexedFilter { self }

    func updateChild(_ snap: Node, _ key: ChildKey, _ newChild: Node, _ affectedPath: Path,
                     _ source: CompleteChildSource, _ changes: ChildChangeAccumulator?) -> Node {
        let oldChild = snap.child(key)
        if oldChild.child(at: affectedPath) == newChild.child(at: affectedPath) && oldChild.isEmpty == newChild.isEmpty {
            return snap
        }
        if let changes {
            if newChild.isEmpty {
                if snap.hasChild(key.name) { changes.track(.removed(key, oldChild)) }
            } else if oldChild.isEmpty {
                changes.track(.added(key, newChild))
            } else {
                changes.track(.changed(key, newChild, old: oldChild))
            }
        }
        if snap.isLeaf && newChild.isEmpty { return snap }
        return snap.updatingChild(key, newChild)
    }

    func updateFullNode(_ old: Node, _ new: Node, _ changes: ChildChangeAccumulator?) -> Node {
        if let changes {
            if !old.isLeaf {
                for (key, child) in IndexedChildren.sorted(old, index: .priority) where !new.hasChild(key.name) {
                    changes.track(.removed(key, child))
                }
            }
            if !new.isLeaf {
                for (key, child) in IndexedChildren.sorted(new, index: .priority) {
                    if old.hasChild(key.name) {
                        let oldChild = old.child(key)
                        if oldChild != child { changes.track(.changed(key, child, old: oldChild)) }
                    } else {
                        changes.track(.added(key, child))
                    }
                }
            }
        }
        return new
    }

    func updatePriority(_ old: Node, _ priority: Node) -> Node {
        old.isEmpty ? .empty : old.withPriority(priority.leafValue)
    }
}

/// Children inside the query's start and end bounds.
struct RangedFilter: NodeFilter {
    let params: QueryParams
    let indexedFilter: IndexedFilter

    init(_ params: QueryParams) {
        self.params = params
        self.indexedFilter = IndexedFilter(index: params.index)
    }

    var index: Index { params.index }
    var filtersNodes: Bool { true }

    func matches(_ key: ChildKey, _ node: Node) -> Bool { params.matches(key: key, node: node) }

    func updateChild(_ snap: Node, _ key: ChildKey, _ newChild: Node, _ affectedPath: Path,
                     _ source: CompleteChildSource, _ changes: ChildChangeAccumulator?) -> Node {
        let child = matches(key, newChild) ? newChild : .empty
        return indexedFilter.updateChild(snap, key, child, affectedPath, source, changes)
    }

    func updateFullNode(_ old: Node, _ new: Node, _ changes: ChildChangeAccumulator?) -> Node {
        var filtered = new.isLeaf ? .empty : new.withPriority(nil)
        if !new.isLeaf {
            for (key, child) in new.children where !matches(key, child) {
                filtered = filtered.updatingChild(key, .empty)
            }
        }
        return indexedFilter.updateFullNode(old, filtered, changes)
    }

    func updatePriority(_ old: Node, _ priority: Node) -> Node { old }
}

/// A window of at most `limit` children inside the bounds, from the start or the end.
struct LimitedFilter: NodeFilter {
    let ranged: RangedFilter
    let limit: Int
    let reverse: Bool

    init(_ params: QueryParams) {
        ranged = RangedFilter(params)
        limit = params.limit!
        reverse = !params.isViewFromLeft
    }

    var index: Index { ranged.index }
    var filtersNodes: Bool { true }
    var indexedFilter: IndexedFilter { ranged.indexedFilter }
    var params: QueryParams { ranged.params }

    func updateChild(_ snap: Node, _ key: ChildKey, _ newChild: Node, _ affectedPath: Path,
                     _ source: CompleteChildSource, _ changes: ChildChangeAccumulator?) -> Node {
        let child = ranged.matches(key, newChild) ? newChild : .empty
        if snap.child(key) == child { return snap }
        if snap.childCount < limit {
            return indexedFilter.updateChild(snap, key, child, affectedPath, source, changes)
        }
        return fullWindowUpdate(snap, key, child, source, changes)
    }

    func updateFullNode(_ old: Node, _ new: Node, _ changes: ChildChangeAccumulator?) -> Node {
        var filtered = Node.empty
        if !new.isLeaf && !new.isEmpty {
            let ordered = IndexedChildren.sorted(new, index: index)
            var kept: [(ChildKey, Node)] = []
            for (key, child) in reverse ? ordered.reversed() : ordered {
                guard kept.count < limit else { break }
                let position = index.position(of: key, child)
                if withinDirectionalStart(position) && withinDirectionalEnd(position) { kept.append((key, child)) }
            }
            filtered = Node(children: ChildMap(unsorted: kept))
        }
        return indexedFilter.updateFullNode(old, filtered, changes)
    }

    func updatePriority(_ old: Node, _ priority: Node) -> Node { old }

    private func withinDirectionalStart(_ p: IndexPosition) -> Bool { reverse ? params.withinEnd(p) : params.withinStart(p) }
    private func withinDirectionalEnd(_ p: IndexPosition) -> Bool { reverse ? params.withinStart(p) : params.withinEnd(p) }

    /// Order in the window's direction: negative means `a` comes first.
    private func compare(_ a: (key: ChildKey, node: Node), _ b: (key: ChildKey, node: Node)) -> Int {
        reverse ? index.compare(b, a) : index.compare(a, b)
    }

    private func fullWindowUpdate(_ snap: Node, _ key: ChildKey, _ child: Node,
                                  _ source: CompleteChildSource, _ changes: ChildChangeAccumulator?) -> Node {
        let boundary = (reverse ? IndexedChildren.first(of: snap, index: index) : IndexedChildren.last(of: snap, index: index))!
        let inRange = ranged.matches(key, child)
        if snap.hasChild(key.name) {
            let oldChild = snap.child(key)
            var next = source.child(after: boundary, index: index, reverse: reverse)
            while let candidate = next, candidate.key == key || snap.hasChild(candidate.key.name) {
                next = source.child(after: candidate, index: index, reverse: reverse)
            }
            let compareNext = next.map { compare($0, (key, child)) } ?? 1
            if inRange && !child.isEmpty && compareNext >= 0 {
                changes?.track(.changed(key, child, old: oldChild))
                return snap.updatingChild(key, child)
            }
            changes?.track(.removed(key, oldChild))
            let without = snap.updatingChild(key, .empty)
            if let next, ranged.matches(next.key, next.node) {
                changes?.track(.added(next.key, next.node))
                return without.updatingChild(next.key, next.node)
            }
            return without
        }
        if child.isEmpty { return snap }
        if inRange && compare(boundary, (key, child)) >= 0 {
            changes?.track(.removed(boundary.key, boundary.node))
            changes?.track(.added(key, child))
            return snap.updatingChild(key, child).updatingChild(boundary.key, .empty)
        }
        return snap
    }
}
