/// What a rule expression is known to produce before it runs, to refuse at load time what
/// could never work (`data == null`, `auth.uid.length()`, a `.read` rule that is a string).
/// `any` is what only the data or the token decides: `auth`, `val()`, a claim.
enum RuleType: Equatable, CustomStringConvertible {
    case boolean, number, string, snapshot, regex, array, query, any

    var description: String {
        switch self {
        case .boolean: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .snapshot: return "a data snapshot"
        case .regex: return "a regular expression"
        case .array: return "an array"
        case .query: return "the query"
        case .any: return "a value"
        }
    }

    /// Whether a value of this type may stand where `expected` is required.
    func fits(_ expected: RuleType) -> Bool { self == expected || self == .any || expected == .any }
}
