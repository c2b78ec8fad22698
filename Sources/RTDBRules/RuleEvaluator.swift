import RTDBData

/// What a rule sees when it runs at one location.
struct RuleContext {
    let auth: RuleValue
    let now: Double
    /// The data before the request.
    let root: Node
    /// The data as the write would leave it (the same as `root` for reads).
    let newRoot: Node
    let query: RuleQuery
    /// The rule's location, and the `$` variables its wildcards bound.
    var path: Path
    var variables: [String: String]
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
    static func isTrue(_ expression: RuleExpression, in context: RuleContext) -> Bool {
        guard case .bool(true)? = try? evaluate(expression, context) else { return false }
        return true
    }

    static func evaluate(_ expression: RuleExpression, _ c: RuleContext) throws(RuleFailure) -> RuleValue {
        switch expression {
        case .constant(let value): return value
        case .array(let items):
            var values: [RuleValue] = []
            for item in items { values.append(try evaluate(item, c)) }
            return .array(values)
        case .variable(let variable):
            switch variable {
            case .auth: return c.auth
            case .now: return .number(c.now)
            case .root: return .snapshot(RuleSnapshot(root: c.root, path: .root))
            case .data: return .snapshot(RuleSnapshot(root: c.root, path: c.path))
            case .newData: return .snapshot(RuleSnapshot(root: c.newRoot, path: c.path))
            case .query: return .query(c.query)
            }
        case .bound(let name):
            guard let value = c.variables[name] else { throw RuleFailure(reason: "\(name) is not bound") }
            return .string(value)
        case .member(let base, let name):
            switch try evaluate(base, c) {
            case .object(let members): return members[name] ?? .null
            case .string(let s) where name == "length": return .number(Double(s.utf16.count))
            case .query(let query): return query.property(name)
            case .null: throw RuleFailure(reason: "cannot read '\(name)' of null")
            default: throw RuleFailure(reason: "no property '\(name)'")
            }
        case .index(let base, let key):
            let container = try evaluate(base, c)
            let index = try evaluate(key, c)
            switch (container, index) {
            case let (.object(members), _):
                guard let name = index.text else { throw RuleFailure(reason: "an object's index must be a string") }
                return members[name] ?? .null
            case let (.array(items), .number(n)):
                guard let i = Int(exactly: n), items.indices.contains(i) else { return .null }
                return items[i]
            default: throw RuleFailure(reason: "cannot index this value")
            }
        case .call(let base, let method, let arguments):
            let receiver = try evaluate(base, c)
            var values: [RuleValue] = []
            for argument in arguments { values.append(try evaluate(argument, c)) }
            return try call(method, on: receiver, values)
        case .not(let operand):
            return .bool(!(try boolean(operand, c)))
        case .negate(let operand):
            guard case .number(let n) = try evaluate(operand, c) else { throw RuleFailure(reason: "'-' needs a number") }
            return .number(-n)
        case .and(let left, let right):
            guard try boolean(left, c) else { return .bool(false) }
            return .bool(try boolean(right, c))
        case .or(let left, let right):
            if try boolean(left, c) { return .bool(true) }
            return .bool(try boolean(right, c))
        case .conditional(let condition, let yes, let no):
            return try evaluate(try boolean(condition, c) ? yes : no, c)
        case .binary(let op, let left, let right):
            return try binary(op, try evaluate(left, c), try evaluate(right, c))
        }
    }

    private static func boolean(_ expression: RuleExpression, _ c: RuleContext) throws(RuleFailure) -> Bool {
        guard case .bool(let b) = try evaluate(expression, c) else { throw RuleFailure(reason: "not a boolean") }
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

    private static func call(_ method: RuleMethod, on receiver: RuleValue, _ arguments: [RuleValue]) throws(RuleFailure) -> RuleValue {
        if case .snapshot(let snapshot) = receiver { return try call(method, on: snapshot, arguments) }
        guard case .string(let s) = receiver else { throw RuleFailure(reason: "\(method.rawValue)() needs a string") }
        func argument(_ i: Int) throws(RuleFailure) -> String {
            guard arguments.indices.contains(i), case .string(let value) = arguments[i] else {
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
            return .string(target.isEmpty ? s : s.replacing(target, with: replacement))
        case .toLowerCase: return .string(s.lowercased())
        case .toUpperCase: return .string(s.uppercased())
        case .matches:
            guard case .regex(let regex)? = arguments.first else { throw RuleFailure(reason: "matches() needs a regular expression") }
            return .bool(regex.matches(s))
        default: throw RuleFailure(reason: "\(method.rawValue)() is a snapshot method")
        }
    }

    private static func call(_ method: RuleMethod, on snapshot: RuleSnapshot, _ arguments: [RuleValue]) throws(RuleFailure) -> RuleValue {
        func childPath() throws(RuleFailure) -> Path {
            guard case .string(let text)? = arguments.first else { throw RuleFailure(reason: "\(method.rawValue)() needs a path string") }
            let relative = Path(text)
            guard !relative.isRoot, relative.keys.allSatisfy({ Path.problem(with: $0) == nil }) else {
                throw RuleFailure(reason: "\(method.rawValue)() was given an invalid path")
            }
            return snapshot.path.appending(relative)
        }
        switch method {
        case .val: return RuleValue(node: snapshot.node)
        case .child: return .snapshot(RuleSnapshot(root: snapshot.root, path: try childPath()))
        case .parent:
            guard let parent = snapshot.path.parent else { throw RuleFailure(reason: "the root has no parent") }
            return .snapshot(RuleSnapshot(root: snapshot.root, path: parent))
        case .hasChild: return .bool(!snapshot.root.child(at: try childPath()).isEmpty)
        case .hasChildren:
            guard case .children(let children) = snapshot.node.content else { return .bool(false) }
            guard case .array(let names)? = arguments.first else { return .bool(true) }
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
