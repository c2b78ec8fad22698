/// Splits a line into tokens. A token starting with `{` or `[` runs to its matching bracket
/// (strings inside respected), so JSON with spaces needs no quoting: `set /a {"x": 1}`.
public enum Tokenizer {
    public static func tokenize(_ line: String) throws -> [Token] {
        var tokens: [Token] = []
        var failedAt = 0
        try scan(line, into: &tokens, failedAt: &failedAt)
        return tokens
    }

    /// The tokens of `line` as far as they can be read, and when one cannot, its error and
    /// the column where that token starts (the prompt styles a line as it is typed).
    static func tokensSoFar(_ line: String) -> (tokens: [Token], failure: (start: Int, error: ShellError)?) {
        var tokens: [Token] = []
        var failedAt = 0
        do {
            try scan(line, into: &tokens, failedAt: &failedAt)
            return (tokens, nil)
        } catch let error as ShellError {
            return (tokens, (failedAt, error))
        } catch {
            return (tokens, (failedAt, ShellError("\(error)")))
        }
    }

    /// Appends each token to `tokens`; on an error, `failedAt` is the column of the token
    /// that was being read.
    private static func scan(_ line: String, into tokens: inout [Token], failedAt: inout Int) throws {
        // Works on UTF-8 bytes (every delimiter is ASCII); columns count Unicode scalars.
        let bytes = Array(line.utf8)
        var i = 0
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
        // Counted on from the last offset asked (they only grow, but for an error's), so
        // a long line of many words is read once, not once per word.
        var counted = (offset: 0, column: 0)
        func column(_ offset: Int) -> Int {
            if offset < counted.offset { counted = (0, 0) }
            var n = counted.column
            for b in bytes[counted.offset..<offset] where b & 0xC0 != 0x80 { n += 1 }
            counted = (offset, n)
            return n
        }
        func text(_ from: Int, _ to: Int) -> String { String(decoding: bytes[from..<to], as: UTF8.self) }
        while i < bytes.count {
            let c = bytes[i]
            if isSpace(c) { i += 1; continue }
            let start = i
            failedAt = column(start)
            switch c {
            case UInt8(ascii: "\""):
                i = try endOfDoubleQuoted(bytes, from: i, column: column)
                tokens.append(Token(text: text(start, i), column: column(start), kind: .doubleQuoted))
            case UInt8(ascii: "'"):
                i += 1
                while i < bytes.count && bytes[i] != UInt8(ascii: "'") { i += 1 }
                guard i < bytes.count else { throw ShellError("unterminated single quote", column: column(start), unfinished: true) }
                i += 1
                tokens.append(Token(text: text(start, i), column: column(start), kind: .singleQuoted))
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while i < bytes.count {
                    let d = bytes[i]
                    if d == UInt8(ascii: "\"") { i = try endOfDoubleQuoted(bytes, from: i, column: column); continue }
                    if d == UInt8(ascii: "{") || d == UInt8(ascii: "[") { depth += 1 }
                    if d == UInt8(ascii: "}") || d == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 { i += 1; break }
                    }
                    i += 1
                }
                if depth != 0 {
                    throw ShellError("unbalanced \(c == UInt8(ascii: "{") ? "'{'" : "'['"): the JSON value is not closed", column: column(start), unfinished: true)
                }
                tokens.append(Token(text: text(start, i), column: column(start), kind: .json))
            default:
                while i < bytes.count && !isSpace(bytes[i]) { i += 1 }
                tokens.append(Token(text: text(start, i), column: column(start), kind: .word))
            }
            if i < bytes.count && !isSpace(bytes[i]) {
                failedAt = column(i)
                throw ShellError("expected a space after \(tokens.last?.text.prefix(20) ?? "")", column: column(i))
            }
        }
    }

    private static func endOfDoubleQuoted(_ bytes: [UInt8], from start: Int, column: (Int) -> Int) throws -> Int {
        var i = start + 1
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "\\") { i += 2; continue }
            if bytes[i] == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        throw ShellError("unterminated double quote", column: column(start), unfinished: true)
    }

    /// Whether `text` ends inside a value (an open `{`, `[` or quote), so that the next line
    /// continues it.
    public static func isUnfinished(_ text: String) -> Bool {
        do {
            _ = try tokenize(text)
            return false
        } catch let error as ShellError {
            return error.unfinished
        } catch {
            return false
        }
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
