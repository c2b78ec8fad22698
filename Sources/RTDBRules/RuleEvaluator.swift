import RTDBData

/// What every rule of one request sees: who asks, when, the data before and after, the query.
final class RuleContext {
    let auth: RuleValue
    let now: Double
    /// The data before the request.
    let root: Node
    /// The data as the write would leave it (the same as `root` for reads).
    let newRoot: Node
    let query: RuleQuery
    /// Where each rule evaluated is told, when the request's rules are to be explained.
    let trace: RuleTrace?
    /// Where each rule evaluated is counted, when the request counts (not a re-evaluation
    /// to explain a refusal, not a `rules check`).
    let coverage: RuleCoverage?
    /// What the terms of the rule being evaluated gave, for the trace.
    private var outcomes: [(id: Int, outcome: RuleTrace.Outcome)] = []
    /// What the terms of this request gave, for the coverage: counted once it is decided,
    /// or every `marksHeld` on the way (a large write's rules evaluate many terms). Only the
    /// one thread evaluating the request touches it, so exclusivity needs no check at run
    /// time, where the check cost as much as the append.
    @exclusivity(unchecked) private var marks: [(id: Int, mark: RuleCoverage.Mark)] = []
    static let marksHeld = 4096
    let recording: Bool
    /// The work this request's rules may still do (see `SecurityRules.evaluationBudget`):
    /// past it a rule fails, and the request is refused (`exhaustedAt`).
    var budget: Int
    private let most: Int
    /// Where the rule that ran out of budget is, once one has.
    private(set) var exhaustedAt: Path?

    init(auth: RuleValue, now: Double, root: Node, newRoot: Node, query: RuleQuery, budget: Int, trace: RuleTrace? = nil,
         coverage: RuleCoverage? = nil) {
        self.trace = trace
        self.coverage = coverage
        recording = trace != nil || coverage != nil
        self.auth = auth
        self.now = now
        self.root = root
        self.newRoot = newRoot
        self.query = query
        self.budget = budget
        most = budget
    }

    func record(_ term: RuleTerm, _ value: RuleValue) {
        if coverage != nil { mark(term, RuleCoverage.Mark(value)) }
        if trace != nil { outcomes.append((term.id, .value(value))) }
    }

    func record(_ term: RuleTerm, failure: RuleFailure) {
        if coverage != nil { mark(term, .failure(failure.reason)) }
        if trace != nil { outcomes.append((term.id, .failure(failure.reason))) }
    }

    private func mark(_ term: RuleTerm, _ mark: RuleCoverage.Mark) {
        marks.append((term.id, mark))
        if marks.count >= Self.marksHeld { count() }
    }

    /// `rule`, evaluated at `path`, gave `result`: a step of the trace.
    func finish(_ rule: Rule, at path: Path, result: Bool) {
        guard let trace else { return }
        trace.finish(rule, at: path, result: result, outcomes: outcomes)
        outcomes.removeAll(keepingCapacity: true)
    }

    /// What the terms gave so far is counted (once the request is decided, or on the way).
    func count() {
        coverage?.record(marks)
        marks.removeAll(keepingCapacity: true)
    }

    /// A rule about to be evaluated brings its allowance, up to the most the pool holds.
    func refill() {
        budget = min(budget + SecurityRules.evaluationAllowance, most)
    }

    /// Takes `units` of work from the budget; a rule at `location` that needs more fails.
    func spend(_ units: Int, at location: RuleLocation) throws(RuleFailure) {
        budget -= units
        guard budget < 0 else { return }
        if exhaustedAt == nil { exhaustedAt = location.path }
        throw RuleFailure(reason: "the rules ran over their evaluation budget")
    }
}

/// Where a rule runs: its path, the `$` variables its wildcards bound (a few: a list), and
/// the data before and after there when the walk that got there has it at hand.
struct RuleLocation {
    var path: Path = .root
    var variables: [(name: String, value: String)] = []
    var dataHere: Node? = nil
    var newDataHere: Node? = nil

    func variable(_ name: String) -> String? {
        variables.last { $0.name == name }?.value
    }
}

/// A rule that cannot be evaluated (a property of null, a comparison of a number with a
/// string, an invalid child path) is false, as in Firebase; the reason is kept for the
/// server's debug output.
struct RuleFailure: Error {
    let reason: String
}

/// Runs parsed rule expressions. Every operation is bounded by the size of its operands, and
/// expressions have no loops, so a rule's cost is bounded by its text and the data it reads.
enum RuleEvaluator {
    static func isTrue(_ term: RuleTerm, in context: RuleContext, at location: RuleLocation) -> Bool {
        context.refill()
        guard case .bool(true)? = try? evaluate(term, context, location) else { return false }
        return true
    }

    /// What `term` gives (recorded in the context, for a trace or coverage, when it records).
    static func evaluate(_ term: RuleTerm, _ c: RuleContext, _ l: RuleLocation) throws(RuleFailure) -> RuleValue {
        guard c.recording else { return try value(of: term, c, l) }
        do {
            let value = try value(of: term, c, l)
            c.record(term, value)
            return value
        } catch {
            c.record(term, failure: error)
            throw error
        }
    }

    private static func value(of term: RuleTerm, _ c: RuleContext, _ l: RuleLocation) throws(RuleFailure) -> RuleValue {
        switch term.expression {
        case .constant(let value): return value
        case .array(let items):
            var values: [RuleValue] = []
            for item in items { values.append(try evaluate(item, c, l)) }
            return .array(values)
        case .variable(let variable):
            switch variable {
            case .auth: return c.auth
            case .now: return .number(c.now)
            case .root: return .snapshot(RuleSnapshot(path: .root, node: c.root, after: false))
            case .data: return .snapshot(RuleSnapshot(path: l.path, node: l.dataHere ?? c.root.child(at: l.path), after: false))
            case .newData: return .snapshot(RuleSnapshot(path: l.path, node: l.newDataHere ?? c.newRoot.child(at: l.path), after: true))
            case .query: return .query
            }
        case .bound(let name):
            guard let value = l.variable(name) else { throw RuleFailure(reason: "\(name) is not bound") }
            return .string(value)
        case .member(let base, let name):
            let value = try evaluate(base, c, l)
            if let member = value.member(name) { return member }
            switch value {
            case .string(let s) where name == "length": return .number(Double(s.utf16.count))
            case .query: return c.query.property(name)
            case .null: throw RuleFailure(reason: "cannot read '\(name)' of null")
            default: throw RuleFailure(reason: "no property '\(name)'")
            }
        case .index(let base, let key):
            let container = try evaluate(base, c, l)
            let index = try evaluate(key, c, l)
            if let name = index.text, let member = container.member(name) { return member }
            switch (container, index) {
            case let (.array(items), .number(n)):
                guard let i = Int(exactly: n), items.indices.contains(i) else { return .null }
                return items[i]
            default: throw RuleFailure(reason: "cannot index this value")
            }
        case .call(let base, let method, let arguments):
            // At most two arguments: evaluated without an array.
            let receiver = try evaluate(base, c, l)
            let first = try arguments.first.map { argument throws(RuleFailure) in try evaluate(argument, c, l) }
            let second = try arguments.count > 1 ? evaluate(arguments[1], c, l) : nil
            return try call(method, on: receiver, first, second, c, l)
        case .child(let base, let relative):
            guard case .snapshot(let snapshot) = try evaluate(base, c, l) else { throw RuleFailure(reason: "child() needs a snapshot") }
            return .snapshot(snapshot.child(relative))
        case .hasChild(let base, let relative):
            guard case .snapshot(let snapshot) = try evaluate(base, c, l) else { throw RuleFailure(reason: "hasChild() needs a snapshot") }
            return .bool(!snapshot.node.child(at: relative).isEmpty)
        case .not(let operand):
            return .bool(!(try boolean(operand, c, l)))
        case .negate(let operand):
            guard case .number(let n) = try evaluate(operand, c, l) else { throw RuleFailure(reason: "'-' needs a number") }
            return .number(-n)
        case .and(let left, let right):
            guard try boolean(left, c, l) else { return .bool(false) }
            return .bool(try boolean(right, c, l))
        case .or(let left, let right):
            if try boolean(left, c, l) { return .bool(true) }
            return .bool(try boolean(right, c, l))
        case .conditional(let condition, let yes, let no):
            return try evaluate(try boolean(condition, c, l) ? yes : no, c, l)
        case .binary(let op, let left, let right):
            let (a, b) = (try evaluate(left, c, l), try evaluate(right, c, l))
            if op == .plus, let x = a.text, let y = b.text { try c.spend(x.utf8.count + y.utf8.count, at: l) }
            return try binary(op, a, b)
        }
    }

    private static func boolean(_ term: RuleTerm, _ c: RuleContext, _ l: RuleLocation) throws(RuleFailure) -> Bool {
        guard case .bool(let b) = try evaluate(term, c, l) else { throw RuleFailure(reason: "not a boolean") }
        return b
    }

    private static func binary(_ op: RuleOperator, _ a: RuleValue, _ b: RuleValue) throws(RuleFailure) -> RuleValue {
        switch op {
        case .equal: return .bool(a.equals(b))
        case .notEqual: return .bool(!a.equals(b))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (a, b) {
            case let (.number(x), .number(y)): order = x < y ? -1 : (x == y ? 0 : 1)
            case let (.string(x), .string(y)):
                order = x == y ? 0 : (x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1)
            default: throw RuleFailure(reason: "'\(op.rawValue)' compares two numbers or two strings")
            }
            switch op {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case .plus:
            if case let (.number(x), .number(y)) = (a, b) { return .number(x + y) }
            guard case .string = a, let x = a.text, let y = b.text else {
                guard case .string = b, let x = a.text, let y = b.text else { throw RuleFailure(reason: "'+' needs numbers or strings") }
                return .string(x + y)
            }
            return .string(x + y)
        case .minus, .times, .divide, .remainder:
            guard case let (.number(x), .number(y)) = (a, b) else { throw RuleFailure(reason: "'\(op.rawValue)' needs numbers") }
            switch op {
            case .minus: return .number(x - y)
            case .times: return .number(x * y)
            case .divide: return .number(x / y)
            default: return .number(x.truncatingRemainder(dividingBy: y))
            }
        }
    }

    private static func call(_ method: RuleMethod, on receiver: RuleValue, _ first: RuleValue?, _ second: RuleValue?,
                             _ c: RuleContext, _ l: RuleLocation) throws(RuleFailure) -> RuleValue {
        if case .snapshot(let snapshot) = receiver { return try call(method, on: snapshot, first, c) }
        guard case .string(let s) = receiver else { throw RuleFailure(reason: "\(method.rawValue)() needs a string") }
        // Each method reads the string once, at least.
        try c.spend(s.utf8.count, at: l)
        func argument(_ i: Int) throws(RuleFailure) -> String {
            guard case .string(let value)? = i == 0 ? first : second else {
                throw RuleFailure(reason: "\(method.rawValue)() needs a string argument")
            }
            return value
        }
        switch method {
        case .contains: return .bool(try s.contains(argument(0)))
        case .beginsWith: return .bool(try s.hasPrefix(argument(0)))
        case .endsWith: return .bool(try s.hasSuffix(argument(0)))
        case .replace:
            let target = try argument(0)
            let replacement = try argument(1)
            guard !target.isEmpty else { return .string(s) }
            // What the result will weigh, paid before it is built.
            let grows = replacement.utf8.count - target.utf8.count
            if grows > 0 { try c.spend(s.ranges(of: target).count * grows, at: l) }
            return .string(s.replacing(target, with: replacement))
        case .toLowerCase: return .string(s.lowercased())
        case .toUpperCase: return .string(s.uppercased())
        case .matches:
            guard case .regex(let regex)? = first else { throw RuleFailure(reason: "matches() needs a regular expression") }
            let matched = regex.matches(s, budget: &c.budget)
            try c.spend(0, at: l)  // a match that ran out of budget fails here
            return .bool(matched ?? false)
        default: throw RuleFailure(reason: "\(method.rawValue)() is a snapshot method")
        }
    }

    private static func call(_ method: RuleMethod, on snapshot: RuleSnapshot, _ argument: RuleValue?, _ c: RuleContext) throws(RuleFailure) -> RuleValue {
        func relativePath() throws(RuleFailure) -> Path {
            guard case .string(let text)? = argument else { throw RuleFailure(reason: "\(method.rawValue)() needs a path string") }
            let relative = Path(text)
            guard !relative.isRoot, relative.keys.allSatisfy({ Path.problem(with: $0) == nil }) else {
                throw RuleFailure(reason: "\(method.rawValue)() was given an invalid path")
            }
            return relative
        }
        switch method {
        case .val: return RuleValue(node: snapshot.node)
        case .child: return .snapshot(snapshot.child(try relativePath()))
        case .parent:
            guard let parent = snapshot.path.parent else { throw RuleFailure(reason: "the root has no parent") }
            return .snapshot(RuleSnapshot(path: parent, node: (snapshot.after ? c.newRoot : c.root).child(at: parent), after: snapshot.after))
        case .hasChild: return .bool(!snapshot.node.child(at: try relativePath()).isEmpty)
        case .hasChildren:
            guard case .children(let children) = snapshot.node.content else { return .bool(false) }
            guard case .array(let names)? = argument else { return .bool(true) }
            for name in names {
                guard case .string(let key) = name else { throw RuleFailure(reason: "hasChildren() needs names") }
                if children[key] == nil { return .bool(false) }
            }
            return .bool(true)
        case .exists: return .bool(!snapshot.node.isEmpty)
        case .getPriority: return RuleValue(leaf: snapshot.node.priority)
        case .isNumber: if case .leaf(.number) = snapshot.node.content { return .bool(true) }; return .bool(false)
        case .isString: if case .leaf(.string) = snapshot.node.content { return .bool(true) }; return .bool(false)
        case .isBoolean: if case .leaf(.bool) = snapshot.node.content { return .bool(true) }; return .bool(false)
        default: throw RuleFailure(reason: "\(method.rawValue)() is a string method")
        }
    }
}
