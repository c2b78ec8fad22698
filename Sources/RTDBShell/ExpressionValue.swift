import RTDBData

/// A value while a transaction expression runs.
///
/// Unlike a `Node`, it has real arrays and keeps null members of object literals: `{"a": null}`
/// on the right of `+` removes "a". Everywhere else a null member counts as absent, as it does
/// in the database (member access, `len`, `keys`, `==`, and the conversion back to a `Node`).
enum ExpressionValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ExpressionValue])
    /// Keyed by `ChildKey`, whose equality and hash are byte-wise as the database's keys are.
    case object([ChildKey: ExpressionValue])
    /// `now()`, or a placeholder already in the data: only the server knows its value.
    case serverValue(ServerValue)

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value's kind as messages name it: "cannot add a string and a number".
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        case .serverValue(.timestamp): return "now()"
        case .serverValue(.increment): return "a pending increment"
        }
    }

    /// The members that count, in database key order: null ones are absent, as in the database.
    static func presentMembers(_ members: [ChildKey: ExpressionValue]) -> [(key: ChildKey, value: ExpressionValue)] {
        members.filter { !$0.value.isNull }.sorted { ChildKey.compare($0.key, $1.key) < 0 }
    }

    // MARK: From a Node

    /// Firebase's reading of a node: children whose keys are all canonical non-negative
    /// integers, the largest below twice their count, are an array with null at the holes.
    /// Priorities are dropped. Recursion follows the node's depth, which the database bounds.
    init(_ node: Node) {
        switch node.content {
        case .empty:
            self = .null
        case .leaf(let leaf):
            self = ExpressionValue.leaf(leaf)
        case .children(let map):
            self = ExpressionValue.children(map)
        }
    }

    // The parts of the recursion are separate functions, so each level of a deep value
    // takes two small frames (in unoptimized builds too) instead of one large one.

    private static func leaf(_ leaf: LeafValue) -> ExpressionValue {
        switch leaf {
        case .bool(let value): return .bool(value)
        case .number(let value): return .number(value)
        case .string(let value): return .string(value)
        case .serverValue(let value): return .serverValue(value)
        }
    }

    @inline(never)
    private static func children(_ map: ChildMap) -> ExpressionValue {
        if let length = arrayLength(map) {
            var items = [ExpressionValue](repeating: .null, count: length)
            for (key, child) in map {
                if let index = canonicalIndex(key), index < length {
                    items[index] = ExpressionValue(child)
                }
            }
            return .array(items)
        }
        var members: [ChildKey: ExpressionValue] = [:]
        members.reserveCapacity(map.count)
        for (key, child) in map {
            members[key] = ExpressionValue(child)
        }
        return .object(members)
    }

    /// The array length when `map` reads as an array, else nil.
    static func arrayLength(_ map: ChildMap) -> Int? {
        guard let last = map.last, let lastIndex = last.key.intValue, lastIndex >= 0 else { return nil }
        let maxIndex = Int(lastIndex)
        // maxIndex < 2 × count, written so it cannot overflow.
        guard maxIndex - map.count < map.count else { return nil }
        for (key, _) in map where ExpressionValue.canonicalIndex(key) == nil { return nil }
        return maxIndex + 1
    }

    /// The key's integer when it is written the canonical way ("0", "17"; not "01" or "-1").
    static func canonicalIndex(_ key: ChildKey) -> Int? {
        guard let value = key.intValue, value >= 0 else { return nil }
        let bytes = key.name.utf8
        if bytes.count > 1 && bytes.first == UInt8(ascii: "0") { return nil }
        return Int(value)
    }

    // MARK: To a Node

    /// The value as the database stores it: arrays become children "0", "1", … and null
    /// elements, null members and empty containers vanish.
    var node: Node {
        switch self {
        case .null: return .empty
        case .bool(let value): return Node(.bool(value))
        case .number(let value): return Node(.number(value))
        case .string(let value): return Node(.string(value))
        case .serverValue(let value): return Node(.serverValue(value))
        case .array(let items): return ExpressionValue.arrayNode(items)
        case .object(let members): return ExpressionValue.objectNode(members)
        }
    }

    @inline(never)
    private static func arrayNode(_ items: [ExpressionValue]) -> Node {
        var entries: [(ChildKey, Node)] = []
        for (index, item) in items.enumerated() {
            let child = item.node
            if !child.isEmpty { entries.append((ChildKey(String(index)), child)) }
        }
        // Increasing indexes are increasing keys, so the entries are already in key order.
        return Node(children: ChildMap(sorted: entries))
    }

    @inline(never)
    private static func objectNode(_ members: [ChildKey: ExpressionValue]) -> Node {
        var entries: [(ChildKey, Node)] = []
        entries.reserveCapacity(members.count)
        for (key, member) in members {
            let child = member.node
            if !child.isEmpty { entries.append((key, child)) }
        }
        return Node(children: ChildMap(unsorted: entries))
    }

    // MARK: Equality

    /// Deep equality: numbers by value (1 == 1.0), strings by Unicode scalars (as the database
    /// compares bytes, not by canonical equivalence), objects ignoring null members, arrays
    /// element by element. A server placeholder equals only the same placeholder.
    static func deepEqual(_ a: ExpressionValue, _ b: ExpressionValue) -> Bool {
        switch (a, b) {
        case (.null, .null):
            return true
        case let (.bool(x), .bool(y)):
            return x == y
        case let (.number(x), .number(y)):
            return x == y
        case let (.string(x), .string(y)):
            return x.unicodeScalars.elementsEqual(y.unicodeScalars)
        case let (.serverValue(x), .serverValue(y)):
            return x == y
        case let (.array(x), .array(y)):
            return arraysEqual(x, y)
        case let (.object(x), .object(y)):
            return objectsEqual(x, y)
        default:
            return false
        }
    }

    @inline(never)
    private static func arraysEqual(_ x: [ExpressionValue], _ y: [ExpressionValue]) -> Bool {
        guard x.count == y.count else { return false }
        for (left, right) in zip(x, y) where !deepEqual(left, right) { return false }
        return true
    }

    @inline(never)
    private static func objectsEqual(_ x: [ChildKey: ExpressionValue], _ y: [ChildKey: ExpressionValue]) -> Bool {
        let left = presentMembers(x), right = presentMembers(y)
        guard left.count == right.count else { return false }
        for (l, r) in zip(left, right) where l.key != r.key || !deepEqual(l.value, r.value) { return false }
        return true
    }

    // MARK: Text for messages

    /// A short rendering of an index for "cannot take [0] of a number".
    var indexText: String {
        switch self {
        case .number(let value): return JSONWriter.formatNumber(value)
        case .string(let value): return ExpressionValue.quoted(value)
        default: return typeName
        }
    }

    /// A string in JSON quotes with escapes, cut after 40 characters.
    static func quoted(_ text: String) -> String {
        let short = text.count > 40 ? String(text.prefix(40)) + "…" : text
        var bytes: [UInt8] = []
        JSONWriter.writeString(short, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
