import RTDBData

/// Evaluates a parsed transaction expression against the current value.
///
/// Recursion follows the tree's nesting, which the parser bounds; chains are loops. `evaluate`
/// only dispatches, and each construct has its own function, so a nesting level costs two
/// small frames rather than one frame with room for every construct's locals.
final class ExpressionEvaluator {
    /// Thrown by `abort(…)` through everything to `TransactionExpression.evaluate`.
    struct Abort: Error {
        var reason: String
    }

    private let current: Node
    /// `$` as a value, converted on first use: `$.a.b` walks the node instead, so a small
    /// read of a large value does not convert all of it.
    private var convertedCurrent: ExpressionValue?

    init(current: Node) {
        self.current = current
    }

    func evaluate(_ node: ExpressionNode) throws -> ExpressionValue {
        switch node {
        case .current:
            return currentValue()
        case .literal(let value, _):
            return value
        case .array(let items, _):
            return try evaluateArray(items)
        case .object(let members, _):
            return try evaluateObject(members)
        case .access(let base, let accessors):
            return try evaluateAccess(base, accessors)
        case .negate(let operand, let offset):
            return try evaluateNegation(operand, offset: offset)
        case .arithmetic(let first, let steps):
            return try evaluateArithmetic(first, steps)
        case .coalesce(let operands):
            return try evaluateCoalesce(operands)
        case .comparison(let comparison, let left, let right, let offset):
            return try evaluateComparison(comparison, left, right, offset: offset)
        case .not(let operand, let offset):
            return try evaluateNot(operand, offset: offset)
        case .logical(let logic, let operands, let operatorOffsets):
            return try evaluateLogic(logic, operands, operatorOffsets: operatorOffsets)
        case .conditional(let condition, let chosen, let otherwise, _):
            return try evaluateConditional(condition, then: chosen, else: otherwise)
        case .call(let function, let arguments, let offset):
            return try call(function, arguments, offset: offset)
        }
    }

    @inline(never)
    private func currentValue() -> ExpressionValue {
        if let convertedCurrent { return convertedCurrent }
        let value = ExpressionValue(current)
        convertedCurrent = value
        return value
    }

    // MARK: Constructs

    @inline(never)
    private func evaluateArray(_ items: [ExpressionNode]) throws -> ExpressionValue {
        var values: [ExpressionValue] = []
        values.reserveCapacity(items.count)
        for item in items {
            values.append(try evaluate(item))
        }
        return .array(values)
    }

    /// Members are evaluated in source order; a later duplicate key replaces an earlier one.
    @inline(never)
    private func evaluateObject(_ members: [ExpressionObjectMember]) throws -> ExpressionValue {
        var result: [ChildKey: ExpressionValue] = [:]
        for member in members {
            result[ChildKey(member.key)] = try evaluate(member.value)
        }
        return .object(result)
    }

    @inline(never)
    private func evaluateNegation(_ operand: ExpressionNode, offset: Int) throws -> ExpressionValue {
        let value = try evaluate(operand)
        guard case .number(let number) = value else {
            try ExpressionEvaluator.refuseServerValue(value, offset: offset)
            throw ExpressionError("cannot negate \(value.typeName)", offset: offset)
        }
        return .number(-number)
    }

    @inline(never)
    private func evaluateArithmetic(_ first: ExpressionNode, _ steps: [ExpressionArithmeticStep]) throws -> ExpressionValue {
        var result = try evaluate(first)
        for step in steps {
            let operand = try evaluate(step.operand)
            result = try ExpressionEvaluator.arithmetic(step.operation, result, operand, offset: step.offset)
        }
        return result
    }

    /// The first operand that is not null; later ones are not evaluated.
    @inline(never)
    private func evaluateCoalesce(_ operands: [ExpressionNode]) throws -> ExpressionValue {
        var result = ExpressionValue.null
        for operand in operands {
            result = try evaluate(operand)
            if !result.isNull { return result }
        }
        return result
    }

    @inline(never)
    private func evaluateComparison(_ comparison: ExpressionComparison, _ left: ExpressionNode, _ right: ExpressionNode,
                                    offset: Int) throws -> ExpressionValue {
        let leftValue = try evaluate(left)
        let rightValue = try evaluate(right)
        return .bool(try ExpressionEvaluator.compare(comparison, leftValue, rightValue, offset: offset))
    }

    @inline(never)
    private func evaluateNot(_ operand: ExpressionNode, offset: Int) throws -> ExpressionValue {
        let value = try evaluate(operand)
        guard case .bool(let truth) = value else {
            throw ExpressionError("'not' needs a boolean, found \(value.typeName)", offset: offset)
        }
        return .bool(!truth)
    }

    /// `and` stops at the first false, `or` at the first true.
    @inline(never)
    private func evaluateLogic(_ logic: ExpressionLogic, _ operands: [ExpressionNode], operatorOffsets: [Int]) throws -> ExpressionValue {
        let decisive = logic == .or
        for (position, operand) in operands.enumerated() {
            let value = try evaluate(operand)
            guard case .bool(let truth) = value else {
                // Operand i is blamed on the operator before it; the first on the first operator.
                let offset = position < operatorOffsets.count ? operatorOffsets[position] : operand.offset
                throw ExpressionError("'\(logic.rawValue)' needs booleans, found \(value.typeName)", offset: offset)
            }
            if truth == decisive { return .bool(decisive) }
        }
        return .bool(!decisive)
    }

    /// Only the chosen branch is evaluated.
    @inline(never)
    private func evaluateConditional(_ condition: ExpressionNode, then chosen: ExpressionNode,
                                     else otherwise: ExpressionNode) throws -> ExpressionValue {
        let value = try evaluate(condition)
        guard case .bool(let truth) = value else {
            throw ExpressionError("'if' needs a boolean condition, found \(value.typeName)", offset: condition.offset)
        }
        return try evaluate(truth ? chosen : otherwise)
    }

    // MARK: Member and index access

    /// Where a postfix chain stands: still inside `$` (a node), or in a computed value.
    private enum Container {
        case node(Node)
        case value(ExpressionValue)
    }

    @inline(never)
    private func evaluateAccess(_ base: ExpressionNode, _ accessors: [ExpressionAccessor]) throws -> ExpressionValue {
        var container: Container
        if case .current = base {
            container = .node(current)
        } else {
            container = .value(try evaluate(base))
        }
        for accessor in accessors {
            let (key, offset) = try accessKey(accessor)
            container = try ExpressionEvaluator.child(of: container, key, offset: offset)
        }
        switch container {
        case .node(let node): return ExpressionValue(node)
        case .value(let value): return value
        }
    }

    /// The key an accessor names (evaluating and checking an index) and the offset of its
    /// '.' or '['.
    @inline(never)
    private func accessKey(_ accessor: ExpressionAccessor) throws -> (AccessKey, Int) {
        switch accessor {
        case .member(let name, let offset):
            return (.member(name), offset)
        case .index(let expression, let offset):
            let index = try evaluate(expression)
            return (try ExpressionEvaluator.accessKey(index, offset: expression.offset), offset)
        }
    }

    @inline(never)
    private static func child(of container: Container, _ key: AccessKey, offset: Int) throws -> Container {
        switch container {
        case .node(let node): return .node(try child(of: node, key, offset: offset))
        case .value(let value): return .value(try child(of: value, key, offset: offset))
        }
    }

    /// A checked `.name` or `[index]`.
    private enum AccessKey {
        case member(String)
        case string(String)
        /// A whole number ≥ 0, kept as a Double: it may be too large for an Int.
        case number(Double)

        var text: String {
            switch self {
            case .member(let name): return "." + name
            case .string(let key): return "[\(ExpressionValue.quoted(key))]"
            case .number(let index): return "[\(JSONWriter.formatNumber(index))]"
            }
        }

        /// The child key the database would use: numbers as JavaScript prints them.
        var childKey: ChildKey {
            switch self {
            case .member(let key), .string(let key): return ChildKey(key)
            case .number(let index): return ChildKey(JSONWriter.formatNumber(index))
            }
        }
    }

    private static func accessKey(_ index: ExpressionValue, offset: Int) throws -> AccessKey {
        switch index {
        case .string(let key):
            return .string(key)
        case .number(let number) where number >= 0 && number.rounded(.towardZero) == number:
            return .number(number)
        default:
            throw ExpressionError("an index must be a string or a whole number of at least 0, found \(index.indexText)", offset: offset)
        }
    }

    /// A child of a node: arrays are children "0", "1", … there, so every key is a plain lookup.
    private static func child(of node: Node, _ key: AccessKey, offset: Int) throws -> Node {
        switch node.content {
        case .empty, .children:
            return node.child(key.childKey)
        case .leaf:
            throw ExpressionError("cannot take \(key.text) of \(ExpressionValue(node).typeName)", offset: offset)
        }
    }

    private static func child(of value: ExpressionValue, _ key: AccessKey, offset: Int) throws -> ExpressionValue {
        switch value {
        case .null:
            return .null
        case .object(let members):
            return members[key.childKey] ?? .null
        case .array(let items):
            let position: Int?
            switch key {
            case .number(let number): position = Int(exactly: number)
            case .member(let name), .string(let name): position = ExpressionValue.canonicalIndex(ChildKey(name))
            }
            guard let position, position >= 0, position < items.count else { return .null }
            return items[position]
        case .bool, .number, .string, .serverValue:
            throw ExpressionError("cannot take \(key.text) of \(value.typeName)", offset: offset)
        }
    }

    // MARK: Operators

    /// Server placeholders have no value here; say so instead of "cannot add now() and …".
    private static func refuseServerValue(_ values: ExpressionValue..., offset: Int, verb: String = "used in arithmetic") throws {
        for case .serverValue(let placeholder) in values {
            let name = placeholder == .timestamp ? "now()" : "a pending increment"
            throw ExpressionError("\(name) is only known to the server; it cannot be \(verb)", offset: offset)
        }
    }

    private static func arithmetic(_ operation: ExpressionArithmetic, _ left: ExpressionValue, _ right: ExpressionValue, offset: Int) throws -> ExpressionValue {
        if operation == .add {
            // null is the identity of '+' (as in jq), so `$ + 1` counts from nothing.
            if left.isNull { return right }
            if right.isNull { return left }
        }
        guard case .number(let x) = left, case .number(let y) = right else {
            try refuseServerValue(left, right, offset: offset)
            return try combine(operation, left, right, offset: offset)
        }
        let result: Double
        switch operation {
        case .add: result = x + y
        case .subtract: result = x - y
        case .multiply: result = x * y
        case .divide:
            guard y != 0 else { throw ExpressionError("division by zero", offset: offset) }
            result = x / y
        case .remainder:
            guard y != 0 else { throw ExpressionError("modulo by zero", offset: offset) }
            // JavaScript's '%': the sign follows the dividend.
            result = x.truncatingRemainder(dividingBy: y)
        }
        guard result.isFinite else {
            throw ExpressionError("the result of '\(operation.rawValue)' is too large (not a finite number)", offset: offset)
        }
        return .number(result)
    }

    /// '+' on strings, arrays and objects; the type error for every other mix.
    private static func combine(_ operation: ExpressionArithmetic, _ left: ExpressionValue, _ right: ExpressionValue, offset: Int) throws -> ExpressionValue {
        if operation == .add {
            switch (left, right) {
            case let (.string(x), .string(y)):
                return .string(x + y)
            case let (.array(x), .array(y)):
                return .array(x + y)
            case let (.object(x), .object(y)):
                // A shallow merge: the right side wins, and its null members remove keys.
                var merged = x
                for (key, value) in y {
                    merged[key] = value.isNull ? nil : value
                }
                return .object(merged)
            default:
                break
            }
        }
        let a = left.typeName, b = right.typeName
        let message: String
        switch operation {
        case .add: message = "cannot add \(a) and \(b)"
        case .subtract: message = "cannot subtract \(b) from \(a)"
        case .multiply: message = "cannot multiply \(a) by \(b)"
        case .divide: message = "cannot divide \(a) by \(b)"
        case .remainder: message = "cannot take the remainder of \(a) divided by \(b)"
        }
        throw ExpressionError(message, offset: offset)
    }

    private static func compare(_ comparison: ExpressionComparison, _ left: ExpressionValue, _ right: ExpressionValue, offset: Int) throws -> Bool {
        switch comparison {
        case .equal: return ExpressionValue.deepEqual(left, right)
        case .notEqual: return !ExpressionValue.deepEqual(left, right)
        case .less: return try order(left, right, offset: offset) < 0
        case .lessOrEqual: return try order(left, right, offset: offset) <= 0
        case .greater: return try order(left, right, offset: offset) > 0
        case .greaterOrEqual: return try order(left, right, offset: offset) >= 0
        }
    }

    /// -1, 0 or 1 for two numbers or two strings; a type error for anything else.
    private static func order(_ left: ExpressionValue, _ right: ExpressionValue, offset: Int) throws -> Int {
        switch (left, right) {
        case let (.number(x), .number(y)):
            return x < y ? -1 : (x == y ? 0 : 1)
        case let (.string(x), .string(y)):
            // By UTF-8 bytes, which is Unicode scalar order: exact, as the database compares
            // keys, unlike Swift's String '<', which treats canonical equivalents as equal.
            if x.utf8.elementsEqual(y.utf8) { return 0 }
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1
        default:
            try refuseServerValue(left, right, offset: offset, verb: "compared")
            throw ExpressionError("cannot compare \(left.typeName) and \(right.typeName)", offset: offset)
        }
    }

    // MARK: Functions

    @inline(never)
    private func call(_ function: ExpressionFunction, _ arguments: [ExpressionNode], offset: Int) throws -> ExpressionValue {
        if function == .now { return .serverValue(.timestamp) }
        // The parser checked the count; a missing argument is still not a reason to trap.
        guard let argument = arguments.first else {
            throw ExpressionError("\(function.rawValue)() takes 1 argument, found 0", offset: offset)
        }
        let value = try evaluate(argument)
        return try ExpressionEvaluator.apply(function, to: value, argumentOffset: argument.offset)
    }

    @inline(never)
    private static func apply(_ function: ExpressionFunction, to value: ExpressionValue, argumentOffset: Int) throws -> ExpressionValue {
        switch (function, value) {
        case (.len, .null):
            return .number(0)
        case (.len, .string(let text)):
            return .number(Double(text.count))
        case (.len, .array(let items)):
            return .number(Double(items.count))
        case (.len, .object(let members)):
            return .number(Double(members.values.filter { !$0.isNull }.count))
        case (.len, _):
            throw ExpressionError("len() needs a string, an array or an object, found \(value.typeName)", offset: argumentOffset)
        case (.keys, .null):
            return .array([])
        case (.keys, .array(let items)):
            return .array(items.indices.map { .number(Double($0)) })
        case (.keys, .object(let members)):
            return .array(ExpressionValue.presentMembers(members).map { .string($0.key.name) })
        case (.keys, _):
            throw ExpressionError("keys() needs an object or an array, found \(value.typeName)", offset: argumentOffset)
        case (.abort, .string(let reason)):
            throw Abort(reason: reason)
        case (.abort, _):
            throw ExpressionError("abort() needs a string (the reason), found \(value.typeName)", offset: argumentOffset)
        case (.now, _):
            return .serverValue(.timestamp)
        }
    }
}
