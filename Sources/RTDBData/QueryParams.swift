// Follows the Firebase JS SDK's QueryParams (core/view/QueryParams.ts).

/// What a query asks for: an ordering, optional start and end bounds, optional limit.
///
/// Bounds are kept as the official clients keep them (a value, an optional key, inclusive or
/// not), so the wire form and the query's identity come out the same as theirs.
public struct QueryParams: Equatable, Sendable, CustomStringConvertible {
    public enum Side: String, Sendable { case left = "l", right = "r" }

    public struct Bound: Equatable, Sendable {
        /// The ordering value (a priority, a value, a child's value, or a key for key order).
        public var value: Node
        /// The key that breaks ties, when given.
        public var key: String?
        public var inclusive: Bool
        public init(value: Node, key: String? = nil, inclusive: Bool = true) {
            self.value = value
            self.key = key
            self.inclusive = inclusive
        }
    }

    public var index: Index = .priority
    public var start: Bound?
    public var end: Bound?
    public var limit: Int?
    /// Which end a limit keeps; nil for a limit without an anchor.
    public var viewFrom: Side?
    /// rtdb's own: the values sent for this query are cut this many levels below its
    /// location (`Node.cut(below:)`, each object there sent as its number of children); nil
    /// sends them whole. Only a query with bounds or a limit may be cut: its updates name
    /// whole children, so each cut child is sent again when anything below it changes.
    public var depth: Int?
    /// The depths a query may be cut at.
    public static let depths = 1...32

    public init() {}

    public static let `default` = QueryParams()

    /// No bound and no limit: the query sees every child (it may still order them).
    public var loadsAllData: Bool { start == nil && end == nil && limit == nil }
    public var isDefault: Bool { loadsAllData && index == .priority && depth == nil }
    /// Cut to a depth without a window: refused, as only a window's updates name whole children.
    public var isCutWithoutWindow: Bool { depth != nil && loadsAllData }
    public var isViewFromLeft: Bool { viewFrom.map { $0 == .left } ?? (start != nil) }

    // MARK: Building (the official clients' rules)

    public func ordered(by index: Index) -> QueryParams { var p = self; p.index = index; return p }
    public func limitToFirst(_ n: Int) -> QueryParams { var p = self; p.limit = n; p.viewFrom = .left; return p }
    public func limitToLast(_ n: Int) -> QueryParams { var p = self; p.limit = n; p.viewFrom = .right; return p }

    public func startAt(_ value: Node, key: String? = nil) -> QueryParams {
        var p = self; p.start = Bound(value: value, key: key, inclusive: true); return p
    }

    /// Without a key (and not ordered by key), the bound sits after every key of `value`.
    public func startAfter(_ value: Node, key: String? = nil) -> QueryParams {
        var p = self
        let k = (index == .key || key != nil) ? key : ChildKey.max.name
        p.start = Bound(value: value, key: k, inclusive: false)
        return p
    }

    public func endAt(_ value: Node, key: String? = nil) -> QueryParams {
        var p = self; p.end = Bound(value: value, key: key, inclusive: true); return p
    }

    public func endBefore(_ value: Node, key: String? = nil) -> QueryParams {
        var p = self
        let k = (index == .key || key != nil) ? key : ChildKey.min.name
        p.end = Bound(value: value, key: k, inclusive: false)
        return p
    }

    public func equalTo(_ value: Node, key: String? = nil) -> QueryParams {
        startAt(value, key: key).endAt(value, key: key)
    }

    /// The bound method named as the SDKs, REST and the shell name it (`startAt`, `startAfter`,
    /// `endAt`, `endBefore`, `equalTo`); nil for another name.
    public func bound(named name: String, _ value: Node, key: String?) -> QueryParams? {
        switch name {
        case "startAt": return startAt(value, key: key)
        case "startAfter": return startAfter(value, key: key)
        case "endAt": return endAt(value, key: key)
        case "endBefore": return endBefore(value, key: key)
        case "equalTo": return equalTo(value, key: key)
        default: return nil
        }
    }

    // MARK: Positions

    /// Where the start bound sits in the index's order.
    public var startPosition: IndexPosition {
        guard let start else { return .minimum }
        return index.position(value: start.value, key: start.key.map(Self.boundKey) ?? .min)
    }

    public var endPosition: IndexPosition {
        guard let end else { return .maximum }
        return index.position(value: end.value, key: end.key.map(Self.boundKey) ?? .max)
    }

    static func boundKey(_ name: String) -> ChildKey {
        name == ChildKey.min.name ? .min : name == ChildKey.max.name ? .max : ChildKey(name)
    }

    public var startInclusive: Bool { start?.inclusive ?? true }
    public var endInclusive: Bool { end?.inclusive ?? true }

    /// Whether a child lies within the bounds (limits aside).
    public func matches(key: ChildKey, node: Node) -> Bool {
        if start == nil && end == nil { return true }
        let position = index.position(of: key, node)
        return withinStart(position) && withinEnd(position)
    }

    public func withinStart(_ position: IndexPosition) -> Bool {
        let c = index.compare(startPosition, position)
        return startInclusive ? c <= 0 : c < 0
    }

    public func withinEnd(_ position: IndexPosition) -> Bool {
        let c = index.compare(position, endPosition)
        return endInclusive ? c <= 0 : c < 0
    }

    // MARK: Wire form and identity

    /// The `q` object of a listen (empty for the default query).
    public var wireObject: JSONValue {
        var members: [(String, JSONValue)] = []
        if let start {
            members.append(("sp", start.value.plainJSON))
            if let key = start.key { members.append(("sn", .string(key))) }
            members.append(("sin", .bool(start.inclusive)))
        }
        if let end {
            members.append(("ep", end.value.plainJSON))
            if let key = end.key { members.append(("en", .string(key))) }
            members.append(("ein", .bool(end.inclusive)))
        }
        if let limit {
            members.append(("l", .number(Double(limit))))
            members.append(("vf", .string((viewFrom ?? (isViewFromLeft ? .left : .right)).rawValue)))
        }
        if index != .priority { members.append(("i", .string(index.description))) }
        if let depth { members.append(("dp", .number(Double(depth)))) }
        return .object(members)
    }

    /// The query's identity: its wire object with keys sorted, or "default".
    public var identifier: String {
        if isDefault { return "default" }
        guard case .object(let members) = wireObject else { return "default" }
        return JSONValue.object(members.sorted { $0.0 < $1.0 }).serialized()
    }

    public var description: String { identifier }

    /// Reads a `q` object from the wire.
    public init(wire: JSONValue) {
        self.init()
        if let i = wire["i"]?.string { index = Index(name: i) }
        if let sp = wire["sp"] {
            start = Bound(value: Node(json: sp), key: wire["sn"]?.string, inclusive: wire["sin"]?.bool ?? true)
        }
        if let ep = wire["ep"] {
            end = Bound(value: Node(json: ep), key: wire["en"]?.string, inclusive: wire["ein"]?.bool ?? true)
        }
        // A limit that is not a positive integer (unchecked input) is no limit, never a trap.
        if let l = wire["l"]?.int, l > 0 {
            limit = l
            viewFrom = wire["vf"]?.string.flatMap(Side.init(rawValue:))
        }
        if let dp = wire["dp"]?.int, Self.depths.contains(dp) { depth = dp }
    }
}

/// A place in an index's order: an ordering value (or −∞/+∞) and a key that breaks ties.
public struct IndexPosition: Sendable {
    public enum Value: Sendable { case minimum, node(Node), maximum }
    public var value: Value
    public var key: ChildKey
    public init(value: Value, key: ChildKey) {
        self.value = value
        self.key = key
    }

    public static let minimum = IndexPosition(value: .minimum, key: .min)
    public static let maximum = IndexPosition(value: .maximum, key: .max)
}

extension Index {
    /// The position of a child.
    public func position(of key: ChildKey, _ node: Node) -> IndexPosition {
        IndexPosition(value: .node(orderingValue(of: node)), key: key)
    }

    /// The position of a query bound (its value is already an ordering value; for key order
    /// the value is the key).
    public func position(value: Node, key: ChildKey) -> IndexPosition {
        if self == .key, case .leaf(.string(let s)) = value.content {
            return IndexPosition(value: .node(.empty), key: ChildKey(s))
        }
        return IndexPosition(value: .node(value), key: key)
    }

    public func compare(_ a: IndexPosition, _ b: IndexPosition) -> Int {
        if self != .key {
            let c: Int
            switch (a.value, b.value) {
            case (.minimum, .minimum), (.maximum, .maximum): c = 0
            case (.minimum, _), (_, .maximum): c = -1
            case (_, .minimum), (.maximum, _): c = 1
            case let (.node(x), .node(y)): c = Index.compareValues(x, y)
            }
            if c != 0 { return c }
        }
        return ChildKey.compare(a.key, b.key)
    }

    /// Whether a child's move under this index must be reported (`child_moved`).
    public func orderingValueChanged(_ old: Node, _ new: Node) -> Bool {
        switch self {
        case .key: return false
        case .value: return old != new
        case .priority: return old.priority != new.priority
        case .child(let path): return Index.compareValues(old.child(at: path), new.child(at: path)) != 0
        }
    }
}

extension Node {
    /// The node as plain JSON (no priorities), for query bounds and listings.
    public var plainJSON: JSONValue {
        switch content {
        case .empty: return .null
        case .leaf(.bool(let b)): return .bool(b)
        case .leaf(.number(let n)): return .number(n)
        case .leaf(.string(let s)): return .string(s)
        case .leaf(.serverValue(.timestamp)): return .object([(".sv", .string("timestamp"))])
        case .leaf(.serverValue(.increment(let n))): return .object([(".sv", .object([("increment", .number(n))]))])
        case .children(let map): return .object(map.map { ($0.key.name, $0.value.plainJSON) })
        }
    }
}
