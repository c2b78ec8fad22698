/// One token of a transaction expression and where it starts.
struct ExpressionToken: Sendable {
    enum Kind: Equatable, Sendable {
        case dollar
        case number(Double)
        case string(String)
        /// A keyword, a function name or a bare object key: the parser decides which.
        case name(String)
        case symbol(ExpressionSymbol)
        case end
    }

    var kind: Kind
    /// In Characters from the start of the source.
    var offset: Int
    /// The token as written, for messages.
    var text: String

    func isSymbol(_ symbol: ExpressionSymbol) -> Bool { kind == .symbol(symbol) }

    func isName(_ name: String) -> Bool { kind == .name(name) }

    /// The token as a message names it after "found": `','`, `a string`, `end of expression`.
    var foundDescription: String {
        switch kind {
        case .end: return "end of expression"
        case .string: return "a string"
        default: return "'\(shortText)'"
        }
    }

    /// "unexpected ','", "unexpected string", "unexpected end of expression".
    var unexpectedMessage: String {
        switch kind {
        case .end: return "unexpected end of expression"
        case .string: return "unexpected string"
        default: return "unexpected '\(shortText)'"
        }
    }

    /// Long numbers and names are cut so a message stays one line.
    private var shortText: String {
        text.count > 24 ? String(text.prefix(24)) + "…" : text
    }
}

/// Punctuation and operators.
enum ExpressionSymbol: String, Sendable {
    case openParen = "(", closeParen = ")"
    case openBracket = "[", closeBracket = "]"
    case openBrace = "{", closeBrace = "}"
    case comma = ",", colon = ":", dot = "."
    case plus = "+", minus = "-", star = "*", slash = "/", percent = "%"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case coalesce = "??"
}
