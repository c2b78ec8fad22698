// Follows the Firebase JS SDK's resolveDeferredValueSnapshot (core/util/ServerValues.ts).

extension Node {
    /// Replaces server value placeholders: timestamps by `now`, increments by the existing
    /// number at the same place plus the delta (or the delta alone when there is no number).
    public func resolvingServerValues(now: Double, existing: Node) -> Node {
        guard containsServerValues else { return self }
        let resolvedPriority = priority.map { Node.resolve($0, now: now, existing: existing.priority.map { Node($0) } ?? .empty) }
        switch content {
        case .empty:
            return self
        case .leaf(let v):
            return Node(Node.resolve(v, now: now, existing: existing), priority: resolvedPriority)
        case .children(let map):
            var out = map
            for (key, child) in map where child.containsServerValues {
                out = out.inserting(key, child.resolvingServerValues(now: now, existing: existing.child(key)))
            }
            return Node(children: out, priority: resolvedPriority)
        }
    }

    static func resolve(_ v: LeafValue, now: Double, existing: Node) -> LeafValue {
        switch v {
        case .serverValue(.timestamp): return .number(now)
        case .serverValue(.increment(let delta)):
            if case .leaf(.number(let current))? = Optional(existing.content) { return .number(current + delta) }
            return .number(delta)
        default: return v
        }
    }
}

extension Node {
    /// True if a number or priority below is NaN or infinite. JSON has no such numbers, so
    /// they are never stored; only arithmetic on server values (an increment that overflows)
    /// can make one.
    public var containsNonFiniteNumber: Bool {
        if case .number(let n)? = priority, !n.isFinite { return true }
        switch content {
        case .empty: return false
        case .leaf(let v): if case .number(let n) = v { return !n.isFinite }; return false
        case .children(let map): return !map.isValidatedText && map.contains { $0.value.containsNonFiniteNumber }
        }
    }
}
