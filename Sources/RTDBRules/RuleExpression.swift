import RTDBData

/// A parsed, type-checked rule expression.
indirect enum RuleExpression: Sendable {
    case constant(RuleValue)
    case array([RuleExpression])
    /// `auth`, `now`, `root`, `data`, `newData`, `query`.
    case variable(RuleVariable)
    /// A `$name` bound by a wildcard above the rule.
    case bound(String)
    case member(RuleExpression, String)
    case index(RuleExpression, RuleExpression)
    case call(RuleExpression, RuleMethod, [RuleExpression])
    /// `child('a/b')` and `hasChild('a/b')` with a constant path, split and checked once.
    case child(RuleExpression, Path)
    case hasChild(RuleExpression, Path)
    case not(RuleExpression)
    case negate(RuleExpression)
    case and(RuleExpression, RuleExpression)
    case or(RuleExpression, RuleExpression)
    case binary(RuleOperator, RuleExpression, RuleExpression)
    case conditional(RuleExpression, RuleExpression, RuleExpression)
}

extension RuleExpression {
    /// Whether the expression reads the database (`data`, `newData`, `root`): then a write
    /// can change its outcome.
    var readsData: Bool { mentions(anyOf: [.data, .newData, .root]) }

    /// Whether the expression names any of `variables`.
    func mentions(anyOf variables: [RuleVariable]) -> Bool {
        switch self {
        case .constant, .bound: return false
        case .variable(let variable): return variables.contains(variable)
        case .array(let items): return items.contains { $0.mentions(anyOf: variables) }
        case .member(let base, _), .child(let base, _), .hasChild(let base, _), .not(let base), .negate(let base):
            return base.mentions(anyOf: variables)
        case .index(let a, let b), .and(let a, let b), .or(let a, let b), .binary(_, let a, let b):
            return a.mentions(anyOf: variables) || b.mentions(anyOf: variables)
        case .call(let base, _, let arguments):
            return base.mentions(anyOf: variables) || arguments.contains { $0.mentions(anyOf: variables) }
        case .conditional(let a, let b, let c):
            return a.mentions(anyOf: variables) || b.mentions(anyOf: variables) || c.mentions(anyOf: variables)
        }
    }
}

enum RuleVariable: String, CaseIterable, Sendable {
    case auth, now, root, data, newData, query
}

enum RuleOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case plus = "+", minus = "-", times = "*", divide = "/", remainder = "%"
}
