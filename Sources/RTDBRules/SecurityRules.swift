import Foundation
import RTDBData

/// A database's security rules: who may read and write where, what data is valid, and which
/// children are indexed. Parsed and type-checked once, when loaded.
public struct SecurityRules: Sendable {
    /// The rules as given, comments included: what `GET /.settings/rules.json` answers.
    public let source: String
    private let root: RuleNode
    /// The most work one request's rules may have at hand (see `evaluationBudget`); smaller
    /// in tests.
    var budget = SecurityRules.evaluationBudget

    /// Everyone may read and write everything: the default without `--rules`.
    /// Built as its text parses (a test compares them) rather than parsed: every embedded
    /// database starts with these, and a one-shot command paid for the parse.
    public static let open = SecurityRules(source: "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n", root: RuleNode(
        read: Rule(location: "/", kind: .read, text: "true", term: RuleTerm(expression: .constant(.bool(true)), span: 0..<4, id: 0)),
        write: Rule(location: "/", kind: .write, text: "true", term: RuleTerm(expression: .constant(.bool(true)), span: 0..<4, id: 1)),
        validate: nil, indexOn: [], children: [:], wildcard: nil), terms: 2)

    /// How many terms its rules have (see `RuleTerm.id`): what counting them holds in memory.
    public let terms: Int
    /// What the requests judged by these rules made of each term (`/.inspect/coverage`), in
    /// a copy made by `counting()`; rules as parsed count nothing.
    public let coverage: RuleCoverage?

    private init(source: String, root: RuleNode, terms: Int, coverage: RuleCoverage? = nil) {
        self.source = source
        self.root = root
        self.terms = terms
        self.coverage = coverage
    }

    /// The same rules, counting afresh: each namespace of a server counts its own.
    public func counting() -> SecurityRules {
        var copy = SecurityRules(source: source, root: root, terms: terms, coverage: RuleCoverage(terms: terms))
        copy.budget = budget
        return copy
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
            var ids = 0
            let root = try RuleNode.build(rules.value, bound: [], location: [], ids: &ids)
            self.init(source: source, root: root, terms: ids)
        } catch {
            throw RulesError(error, in: scalars)
        }
    }

    /// Whether any write rule can look at the data a write leaves (a `.validate`, or `newData`
    /// in a `.write`). When none can, `checkWrite` needs no `after`.
    public var writeRulesReadNewData: Bool { root.writesReadNewData }

    // MARK: Reads

    /// Whether `identity` may read `path` with `query`: a `.read` rule that is true at the
    /// path or above grants it (rules below cannot). `.info` is readable by everyone. With
    /// `trace`, each rule evaluated is recorded there.
    public func canRead(_ path: Path, identity: Identity, query: QueryParams?, data: Node, now: Double, trace: RuleTrace? = nil,
                        counted: Bool = true) -> Bool {
        if identity == .admin || path.isInfo { return true }
        let context = RuleContext(auth: identity.ruleValue, now: now, root: data, newRoot: data, query: RuleQuery(params: query), budget: budget,
                                  trace: trace, coverage: counted ? coverage : nil)
        let allowed = granted(.read, along: path, context)
        context.count()
        if let at = context.exhaustedAt {
            Self.report("rules: a rule at \(at) ran over the evaluation budget reading \(path); the read is refused")
            return false
        }
        return allowed
    }

    /// The work rules may do for one request, in steps of pattern matches and characters
    /// string methods read or build: each rule evaluated brings `evaluationAllowance`, into a
    /// pool that holds at most `evaluationBudget` (about a quarter of a second of matching
    /// here). A rule that needs more than the pool fails and its request is refused, so no
    /// data can make rules hold a database for long or fill its memory, while a large write
    /// whose many rules are each cheap is not refused for its size.
    public static let evaluationBudget = 5_000_000
    public static let evaluationAllowance = 20_000

    /// Where a request refused for its rules' cost is told: the server's log (standard error).
    public static let report: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("rtdb: \(message)\n".utf8))
    }

    /// The keys a rule walk follows: a priority is written under its node's rules.
    private static func ruleKeys(_ path: Path) -> ArraySlice<String> {
        path.keys.last == ".priority" ? path.keys.dropLast() : path.keys[...]
    }

    /// Walks the rules from the root along `path`, evaluating the rule of `kind` at each
    /// level; true at the first one that holds. (The data there is looked up only by a rule
    /// that reads it.)
    private func granted(_ kind: RuleKind, along path: Path, _ context: RuleContext) -> Bool {
        let keys = Self.ruleKeys(path)
        var node: RuleNode? = root
        var walked: [String] = []
        walked.reserveCapacity(keys.count)
        var location = RuleLocation()
        var index = keys.startIndex
        while let level = node {
            if let rule = level.rule(kind) {
                location.path = Path(keys: walked)
                let granted = RuleEvaluator.isTrue(rule.term, in: context, at: location)
                context.finish(rule, at: location.path, result: granted)
                if granted { return true }
            }
            guard index < keys.endIndex else { return false }
            let key = keys[index]
            node = level.child(key, binding: &location.variables)
            walked.append(key)
            index += 1
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
        /// A rule at this path ran over the request's evaluation budget.
        case overBudget(Path)

        /// Whether a trace can say more: not of a rule stopped for its cost (evaluating it
        /// again would only cost as much again).
        public var isExplainable: Bool {
            if case .overBudget = self { return false }
            return true
        }

        /// Why, as a refused client is told (after `Permission denied: `).
        public var reason: String {
            switch self {
            case .permission: return "no .write rule allows this write"
            case .validation(let path): return "the .validate rule at \(path) refuses the new data"
            case .overBudget(let path): return "a rule at \(path) ran over its evaluation budget on this data"
            }
        }
    }

    /// Why a read is refused, as its client is told (after `Permission denied: `).
    public static let readRefusal = "no .read rule allows this read"

    /// Checks a write as a whole: `sets` (path, value) are what it writes, `before` and
    /// `after` the whole tree around it. Each written path needs a `.write` rule that holds
    /// at it or above; every `.validate` rule on the way to it and below it must hold for the
    /// new data where the new data exists (deletes are not validated). `after` may be nil
    /// when `writeRulesReadNewData` is false: no rule looks at it then. With `trace`, each
    /// rule evaluated is recorded there.
    public func checkWrite(_ sets: [(Path, Node)], identity: Identity, before: Node, after: Node?, now: Double,
                           trace: RuleTrace? = nil, counted: Bool = true) -> Denial? {
        if identity == .admin { return nil }
        let after = after ?? before
        let context = RuleContext(auth: identity.ruleValue, now: now, root: before, newRoot: after, query: RuleQuery(params: nil), budget: budget,
                                  trace: trace, coverage: counted ? coverage : nil)
        let denial = check(sets, after: after, context)
        context.count()
        if let at = context.exhaustedAt {
            Self.report("rules: a rule at \(at) ran over the evaluation budget for a write at \(sets.first?.0 ?? .root); the write is refused")
            return .overBudget(at)
        }
        return denial
    }

    private func check(_ sets: [(Path, Node)], after: Node, _ context: RuleContext) -> Denial? {
        for (path, _) in sets where !granted(.write, along: path, context) {
            return .permission(path)
        }
        var validatedAncestors = Set<Path>()
        for (path, value) in sets {
            let keys = Self.ruleKeys(path)
            var node: RuleNode? = root
            var walked: [String] = []
            var location = RuleLocation()
            // The locations above the write: their new data includes it.
            for key in keys {
                guard let level = node else { break }
                if let rule = level.validate {
                    let at = Path(keys: walked)
                    // A location above several of the writes is validated once.
                    if sets.count == 1 || validatedAncestors.insert(at).inserted {
                        let newData = after.child(at: at)
                        if !newData.isEmpty {
                            location.path = at
                            location.newDataHere = newData
                            let valid = RuleEvaluator.isTrue(rule.term, in: context, at: location)
                            context.finish(rule, at: at, result: valid)
                            if !valid { return .validation(at) }
                        }
                    }
                }
                node = level.child(key, binding: &location.variables)
                walked.append(key)
            }
            // Below, the new data is what was written (the writes of one request never
            // overlap); a priority alone is checked with its node.
            guard let node else { continue }
            let written = path.last == ".priority" ? after.child(at: Path(keys: walked)) : value
            if let denial = validate(node, at: &walked, written, context, &location) { return denial }
        }
        return nil
    }

    /// `.validate` at `keys` and below, over the new data that exists there. `keys` and
    /// the location's variables are extended and restored on the way down.
    private func validate(_ node: RuleNode, at keys: inout [String], _ newData: Node, _ context: RuleContext,
                          _ location: inout RuleLocation) -> Denial? {
        if newData.isEmpty { return nil }
        if let rule = node.validate {
            location.path = Path(keys: keys)
            location.dataHere = nil
            location.newDataHere = newData
            let valid = RuleEvaluator.isTrue(rule.term, in: context, at: location)
            context.finish(rule, at: location.path, result: valid)
            if !valid { return .validation(location.path) }
        }
        guard !node.children.isEmpty || node.wildcard != nil, case .children(let children) = newData.content else { return nil }
        let bound = location.variables.count
        defer { location.variables.removeSubrange(bound...) }
        for (key, child) in children {
            location.variables.removeSubrange(bound...)
            guard let rules = node.child(key.name, binding: &location.variables) else { continue }
            keys.append(key.name)
            defer { keys.removeLast() }
            if let denial = validate(rules, at: &keys, child, context, &location) { return denial }
        }
        return nil
    }

    /// Where the `.read` rules on the way to `path` read the data, when one does: a read
    /// there may be allowed or refused by the data, so a listen there is checked again
    /// after a write that touches one of these. Empty when no rule reads data.
    public func readPatterns(_ path: Path) -> [ReadPattern] {
        var patterns: [ReadPattern] = []
        var node: RuleNode? = root
        var variables: [(name: String, value: String)] = []
        var walked: [String] = []
        while let level = node {
            if let rule = level.read, rule.term.readsData { patterns += rule.term.readPatterns(at: walked, variables) }
            guard walked.count < path.keys.count else { break }
            let key = path.keys[walked.count]
            node = level.child(key, binding: &variables)
            walked.append(key)
        }
        return patterns
    }

    // MARK: Questions

    /// Whether `identity` may read `path` now, with every rule evaluated on the way (not
    /// counted in the coverage: nothing was asked of the database).
    public func answer(read path: Path, identity: Identity, data: Node, now: Double) -> RuleAnswer {
        let trace = RuleTrace()
        let allowed = canRead(path, identity: identity, query: nil, data: data, now: now, trace: trace, counted: false)
        return RuleAnswer(allowed: allowed, reason: allowed ? nil : Self.readRefusal, steps: trace.steps)
    }

    /// Whether `identity` may make the write of `sets` to `before`, which leaves `after`, with
    /// every rule evaluated on the way.
    public func answer(write sets: [(Path, Node)], identity: Identity, before: Node, after: Node, now: Double) -> RuleAnswer {
        let trace = RuleTrace()
        let denial = checkWrite(sets, identity: identity, before: before, after: after, now: now, trace: trace, counted: false)
        return RuleAnswer(allowed: denial == nil, reason: denial?.reason, steps: trace.steps)
    }

    /// Every rule of the file, in no particular order.
    var allRules: [Rule] {
        var rules: [Rule] = []
        func walk(_ node: RuleNode) {
            rules += [node.read, node.write, node.validate].compactMap { $0 }
            for child in node.children.values { walk(child) }
            if let wildcard = node.wildcard { walk(wildcard.node) }
        }
        walk(root)
        return rules
    }

    // MARK: Indexes

    /// The children `.indexOn` names at `path` (`.value` included), for the `no_index` warning.
    public func indexOn(at path: Path) -> [String] {
        let levels = levels(along: path)
        return levels.count == path.count + 1 ? levels.last?.indexOn ?? [] : []
    }

    /// Whether `.indexOn` at `path` names `index` (`.value` included). Key and priority order
    /// are never declared: Firebase keeps both for every location.
    public func declares(_ index: Index, at path: Path) -> Bool {
        switch index {
        case .child(let child): return indexOn(at: path).contains(child.wireString)
        case .value: return indexOn(at: path).contains(".value")
        case .key, .priority: return false
        }
    }

    /// Whether a query ordered by a child (or by value) at `path`, with a limit or a range,
    /// is one the rules give no `.indexOn` for, as Firebase warns of it (`no_index`). Without
    /// a limit or a range a query reads the whole location, which needs no index; without
    /// rules nothing is indexed by declaration.
    public func warnsUnindexed(_ query: QueryParams?, at path: Path) -> Bool {
        guard let query, !query.loadsAllData, source != SecurityRules.open.source else { return false }
        switch query.index {
        case .child, .value: return !declares(query.index, at: path)
        case .key, .priority: return false
        }
    }

    /// Where the rules for the data at `path` are written: its keys, with a `$wildcard`'s name
    /// at each level the rules reach through one; below where the rules stop, the data's own
    /// keys (the levels a rule there adds). As `/users` or `/rooms/$room/messages`.
    public func location(of path: Path) -> String {
        var node: RuleNode? = root
        var keys: [String] = []
        for key in path.keys {
            if let named = node?.children[key] {
                keys.append(key)
                node = named
            } else if let wildcard = node?.wildcard {
                keys.append(wildcard.name)
                node = wildcard.node
            } else {
                keys.append(key)
                node = nil
            }
        }
        return "/" + keys.joined(separator: "/")
    }

    /// The rules from the root down `path`, as far as they go (the root's level first).
    private func levels(along path: Path) -> [RuleNode] {
        var levels = [root]
        var variables: [(name: String, value: String)] = []
        for key in path.keys {
            guard let next = levels.last?.child(key, binding: &variables) else { break }
            levels.append(next)
        }
        return levels
    }
}
