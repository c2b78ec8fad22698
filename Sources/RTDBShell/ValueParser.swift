import Foundation
import RTDBData
import RTDBProtocol

/// Turns a value token into a `Node`: JSON, a bare word (a string), 'literal text',
/// `@file.json`, and the server value shorthands `now()` and `increment(N)`, alone or
/// anywhere inside a typed value (not in files, which are JSON).
enum ValueParser {
    /// The largest value one command may write (the official clients' limit per write).
    static let maxWriteBytes = 16 * 1024 * 1024

    static func parse(_ token: Token, base: Path) throws -> Node {
        switch token.kind {
        case .singleQuoted:
            return try checkedString(token.unquoted, token: token, base: base)
        case .json, .doubleQuoted:
            return try parseJSON(token.text, token: token, base: base)
        case .word:
            let text = token.text
            if text.hasPrefix("@") { return try parseFile(String(text.dropFirst()), token: token) { try JSONReader.parse($0, options: .init(base: base)) } }
            if text.hasPrefix("now(") || text.hasPrefix("increment(") { return try parseJSON(text, token: token, base: base) }
            if ["NaN", "Infinity", "-Infinity", "+Infinity", "inf", "-inf", "nan"].contains(text) {
                throw ShellError("\(text) is not a valid value: numbers must be finite", column: token.column)
            }
            if text == "true" || text == "false" || text == "null" || looksNumeric(text) {
                return try parseJSON(text, token: token, base: base)
            }
            return try checkedString(text, token: token, base: base)
        }
    }

    static func parseUpdate(_ token: Token, base: Path) throws -> [UpdateEntry] {
        let entries: [(Path, Node)]
        if token.kind == .word && token.text.hasPrefix("@") {
            entries = try parseFile(String(token.text.dropFirst()), token: token) { try JSONReader.parseUpdate($0, base: base) }
        } else if token.kind == .json {
            guard token.text.utf8.count <= maxWriteBytes else { throw tooLarge(token.text.utf8.count, token) }
            do {
                entries = try JSONReader.parseUpdate(token.text, base: base, serverValueCalls: true)
            } catch let e as JSONParseError {
                throw ShellError(e.message, column: token.column + characterOffset(token.text, byte: e.offset))
            }
        } else {
            throw ShellError("update needs a JSON object of paths to values, as in {\"name\": \"Ada\", \"address/city\": \"London\"}", column: token.column)
        }
        do {
            try validateUpdatePaths(entries, base: base)
        } catch {
            throw ShellError("\(error)", column: token.column)
        }
        return entries.map { UpdateEntry($0.0, $0.1) }
    }

    static func parsePriority(_ token: Token) throws -> LeafValue? {
        let node = try parse(token, base: .root)
        switch node.content {
        case .empty: return nil
        case .leaf(.number(let n)): return .number(n)
        case .leaf(.string(let s)): return .string(s)
        case .leaf(.serverValue(let v)): return .serverValue(v)
        default: throw ShellError("a priority must be a number, a string or null", column: token.column)
        }
    }

    private static func looksNumeric(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first else { return false }
        if first == "-" || first == "+" { return text.unicodeScalars.dropFirst().first.map { ("0"..."9").contains($0) } ?? false }
        return ("0"..."9").contains(first)
    }

    private static func checkedString(_ s: String, token: Token, base: Path) throws -> Node {
        if s.utf8.count > Node.maxStringBytes {
            throw ShellError(DataError.stringTooLong(path: base.description, bytes: s.utf8.count).description, column: token.column)
        }
        return Node(.string(s))
    }

    private static func parseJSON(_ text: String, token: Token, base: Path) throws -> Node {
        guard text.utf8.count <= maxWriteBytes else { throw tooLarge(text.utf8.count, token) }
        do {
            return try JSONReader.parse(text, options: .init(base: base, serverValueCalls: true))
        } catch let e as JSONParseError {
            throw ShellError(e.message, column: token.column + characterOffset(text, byte: e.offset))
        }
    }

    private static func tooLarge(_ bytes: Int, _ token: Token) -> ShellError {
        ShellError(DataError.writeTooLarge(bytes: bytes, limit: maxWriteBytes).description, column: token.column)
    }

    /// Reads `@file`, reporting errors inside it by line and column of the file.
    private static func parseFile<T>(_ name: String, token: Token, _ body: (String) throws -> T) throws -> T {
        guard !name.isEmpty else { throw ShellError("@ needs a file name, as in @data.json", column: token.column) }
        let text: String
        do {
            let data = try UserFile.contents(name)
            guard data.count <= maxWriteBytes else { throw tooLarge(data.count, token) }
            text = try UserFile.text(data, of: name)
        } catch var error as ShellError {
            error.column = error.column ?? token.column
            throw error
        }
        do {
            return try body(text)
        } catch let e as JSONParseError {
            let (line, column) = lineAndColumn(text, byte: e.offset)
            throw ShellError("\(name):\(line):\(column): \(e.message)", column: token.column)
        }
    }

    /// The Unicode scalar offset of a UTF-8 byte offset.
    static func characterOffset(_ text: String, byte: Int) -> Int {
        var bytes = 0, scalars = 0
        for scalar in text.unicodeScalars {
            if bytes >= byte { break }
            bytes += String(scalar).utf8.count
            scalars += 1
        }
        return scalars
    }

    /// 1-based line and column of a UTF-8 byte offset.
    static func lineAndColumn(_ text: String, byte: Int) -> (Int, Int) {
        let position = JSONParseError(message: "", offset: byte).lineAndColumn(in: text.utf8)
        return (position.line, position.column)
    }
}
