/// One token of a rule expression, with where it starts and ends in the expression's text
/// (in Unicode scalars).
struct RuleToken: Equatable {
    enum Kind: Equatable {
        case identifier(String)
        /// A `$name` variable bound by a wildcard.
        case variable(String)
        case number(Double)
        case string(String)
        /// `/pattern/flags`, only as the argument of `matches()`.
        case regex(pattern: String, flags: String)
        /// An operator or punctuation mark: `&&`, `===`, `(`, `.`, …
        case symbol(String)
        case end
    }

    let kind: Kind
    let offset: Int
    let end: Int

    /// How an error message names the token.
    var described: String {
        switch kind {
        case .identifier(let name), .variable(let name): return "'\(name)'"
        case .number(let n): return "the number \(n)"
        case .string: return "a string"
        case .regex: return "a regular expression"
        case .symbol(let s): return "'\(s)'"
        case .end: return "the end of the expression"
        }
    }
}
