import RTDBData

/// A parsed, type-checked rule expression. Its parts are terms: each knows where it is in
/// the rule's text, so a trace can show what each part was worth and a coverage report can
/// mark it.
indirect enum RuleExpression: Sendable {
    case constant(RuleValue)
    case array([RuleTerm])
    /// `auth`, `now`, `root`, `data`, `newData`, `query`.
    case variable(RuleVariable)
    /// A `$name` bound by a wildcard above the rule.
    case bound(String)
    case member(RuleTerm, String)
    case index(RuleTerm, RuleTerm)
    case call(RuleTerm, RuleMethod, [RuleTerm])
    /// `child('a/b')` and `hasChild('a/b')` with a constant path, split and checked once.
    case child(RuleTerm, Path)
    case hasChild(RuleTerm, Path)
    case not(RuleTerm)
    case negate(RuleTerm)
    case and(RuleTerm, RuleTerm)
    case or(RuleTerm, RuleTerm)
    case binary(RuleOperator, RuleTerm, RuleTerm)
    case conditional(RuleTerm, RuleTerm, RuleTerm)
}

/// One part of a rule expression (the whole of it included), with its place in the rule's
/// text and its number among all the terms of its rules file.
struct RuleTerm: Sendable {
    let expression: RuleExpression
    /// Where it is in the rule's text, in Unicode scalars.
    let span: Range<Int>
    /// Its number in the rules file, from 0: what coverage counts by.
    let id: Int

    /// The terms it is made of, in the order of the text.
    var parts: [RuleTerm] {
        switch expression {
        case .constant, .variable, .bound: return []
        case .array(let items): return items
        case .member(let base, _), .child(let base, _), .hasChild(let base, _), .not(let base), .negate(let base): return [base]
        case .index(let a, let b), .and(let a, let b), .or(let a, let b), .binary(_, let a, let b): return [a, b]
        case .call(let base, _, let arguments): return [base] + arguments
        case .conditional(let a, let b, let c): return [a, b, c]
        }
    }

    /// Whether the expression reads the database (`data`, `newData`, `root`): then a write
    /// can change its outcome.
    var readsData: Bool { mentions(anyOf: [.data, .newData, .root]) }

    /// Whether the expression names any of `variables`.
    func mentions(anyOf variables: [RuleVariable]) -> Bool {
        if case .variable(let variable) = expression { return variables.contains(variable) }
        return parts.contains { $0.mentions(anyOf: variables) }
    }
}

enum RuleVariable: String, CaseIterable, Sendable {
    case auth, now, root, data, newData, query
}

enum RuleOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case plus = "+", minus = "-", times = "*", divide = "/", remainder = "%"
}
