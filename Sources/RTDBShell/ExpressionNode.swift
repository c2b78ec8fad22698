import RTDBData

/// The syntax tree of a transaction expression. Offsets are in Characters from the start of
/// the source, kept for the messages of errors found while evaluating.
///
/// Chains of one operator (`a + b - c`, `a and b and c`, `a ?? b ?? c`, `$.a.b[0]`) are one node
/// holding a list, evaluated in a loop: the tree is only as deep as the source's nesting, which
/// the parser bounds, so neither evaluating nor freeing it can run out of stack.
indirect enum ExpressionNode: Sendable {
    case current(offset: Int)
    case literal(ExpressionValue, offset: Int)
    case array([ExpressionNode], offset: Int)
    /// Members in source order; a later duplicate key wins.
    case object([ExpressionObjectMember], offset: Int)
    case access(ExpressionNode, [ExpressionAccessor])
    case negate(ExpressionNode, offset: Int)
    /// `first op1 operand1 op2 operand2 …`, left to right, for `+ - * / %`.
    case arithmetic(ExpressionNode, [ExpressionArithmeticStep])
    /// The first operand that is not null, else the last; later operands are evaluated only
    /// when needed.
    case coalesce([ExpressionNode])
    case comparison(ExpressionComparison, ExpressionNode, ExpressionNode, offset: Int)
    case not(ExpressionNode, offset: Int)
    /// Operands of one `and` or `or` chain; `operatorOffsets[i]` is the operator before
    /// operand i + 1 (and, for operand 0, the first operator).
    case logical(ExpressionLogic, [ExpressionNode], operatorOffsets: [Int])
    /// `offset` is the `if`'s.
    case conditional(ExpressionNode, then: ExpressionNode, else: ExpressionNode, offset: Int)
    case call(ExpressionFunction, [ExpressionNode], offset: Int)

    /// Where the expression starts.
    var offset: Int {
        switch self {
        case .current(let offset), .literal(_, let offset), .array(_, let offset), .object(_, let offset),
             .negate(_, let offset), .not(_, let offset), .call(_, _, let offset), .conditional(_, _, _, let offset):
            return offset
        case .access(let base, _), .arithmetic(let base, _), .comparison(_, let base, _, _):
            return base.offset
        case .coalesce(let operands), .logical(_, let operands, _):
            return operands.first?.offset ?? 0
        }
    }
}

struct ExpressionObjectMember: Sendable {
    var key: String
    var keyOffset: Int
    var value: ExpressionNode
}

/// One step of a postfix chain: `.name` or `[index]`, with the offset of its '.' or '['.
enum ExpressionAccessor: Sendable {
    case member(String, offset: Int)
    case index(ExpressionNode, offset: Int)
}

struct ExpressionArithmeticStep: Sendable {
    var operation: ExpressionArithmetic
    /// The operator's offset.
    var offset: Int
    var operand: ExpressionNode
}

enum ExpressionArithmetic: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
}

enum ExpressionComparison: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

enum ExpressionLogic: String, Sendable {
    case and, or
}

enum ExpressionFunction: String, Sendable, CaseIterable {
    case len, keys, now, abort

    var argumentCount: Int {
        switch self {
        case .now: return 0
        case .len, .keys, .abort: return 1
        }
    }
}
