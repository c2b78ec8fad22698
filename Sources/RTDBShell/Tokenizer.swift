/// A word of a command line and where it starts (0-based, in characters).
public struct Token: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case word        // bare: a command, flag, path or bare value
        case doubleQuoted  // "…": JSON string syntax, kept with its quotes
        case singleQuoted  // '…': literal text, no escapes
        case json        // {…} or […]: a JSON object or array, kept whole
    }
    public var text: String
    /// In Unicode scalars from the start of the line.
    public var column: Int
    public var kind: Kind

    /// The token's text as a word: quotes removed from quoted tokens.
    public var unquoted: String {
        switch kind {
        case .word, .json: return text
        case .singleQuoted: return String(text.dropFirst().dropLast())
        case .doubleQuoted:
            return (try? RTDBDataBridge.decodeJSONString(text)) ?? String(text.dropFirst().dropLast())
        }
    }
}

/// A command line error: a message and the column it points at.
public struct ShellError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var column: Int?
    public init(_ message: String, column: Int? = nil) {
        self.message = message
        self.column = column
    }
    public var description: String { message }
}

/// Splits a line into tokens. A token starting with `{` or `[` runs to its matching bracket
/// (strings inside respected), so JSON with spaces needs no quoting: `set /a {"x": 1}`.
public enum Tokenizer {
    public static func tokenize(_ line: String) throws -> [Token] {
        let chars = Array(line.unicodeScalars)
        var tokens: [Token] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == " " || c == "\t" || c == "\r" || c == "\n" { i += 1; continue }
            let start = i
            switch c {
            case "\"":
                i = try endOfDoubleQuoted(chars, from: i)
                tokens.append(Token(text: String(String.UnicodeScalarView(chars[start..<i])), column: start, kind: .doubleQuoted))
            case "'":
                i += 1
                while i < chars.count && chars[i] != "'" { i += 1 }
                guard i < chars.count else { throw ShellError("unterminated single quote", column: start) }
                i += 1
                tokens.append(Token(text: String(String.UnicodeScalarView(chars[start..<i])), column: start, kind: .singleQuoted))
            case "{", "[":
                var depth = 0
                while i < chars.count {
                    let d = chars[i]
                    if d == "\"" { i = try endOfDoubleQuoted(chars, from: i); continue }
                    if d == "{" || d == "[" { depth += 1 }
                    if d == "}" || d == "]" {
                        depth -= 1
                        if depth == 0 { i += 1; break }
                    }
                    i += 1
                }
                if depth != 0 {
                    throw ShellError("unbalanced \(c == "{" ? "'{'" : "'['"): the JSON value is not closed", column: start)
                }
                tokens.append(Token(text: String(String.UnicodeScalarView(chars[start..<i])), column: start, kind: .json))
            default:
                while i < chars.count && !(chars[i] == " " || chars[i] == "\t" || chars[i] == "\r" || chars[i] == "\n") { i += 1 }
                tokens.append(Token(text: String(String.UnicodeScalarView(chars[start..<i])), column: start, kind: .word))
            }
            if i < chars.count && !(chars[i] == " " || chars[i] == "\t" || chars[i] == "\r" || chars[i] == "\n") {
                throw ShellError("expected a space after \(tokens.last!.text.prefix(20))", column: i)
            }
        }
        return tokens
    }

    private static func endOfDoubleQuoted(_ chars: [Unicode.Scalar], from start: Int) throws -> Int {
        var i = start + 1
        while i < chars.count {
            if chars[i] == "\\" { i += 2; continue }
            if chars[i] == "\"" { return i + 1 }
            i += 1
        }
        throw ShellError("unterminated double quote", column: start)
    }

    /// Tokens for words that arrive already split (command-line arguments).
    public static func tokens(fromArguments words: [String]) -> [Token] {
        var column = 0
        return words.map { word in
            defer { column += word.unicodeScalars.count + 1 }
            let kind: Token.Kind
            if word.hasPrefix("{") || word.hasPrefix("[") {
                kind = .json
            } else if word.hasPrefix("\""), word.hasSuffix("\""), word.count >= 2 {
                kind = .doubleQuoted
            } else {
                kind = .word
            }
            return Token(text: word, column: column, kind: kind)
        }
    }
}
