/// Any JSON value, objects keeping their members in document order.
///
/// The realtime protocol's envelopes and bodies are JSON of this kind; data inside them is
/// turned into a `Node` with `Node(json:)`, which applies the database's rules.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.last { $0.0 == key }?.1 }
        return nil
    }

    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var number: Double? { if case .number(let n) = self { return n }; return nil }
    /// The number as an `Int` when it is one exactly (integral and in range): wire fields such
    /// as request ids and tags. Anything else is nil, never a trap.
    public var int: Int? { if case .number(let n) = self { return Int(exactly: n) }; return nil }
    public var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var array: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var members: [(String, JSONValue)]? { if case .object(let m) = self { return m }; return nil }

    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse(bytes: $0, capturing: nil).value }
    }

    /// Parses `bytes`; the value at the member path `capturing` (for example `["d", "b", "d"]`)
    /// is only checked for its extent, not built: it stands as `null` in the result and its
    /// byte range is returned, so a large payload can be read once, straight into its final form.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>, capturing: [String]?) throws -> (value: JSONValue, captured: Range<Int>?) {
        var parser = Parser(bytes: bytes)
        parser.capturePath = capturing
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected data after the value") }
        return (value, parser.captured)
    }

    /// The first JSON value in `bytes` and the offset just past it, for inputs such as a REST
    /// bound `5,"key"` where a value is followed by more text.
    public static func parsePrefix(bytes: UnsafeBufferPointer<UInt8>) throws -> (value: JSONValue, end: Int) {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        return (value, parser.index)
    }

    /// Where the value starting at `start` ends, found by its brackets and quotes alone (as
    /// a captured member is skipped), or nil when the text ends first. Nothing is checked
    /// inside it: a caller reads it afterwards with the rules it needs.
    public static func endOfValue(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var parser = Parser(bytes: bytes)
        parser.index = start
        do { try parser.skipValue() } catch { return nil }
        return parser.index
    }

    public func serialized() -> String {
        var out: [UInt8] = []
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: Array("null".utf8))
        case .bool(let b): out.append(contentsOf: Array((b ? "true" : "false").utf8))
        case .number(let n): out.append(contentsOf: Array(JSONWriter.formatNumber(n).utf8))
        case .string(let s): JSONWriter.writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// The member path whose value is skipped and whose range is kept in `captured`.
        var capturePath: [String]?
        var captured: Range<Int>?
        private var keyPath: [String] = []

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: index) }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        /// Moves past one value, tracking only strings and nesting: whoever reads the skipped
        /// bytes later checks them in full.
        mutating func skipValue() throws {
            guard index < bytes.count else { throw error("expected a value, found end of input") }
            var depth = 0
            repeat {
                guard index < bytes.count else { throw error("unterminated value") }
                switch bytes[index] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard depth > 0 else { throw error("expected a value") }
                    depth -= 1
                    index += 1
                case UInt8(ascii: "\""):
                    index += 1
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                        index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                    }
                    guard index < bytes.count else { throw error("unterminated string") }
                    index += 1
                default:
                    if depth == 0 {
                        let start = index
                        while index < bytes.count, ![0x2C, 0x7D, 0x5D, 0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
                        if index == start { throw error("expected a value") }
                        return
                    }
                    index += 1
                }
            } while depth > 0
        }

        mutating func value(depth: Int) throws -> JSONValue {
            // Envelopes and query objects are shallow; the bound keeps recursion far from the
            // end of a thread's stack (Dispatch threads have 512 KiB).
            guard depth < 100 else { throw error("nested too deeply") }
            skipWhitespace()
            guard index < bytes.count else { throw error("expected a value, found end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(String, JSONValue)] = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object([]) }
                while true {
                    skipWhitespace()
                    guard case .string(let key) = try value(depth: depth + 1) else { throw error("expected a key in double quotes") }
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after the key") }
                    index += 1
                    keyPath.append(key)
                    if let capturePath, keyPath == capturePath {
                        skipWhitespace()
                        let start = index
                        try skipValue()
                        captured = start..<index
                        members.append((key, .null))
                    } else {
                        members.append((key, try value(depth: depth + 1)))
                    }
                    keyPath.removeLast()
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unterminated object") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                    throw error("expected ',' or '}' in object")
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [JSONValue] = []
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array([]) }
                while true {
                    items.append(try value(depth: depth + 1))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unterminated array") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                    throw error("expected ',' or ']' in array")
                }
            default:
                // Scalars: let the Node reader do strings, numbers and literals.
                let start = index
                var cursor = JSONReader.Cursor(bytes: bytes, options: .init(allowServerValues: false))
                cursor.index = start
                let node = try cursor.readValue()
                index = cursor.index
                switch node.content {
                case .empty: return .null
                case .leaf(.bool(let b)): return .bool(b)
                case .leaf(.number(let n)): return .number(n)
                case .leaf(.string(let s)): return .string(s)
                default: throw error("unexpected value")
                }
            }
        }
    }
}

extension Node {
    /// A node from JSON with the database's reading rules, which are `JSONReader`'s: null and
    /// empty objects are empty, arrays are objects with keys "0", "1", …, `.value`,
    /// `.priority` and `.sv` are understood, and keys are checked. A value those rules
    /// refuse reads as empty.
    public init(json: JSONValue) {
        switch json {
        case .null: self = .empty
        case .bool(let b): self = Node(.bool(b))
        case .number(let n): self = Node(.number(n))
        case .string(let s): self = Node(.string(s))
        case .array, .object: self = (try? JSONReader.parse(json.serialized())) ?? .empty
        }
    }
}
