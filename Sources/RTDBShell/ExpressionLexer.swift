import RTDBData

/// Splits a transaction expression into tokens.
///
/// Works on Unicode scalars, so string literals and escapes follow JSON exactly even where a
/// quote or backslash is followed by a combining mark, but reports offsets in Characters, which
/// is what the shell counts columns in.
struct ExpressionLexer {
    private var scalars: [Unicode.Scalar] = []
    /// The Character offset of each scalar, plus one entry for the end of the source.
    private var characterOffsets: [Int] = []
    private var position = 0

    init(_ source: String) {
        var characterOffset = 0
        for character in source {
            for scalar in character.unicodeScalars {
                scalars.append(scalar)
                characterOffsets.append(characterOffset)
            }
            characterOffset += 1
        }
        characterOffsets.append(characterOffset)
    }

    /// All tokens, ending with one `.end` token.
    mutating func tokenize() throws -> [ExpressionToken] {
        var tokens: [ExpressionToken] = []
        while true {
            skipWhitespace()
            guard let scalar = peek() else {
                tokens.append(ExpressionToken(kind: .end, offset: offset(of: position), text: ""))
                return tokens
            }
            tokens.append(try token(startingWith: scalar))
        }
    }

    // MARK: Positions

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        let index = position + ahead
        return index < scalars.count ? scalars[index] : nil
    }

    private func offset(of scalarIndex: Int) -> Int {
        scalarIndex < characterOffsets.count ? characterOffsets[scalarIndex] : (characterOffsets.last ?? 0)
    }

    private func text(from start: Int) -> String {
        let end = min(position, scalars.count)
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[min(start, end)..<end])
        return String(view)
    }

    private func error(_ message: String, at scalarIndex: Int) -> ExpressionError {
        ExpressionError(message, offset: offset(of: scalarIndex))
    }

    private mutating func skipWhitespace() {
        while let scalar = peek(), scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
            position += 1
        }
    }

    private static func isDigit(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return false }
        return scalar >= "0" && scalar <= "9"
    }

    private static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isXIDStart
    }

    private static func isNameContinue(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isXIDContinue
    }

    // MARK: Tokens

    private mutating func token(startingWith scalar: Unicode.Scalar) throws -> ExpressionToken {
        let start = position
        if scalar == "\"" { return try stringToken() }
        if ExpressionLexer.isDigit(scalar) { return try numberToken() }
        if ExpressionLexer.isNameStart(scalar) {
            while let next = peek(), ExpressionLexer.isNameContinue(next) { position += 1 }
            let name = text(from: start)
            return ExpressionToken(kind: .name(name), offset: offset(of: start), text: name)
        }
        if scalar == "$" {
            position += 1
            return ExpressionToken(kind: .dollar, offset: offset(of: start), text: "$")
        }
        let symbol = try symbolAtPosition()
        return ExpressionToken(kind: .symbol(symbol), offset: offset(of: start), text: symbol.rawValue)
    }

    /// Reads an operator or punctuation mark, with a hint for the ones people bring from
    /// other languages.
    private mutating func symbolAtPosition() throws -> ExpressionSymbol {
        let start = position
        let first = peek()
        let second = peek(1)
        let pair: ExpressionSymbol?
        switch (first, second) {
        case ("="?, "="?): pair = .equal
        case ("!"?, "="?): pair = .notEqual
        case ("<"?, "="?): pair = .lessOrEqual
        case (">"?, "="?): pair = .greaterOrEqual
        case ("?"?, "?"?): pair = .coalesce
        default: pair = nil
        }
        if let pair {
            position += 2
            return pair
        }
        guard let first else { throw error("unexpected end of expression", at: start) }
        if let single = ExpressionSymbol(rawValue: String(first)) {
            position += 1
            return single
        }
        switch first {
        case "=": throw error("unexpected '='; use '==' to compare", at: start)
        case "!": throw error("unexpected '!'; use 'not'", at: start)
        case "&": throw error("unexpected '&'; use 'and'", at: start)
        case "|": throw error("unexpected '|'; use 'or'", at: start)
        case "?": throw error("unexpected '?'; use '??' for a default", at: start)
        case "'": throw error("strings take double quotes, as in \"text\"", at: start)
        default: throw error("unexpected character \(ExpressionLexer.describe(first))", at: start)
        }
    }

    /// A character for a message: quoted when printable, U+XXXX when not.
    private static func describe(_ scalar: Unicode.Scalar) -> String {
        // Invisible ones (controls, format characters, spaces other than ' ') by code point.
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.properties.generalCategory == .format
            || (scalar.properties.isWhitespace && scalar != " ") {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return "'\(scalar)'"
    }

    /// A number in JSON syntax without its sign: a leading '-' is the unary operator.
    private mutating func numberToken() throws -> ExpressionToken {
        let start = position
        if peek() == "0" {
            position += 1
            if ExpressionLexer.isDigit(peek()) { throw error("numbers must not have leading zeros", at: start) }
        } else {
            while ExpressionLexer.isDigit(peek()) { position += 1 }
        }
        if peek() == "." {
            let dot = position
            position += 1
            guard ExpressionLexer.isDigit(peek()) else { throw error("expected a digit after '.' in a number", at: dot) }
            while ExpressionLexer.isDigit(peek()) { position += 1 }
        }
        if peek() == "e" || peek() == "E" {
            let exponent = position
            position += 1
            if peek() == "+" || peek() == "-" { position += 1 }
            guard ExpressionLexer.isDigit(peek()) else { throw error("expected a digit in the exponent of a number", at: exponent) }
            while ExpressionLexer.isDigit(peek()) { position += 1 }
        }
        let literal = text(from: start)
        // The syntax is checked above, so only a value too large for a Double is refused here.
        guard let value = Double(literal), value.isFinite else {
            throw error("number out of range", at: start)
        }
        return ExpressionToken(kind: .number(value), offset: offset(of: start), text: literal)
    }

    /// A JSON string: escapes decoded, raw control characters refused.
    private mutating func stringToken() throws -> ExpressionToken {
        let start = position
        position += 1  // the opening quote
        var value = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw error("unterminated string", at: start) }
            switch scalar {
            case "\"":
                position += 1
                return ExpressionToken(kind: .string(String(value)), offset: offset(of: start), text: text(from: start))
            case "\\":
                value.append(try escapeSequence(stringStart: start))
            case _ where scalar.value < 0x20:
                throw error("control character \(ExpressionLexer.describe(scalar)) in a string; write it as an escape such as \\n", at: position)
            default:
                value.append(scalar)
                position += 1
            }
        }
    }

    /// Decodes the escape at `position` (a backslash) and moves past it.
    private mutating func escapeSequence(stringStart: Int) throws -> Unicode.Scalar {
        let backslash = position
        switch JSONEscape.decode(scalars, at: backslash) {
        case .success(let decoded):
            position = decoded.next
            return decoded.scalar
        case .failure(.unterminated): throw error("unterminated string", at: stringStart)
        case .failure(.badHex): throw error("expected four hex digits after \\u", at: backslash)
        case .failure(.unpairedSurrogate): throw error("unpaired surrogate in a \\u escape", at: backslash)
        case .failure(.invalid(let letter)): throw error("invalid escape '\\\(letter)' in a string", at: backslash)
        }
    }
}
