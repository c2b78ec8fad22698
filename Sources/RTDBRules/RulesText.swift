import RTDBData

/// The rules file as Firebase accepts it: JSON with `//` and `/* */` comments, read into a
/// tree that remembers where each value starts, so an error names its line and column,
/// down to the character inside a rule expression.
indirect enum RulesText {
    case object([(key: String, keyOffset: Int, value: RulesText)], offset: Int)
    case array([RulesText], offset: Int)
    /// A string with the file offset of each of its scalars (escapes make them differ).
    case string(String, offsets: [Int], offset: Int)
    case number(Double, offset: Int)
    case bool(Bool, offset: Int)
    case null(offset: Int)

    var offset: Int {
        switch self {
        case .object(_, let o), .array(_, let o), .string(_, _, let o), .number(_, let o), .bool(_, let o), .null(let o): return o
        }
    }

    var kindName: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    static func parse(_ scalars: [Unicode.Scalar]) throws(RuleSyntaxError) -> RulesText {
        var reader = Reader(scalars: scalars)
        try reader.skipSpace()
        let value = try reader.value(depth: 0)
        try reader.skipSpace()
        guard reader.index == scalars.count else { throw RuleSyntaxError("unexpected text after the rules object", at: reader.index) }
        return value
    }

    private struct Reader {
        let scalars: [Unicode.Scalar]
        var index = 0

        var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func skipSpace() throws(RuleSyntaxError) {
            while let c = current {
                if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{FEFF}" { index += 1; continue }
                guard c == "/", index + 1 < scalars.count else { return }
                if scalars[index + 1] == "/" {
                    while let c = current, c != "\n" { index += 1 }
                } else if scalars[index + 1] == "*" {
                    let start = index
                    index += 2
                    while index + 1 < scalars.count, !(scalars[index] == "*" && scalars[index + 1] == "/") { index += 1 }
                    guard index + 1 < scalars.count else { throw RuleSyntaxError("this comment has no closing */", at: start) }
                    index += 2
                } else {
                    return
                }
            }
        }

        mutating func value(depth: Int) throws(RuleSyntaxError) -> RulesText {
            guard depth < 64 else { throw RuleSyntaxError("the rules are nested too deeply", at: index) }
            let start = index
            switch current {
            case "{"?:
                index += 1
                var members: [(key: String, keyOffset: Int, value: RulesText)] = []
                var keys = Set<String>()  // a scan of `members` made each key cost the ones before it
                try skipSpace()
                if current == "}" { index += 1; return .object(members, offset: start) }
                while true {
                    try skipSpace()
                    let keyOffset = index
                    guard current == "\"" else { throw RuleSyntaxError("expected a quoted name", at: index) }
                    let (key, _) = try string()
                    guard keys.insert(key).inserted else { throw RuleSyntaxError("\"\(key)\" appears twice in this object", at: keyOffset) }
                    try skipSpace()
                    guard current == ":" else { throw RuleSyntaxError("expected ':' after \"\(key)\"", at: index) }
                    index += 1
                    try skipSpace()
                    members.append((key, keyOffset, try value(depth: depth + 1)))
                    try skipSpace()
                    if current == "," {
                        index += 1
                        try skipSpace()
                        if current == "}" { index += 1; return .object(members, offset: start) }  // a trailing comma
                        continue
                    }
                    guard current == "}" else { throw RuleSyntaxError("expected ',' or '}'", at: index) }
                    index += 1
                    return .object(members, offset: start)
                }
            case "["?:
                index += 1
                var items: [RulesText] = []
                try skipSpace()
                if current == "]" { index += 1; return .array(items, offset: start) }
                while true {
                    try skipSpace()
                    items.append(try value(depth: depth + 1))
                    try skipSpace()
                    if current == "," { index += 1; try skipSpace(); if current == "]" { index += 1; return .array(items, offset: start) }; continue }
                    guard current == "]" else { throw RuleSyntaxError("expected ',' or ']'", at: index) }
                    index += 1
                    return .array(items, offset: start)
                }
            case "\""?:
                let (text, offsets) = try string()
                return .string(text, offsets: offsets, offset: start)
            case "t"?: try word("true"); return .bool(true, offset: start)
            case "f"?: try word("false"); return .bool(false, offset: start)
            case "n"?: try word("null"); return .null(offset: start)
            case let c? where c == "-" || ("0"..."9").contains(c):
                while let c = current, "+-.eE0123456789".unicodeScalars.contains(c) { index += 1 }
                let text = String(String.UnicodeScalarView(scalars[start..<index]))
                guard let number = Double(text) else { throw RuleSyntaxError("'\(text)' is not a number", at: start) }
                return .number(number, offset: start)
            case let c?: throw RuleSyntaxError("unexpected '\(c)'", at: index)
            case nil: throw RuleSyntaxError("the rules end too early", at: index)
            }
        }

        mutating func word(_ word: String) throws(RuleSyntaxError) {
            let start = index
            for s in word.unicodeScalars {
                guard current == s else { throw RuleSyntaxError("unexpected text; expected \(word)", at: start) }
                index += 1
            }
        }

        mutating func string() throws(RuleSyntaxError) -> (String, [Int]) {
            let start = index
            index += 1
            var out = String.UnicodeScalarView()
            var offsets: [Int] = []
            while let c = current {
                let at = index
                index += 1
                if c == "\"" { return (String(out), offsets) }
                if c == "\n" { break }
                guard c == "\\" else { out.append(c); offsets.append(at); continue }
                let decoded: Unicode.Scalar
                switch JSONEscape.decode(scalars, at: at) {
                case .success(let escape):
                    decoded = escape.scalar
                    index = escape.next
                case .failure(.unterminated) where index >= scalars.count:
                    throw RuleSyntaxError("this string has no closing quote", at: start)
                case .failure(.invalid(let letter)):
                    // Kept as the letter, as rules files have always been read.
                    decoded = letter
                    index += 1
                case .failure(.unpairedSurrogate):
                    throw RuleSyntaxError("a \\u escape names half of a surrogate pair", at: at)
                case .failure:
                    throw RuleSyntaxError("a \\u escape needs four hexadecimal digits", at: at)
                }
                out.append(decoded)
                offsets.append(at)
            }
            throw RuleSyntaxError("this string has no closing quote", at: start)
        }
    }
}
