import RTDBData

/// A database's security rules: who may read and write where, what data is valid, and which
/// children are indexed. Parsed and type-checked once, when loaded.
public struct SecurityRules: Sendable {
    /// The rules as given, comments included: what `GET /.settings/rules.json` answers.
    public let source: String
    private let root: RuleNode

    /// Everyone may read and write everything: the default without `--rules`.
    public static let open: SecurityRules = {
        let text = "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n"
        // A constant document: a failure here is a programming error caught by every test.
        return (try? SecurityRules(parsing: text)) ?? SecurityRules(source: text, root: RuleNode(
            read: .constant(.bool(true)), write: .constant(.bool(true)), validate: nil, indexOn: [], children: [:], wildcard: nil))
    }()

    private init(source: String, root: RuleNode) {
        self.source = source
        self.root = root
    }

    public init(parsing source: String) throws(RulesError) {
        let scalars = Array(source.unicodeScalars)
        do throws(RuleSyntaxError) {
            let text = try RulesText.parse(scalars)
            guard case .object(let members, _) = text else {
                throw RuleSyntaxError("the rules file must be an object: {\"rules\": {…}}", at: text.offset)
            }
            for member in members where member.key != "rules" {
                throw RuleSyntaxError("unknown key \"\(member.key)\" at the top level; the rules go in \"rules\"", at: member.keyOffset)
            }
            guard let rules = members.first(where: { $0.key == "rules" }) else {
                throw RuleSyntaxError("the rules file has no \"rules\" object", at: text.offset)
            }
            self.init(source: source, root: try RuleNode.build(rules.value, bound: []))
        } catch {
            throw RulesError(error, in: scalars)
        }
    }

    // MARK: Reads

    /// Whether `identity` may read `path` with `query`: a `.read` rule that is true at the
    /// path or above grants it (rules below cannot). `.info` is readable by everyone.
    public func canRead(_ path: Path, identity: Identity, query: QueryParams?, data: Node, now: Double) -> Bool {
        if identity == .admin || path.isInfo { return true }
        var context = RuleContext(auth: identity.ruleValue, now: now, root: data, newRoot: data, query: RuleQuery(params: query),
                                  path: .root, variables: [:])
        return granted(.read, along: path, &context)
    }

    /// Walks the rules from the root along `path`, evaluating the rule of `kind` at each
    /// level; true at the first one that holds.
    private func granted(_ kind: RuleKind, along path: Path, _ context: inout RuleContext) -> Bool {
        var node: RuleNode? = root
        var depth = 0
        let keys = path.keys.last == ".priority" ? Array(path.keys.dropLast()) : path.keys
        while let level = node {
            context.path = Path(keys: Array(keys.prefix(depth)))
            if let rule = level.expression(kind), RuleEvaluator.isTrue(rule, in: context) { return true }
            guard depth < keys.count else { return false }
            node = level.child(keys[depth], binding: &context.variables)
            depth += 1
        }
        return false
    }

    // MARK: Writes

    /// Why a write is refused.
    public enum Denial: Equatable, Sendable {
        /// No `.write` rule grants the write at this path.
        case permission(Path)
        /// A `.validate` rule at this path does not hold for the new data.
        case validation(Path)

        public var path: Path {
            switch self {
            case .permission(let p), .validation(let p): return p
            }
        }
    }

    /// Checks a write as a whole: `sets` (path, value) are what it writes, `before` and
    /// `after` the whole tree around it. Each written path needs a `.write` rule that holds
    /// at it or above; every `.validate` rule on the way to it and below it must hold for the
    /// new data where the new data exists (deletes are not validated).
    public func checkWrite(_ sets: [(Path, Node)], identity: Identity, before: Node, after: Node, now: Double) -> Denial? {
        if identity == .admin { return nil }
        var context = RuleContext(auth: identity.ruleValue, now: now, root: before, newRoot: after, query: RuleQuery(params: nil),
                                  path: .root, variables: [:])
        for (path, _) in sets {
            context.variables = [:]
            if !granted(.write, along: path, &context) { return .permission(path) }
        }
        var validatedAncestors = Set<Path>()
        for (path, _) in sets {
            let keys = path.keys.last == ".priority" ? Array(path.keys.dropLast()) : path.keys
            var node: RuleNode? = root
            context.variables = [:]
            // The locations above the write: their new data includes it.
            for depth in 0..<keys.count {
                guard let level = node else { break }
                let at = Path(keys: Array(keys.prefix(depth)))
                if let rule = level.validate, validatedAncestors.insert(at).inserted {
                    context.path = at
                    if !after.child(at: at).isEmpty, !RuleEvaluator.isTrue(rule, in: context) { return .validation(at) }
                }
                node = level.child(keys[depth], binding: &context.variables)
            }
            if let node, let denial = validate(node, at: Path(keys: keys), after.child(at: Path(keys: keys)), &context) {
                return denial
            }
        }
        return nil
    }

    /// `.validate` at `path` and below, over the new data that exists there.
    private func validate(_ node: RuleNode, at path: Path, _ data: Node, _ context: inout RuleContext) -> Denial? {
        if data.isEmpty { return nil }
        if let rule = node.validate {
            context.path = path
            if !RuleEvaluator.isTrue(rule, in: context) { return .validation(path) }
        }
        guard !node.children.isEmpty || node.wildcard != nil, case .children(let children) = data.content else { return nil }
        let saved = context.variables
        defer { context.variables = saved }
        for (key, child) in children {
            guard let rules = node.child(key.name, binding: &context.variables) else { continue }
            if let denial = validate(rules, at: path.child(key.name), child, &context) { return denial }
        }
        return nil
    }

    // MARK: Indexes

    /// The children `.indexOn` names at `path` (`.value` included), for the `no_index` warning.
    public func indexOn(at path: Path) -> [String] {
        var node: RuleNode? = root
        var variables: [String: String] = [:]
        for key in path.keys {
            node = node?.child(key, binding: &variables)
        }
        return node?.indexOn ?? []
    }
}
