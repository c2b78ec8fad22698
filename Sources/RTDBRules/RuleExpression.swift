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

enum RuleVariable: String, CaseIterable, Sendable {
    case auth, now, root, data, newData, query
}

enum RuleOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case plus = "+", minus = "-", times = "*", divide = "/", remainder = "%"
}
