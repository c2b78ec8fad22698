/// Splits a rule expression into tokens. A `/` starts a regular expression where a value is
/// expected (after `(`, `,` or an operator) and divides after a value, as in JavaScript.
struct RuleLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// Every token, ending with `.end`; offsets are in Unicode scalars from the start.
    static func tokens(_ text: String) throws(RuleSyntaxError) -> [RuleToken] {
        var lexer = RuleLexer(text)
        var tokens: [RuleToken] = []
        while true {
            let token = try lexer.next(afterValue: tokens.last.map(Self.endsValue) ?? false)
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private static func endsValue(_ token: RuleToken) -> Bool {
        switch token.kind {
        case .identifier, .variable, .number, .string, .regex: return true
        case .symbol(let s): return s == ")" || s == "]"
        case .end: return false
        }
    }

    private static let symbols = ["===", "!==", "==", "!=", "<=", ">=", "&&", "||",
                                  "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", ".", "?", ":"]

    private mutating func next(afterValue: Bool) throws(RuleSyntaxError) -> RuleToken {
        while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
        let start = index
        guard index < scalars.count else { return RuleToken(kind: .end, offset: start, end: index) }
        let c = scalars[index]
        if isIdentifierStart(c) || c == "$" {
            index += 1
            while index < scalars.count, isIdentifierPart(scalars[index]) { index += 1 }
            let name = String(String.UnicodeScalarView(scalars[start..<index]))
            if c == "$" {
                guard name.count > 1 else { throw RuleSyntaxError("'$' must begin a variable name such as $uid", at: start) }
                return RuleToken(kind: .variable(name), offset: start, end: index)
            }
            return RuleToken(kind: .identifier(name), offset: start, end: index)
        }
        if ("0"..."9").contains(c) || (c == "." && index + 1 < scalars.count && ("0"..."9").contains(scalars[index + 1])) {
            return try number(start)
        }
        if c == "'" || c == "\"" { return try string(quote: c, start) }
        if c == "/" && !afterValue { return try regex(start) }
        for symbol in Self.symbols where matches(symbol) {
            index += symbol.unicodeScalars.count
            return RuleToken(kind: .symbol(symbol), offset: start, end: index)
        }
        throw RuleSyntaxError("unexpected character '\(c)'", at: start)
    }

    private func matches(_ symbol: String) -> Bool {
        var i = index
        for s in symbol.unicodeScalars {
            guard i < scalars.count, scalars[i] == s else { return false }
            i += 1
        }
        return true
    }

    private func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "_"
    }

    private func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || ("0"..."9").contains(c) || c == "$"
    }

    private mutating func number(_ start: Int) throws(RuleSyntaxError) -> RuleToken {
        while index < scalars.count, ("0"..."9").contains(scalars[index]) || scalars[index] == "." { index += 1 }
        if index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            index += 1
            if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" { index += 1 }
            while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        }
        let text = String(String.UnicodeScalarView(scalars[start..<index]))
        guard let value = Double(text), value.isFinite else { throw RuleSyntaxError("'\(text)' is not a number", at: start) }
        return RuleToken(kind: .number(value), offset: start, end: index)
    }

    private mutating func string(quote: Unicode.Scalar, _ start: Int) throws(RuleSyntaxError) -> RuleToken {
        index += 1
        var out = String.UnicodeScalarView()
        while index < scalars.count {
            let c = scalars[index]
            index += 1
            if c == quote { return RuleToken(kind: .string(String(out)), offset: start, end: index) }
            guard c == "\\" else { out.append(c); continue }
            guard index < scalars.count else { break }
            let e = scalars[index]
            index += 1
            switch e {
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "u":
                guard index + 4 <= scalars.count,
                      let code = UInt32(String(String.UnicodeScalarView(scalars[index..<index + 4])), radix: 16),
                      let scalar = Unicode.Scalar(code) else {
                    throw RuleSyntaxError("a \\u escape needs four hexadecimal digits", at: index - 2)
                }
                out.append(scalar)
                index += 4
            default: out.append(e)
            }
        }
        throw RuleSyntaxError("this string has no closing \(quote)", at: start)
    }

    private mutating func regex(_ start: Int) throws(RuleSyntaxError) -> RuleToken {
        index += 1
        var pattern = String.UnicodeScalarView()
        var inClass = false
        while index < scalars.count {
            let c = scalars[index]
            index += 1
            if c == "\\", index < scalars.count {
                pattern.append(c)
                pattern.append(scalars[index])
                index += 1
                continue
            }
            if c == "[" { inClass = true } else if c == "]" { inClass = false }
            if c == "/" && !inClass {
                let flagsStart = index
                while index < scalars.count, isIdentifierPart(scalars[index]) { index += 1 }
                let flags = String(String.UnicodeScalarView(scalars[flagsStart..<index]))
                guard flags.allSatisfy({ $0 == "i" }), flags.count <= 1 else {
                    throw RuleSyntaxError("unknown regular expression flags '\(flags)' (only 'i' is supported)", at: flagsStart)
                }
                return RuleToken(kind: .regex(pattern: String(pattern), flags: flags), offset: start, end: index)
            }
            pattern.append(c)
        }
        throw RuleSyntaxError("this regular expression has no closing /", at: start)
    }
}
