import RTDBData

/// A value while a rule runs.
enum RuleValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case snapshot(RuleSnapshot)
    /// An object or array of a token's claims; members are converted when read.
    case json(JSONValue)
    /// What `val()` gives for a location with children; members are converted when read.
    case node(Node)
    /// `auth` for a user: `uid`, `provider` and the claims as `token`.
    case auth(RuleAuth)
    case array([RuleValue])
    case regex(RuleRegex)
    /// The request's query (kept in the context: it is large).
    case query

    /// A token's claims, `auth`, or a value read from the data.
    init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(n)
        case .string(let s): self = .string(s)
        case .array, .object: self = .json(json)
        }
    }

    /// What `val()` gives: a leaf's value, null for no data, an object for children.
    init(node: Node) {
        switch node.content {
        case .empty: self = .null
        case .leaf(let leaf): self = RuleValue(leaf: leaf)
        case .children: self = .node(node)
        }
    }

    /// `value.name` or `value[name]`: a member of an object (null when it has none); nil
    /// when the value has no members at all.
    func member(_ name: String) -> RuleValue? {
        switch self {
        case .json(let json):
            if case .array(let items) = json {
                guard let i = Int(name), items.indices.contains(i) else { return .null }
                return RuleValue(json: items[i])
            }
            return json[name].map(RuleValue.init(json:)) ?? .null
        case .node(let node):
            return node.children[name].map(RuleValue.init(node:)) ?? .null
        case .auth(let auth):
            switch name {
            case "uid": return .string(auth.uid)
            case "provider": return .string(auth.provider)
            case "token": return RuleValue(json: auth.claims)
            // An admin's authvar, or a legacy token's "d": its own fields are auth's.
            default: return auth.claims[name].map(RuleValue.init(json:)) ?? .null
            }
        default:
            return nil
        }
    }

    init(leaf: LeafValue?) {
        switch leaf {
        case .bool(let b)?: self = .bool(b)
        case .number(let n)?: self = .number(n)
        case .string(let s)?: self = .string(s)
        default: self = .null
        }
    }

    /// Strict equality: values of different kinds are never equal.
    func equals(_ other: RuleValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        default: return false
        }
    }

    /// How `+` writes a value into a string.
    var text: String? {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return JSONWriter.formatNumber(n)
        case .string(let s): return s
        default: return nil
        }
    }
}

/// `data`, `newData`, `root` and what `child()` and `parent()` make of them: a location in
/// the tree before the request, or `after` it.
struct RuleSnapshot: Sendable {
    let path: Path
    let node: Node
    let after: Bool

    /// A location below this one, found from here rather than from the root.
    func child(_ relative: Path) -> RuleSnapshot {
        RuleSnapshot(path: path.appending(relative), node: node.child(at: relative), after: after)
    }
}

/// `auth` for a user, made once per request.
final class RuleAuth: Sendable {
    let uid: String
    let provider: String
    let claims: JSONValue

    init(uid: String, provider: String, claims: JSONValue) {
        self.uid = uid
        self.provider = provider
        self.claims = claims
    }
}

/// The `query` of a read rule: what the listen or read asked for.
struct RuleQuery: Sendable {
    let params: QueryParams?

    static let propertyNames = ["orderByKey", "orderByChild", "orderByValue", "orderByPriority",
                                "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast"]

    static func propertyType(_ name: String) -> RuleType? {
        guard propertyNames.contains(name) else { return nil }
        return name.hasPrefix("orderBy") && name != "orderByChild" ? .boolean : .any
    }

    func property(_ name: String) -> RuleValue {
        let ordered = params.map { !$0.isDefault } ?? false
        switch name {
        case "orderByKey": return .bool(params?.index == .key)
        case "orderByValue": return .bool(params?.index == .value)
        case "orderByPriority": return .bool(ordered && params?.index == .priority)
        case "orderByChild":
            if case .child(let path)? = params?.index { return .string(path.wireString) }
            return .null
        case "startAt": return bound(params?.start)
        case "endAt": return bound(params?.end)
        case "equalTo":
            guard let start = params?.start, let end = params?.end, start == end else { return .null }
            return bound(start)
        case "limitToFirst": return limit(.left)
        case "limitToLast": return limit(.right)
        default: return .null
        }
    }

    private func bound(_ bound: QueryParams.Bound?) -> RuleValue {
        guard let bound else { return .null }
        if params?.index == .key { return bound.key.map(RuleValue.string) ?? RuleValue(node: bound.value) }
        return RuleValue(node: bound.value)
    }

    private func limit(_ side: QueryParams.Side) -> RuleValue {
        guard let params, let limit = params.limit else { return .null }
        let from = params.viewFrom ?? (params.isViewFromLeft ? .left : .right)
        return from == side ? .number(Double(limit)) : .null
    }
}
