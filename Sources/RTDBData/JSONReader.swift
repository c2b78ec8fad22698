/// A JSON syntax or data-rule failure, with the byte offset where it was found.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    /// Byte offset into the input.
    public let offset: Int
    public var description: String { message }

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// The 1-based line and column (in characters) of the error in `text`, the bytes read.
    public func lineAndColumn(in text: some Collection<UInt8>) -> (line: Int, column: Int) {
        let prefix = Array(text.prefix(offset))
        let line = prefix.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        let lineStart = (prefix.lastIndex(of: 0x0A) ?? -1) + 1
        return (line, String(decoding: prefix[lineStart...], as: UTF8.self).count + 1)
    }
}

/// Reads JSON bytes straight into a `Node`, applying the database's rules as it goes.
///
/// `null` and `{}` become empty; arrays become children "0", "1", …; `.priority`, `.value` and
/// `.sv` are understood; keys, depth, path length and string size are checked against the
/// location being written (`base`) so that the error names the offending key.
public struct JSONReader {
    public struct Options: Sendable {
        /// The location the value will be written to, for limits and messages.
        public var base: Path = .root
        /// Accept `{".sv": …}` placeholders (writes from a client). Stored data has none.
        public var allowServerValues = true
        /// Salvage only: read the tokens `inf`, `-inf` and `nan` (which no JSON has, but which
        /// older versions could write) as null, so the value is left out.
        public var dropNonFiniteNumbers = false
        /// The shell's shorthands: `now()` and `increment(N)` wherever a value may stand, read as
        /// the server values they name. Not JSON: only for what a person types.
        public var serverValueCalls = false
        /// `parse(data:)` keeps texts of at least this many bytes as documents: below it,
        /// reading the value whole costs less than scanning it first.
        public var documentsFrom = 1 << 16
        public init(base: Path = .root, allowServerValues: Bool = true, dropNonFiniteNumbers: Bool = false,
                    serverValueCalls: Bool = false) {
            self.base = base
            self.allowServerValues = allowServerValues
            self.dropNonFiniteNumbers = dropNonFiniteNumbers
            self.serverValueCalls = serverValueCalls
        }
    }

    public static func parse(_ text: String, options: Options = Options()) throws -> Node {
        var text = text
        return try text.withUTF8 { try parse(bytes: $0, options: options) }
    }

    public static func parse(bytes: UnsafeBufferPointer<UInt8>, options: Options = Options()) throws -> Node {
        var reader = Cursor(bytes: bytes, options: options)
        reader.skipWhitespace()
        let node = try reader.readValue()
        reader.skipWhitespace()
        if reader.index < bytes.count { throw reader.error("unexpected \(reader.describeCurrent()) after the value") }
        return node
    }

    /// Reads `data`; a large text of big objects or arrays is kept as it is (shared, not
    /// copied), its children read when they are touched (see `JSONDocument`).
    /// `range`: the bytes of `data` that are the value (a member of a message), by default all.
    public static func parse(data: [UInt8], range: Range<Int>? = nil, options: Options = Options()) throws -> Node {
        let range = range ?? 0..<data.count
        if range.count >= options.documentsFrom, !options.serverValueCalls, !options.dropNonFiniteNumbers,
           let node = JSONDocumentScanner.node(data, range: range, base: options.base) {
            return node
        }
        return try data.withUnsafeBufferPointer { try parse(bytes: UnsafeBufferPointer(rebasing: $0[range]), options: options) }
    }

    /// Parses the body of a multi-path update: an object whose keys are relative paths.
    /// Returns the entries in document order, each validated against `base` + its path.
    public static func parseUpdate(_ text: String, base: Path = .root, serverValueCalls: Bool = false) throws -> [(Path, Node)] {
        var text = text
        return try text.withUTF8 { try parseUpdate(bytes: $0, base: base, serverValueCalls: serverValueCalls) }
    }

    public static func parseUpdate(bytes: UnsafeBufferPointer<UInt8>, base: Path = .root,
                                   serverValueCalls: Bool = false) throws -> [(Path, Node)] {
        var reader = Cursor(bytes: bytes, options: Options(base: base, serverValueCalls: serverValueCalls))
        reader.skipWhitespace()
        let entries = try reader.readUpdateObject(base: base)
        reader.skipWhitespace()
        if reader.index < bytes.count { throw reader.error("unexpected \(reader.describeCurrent()) after the object") }
        return entries
    }

    /// Whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code
    /// points past U+10FFFF). `String(validating:)` is generic, and looked its metadata up at
    /// every string that was not ASCII; this also checks a text frame without making it a
    /// String. ASCII goes eight bytes at a time.
    public static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            if i + 8 <= n, let base = bytes.baseAddress,
               UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let lead = bytes[i]
            if lead < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the second byte's range
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard i + length <= n, bytes[i + 1] >= low, bytes[i + 1] <= high else { return false }
            for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 { return false }
            i += length
        }
        return true
    }

    /// A byte as messages name what was found: `'x'`, `byte 0x7f`, or (nil) end of input.
    public static func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "end of input" }
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        let options: Options
        var index = 0
        /// The location the value being read is under: the keys of `base` (or of an update's
        /// entry), then the keys entered in the document, each as where it is written.
        /// Named only in errors, so no key is made a string to enter it.
        var baseKeys: [String]
        /// An object's key by the offset of its opening quote; an array's position `p` as
        /// `-1 - p`: plain integers, nothing to retain at each key entered.
        var trail: [Int] = []
        /// How many keys `baseKeys` and `trail` hold, and their UTF-8 length with separators.
        var depth: Int
        var pathBytes: Int
        /// Objects and arrays open around the current value. Keys count against the depth
        /// limit as they are entered, but `.priority`, `.value` and `.sv` are not keys, so
        /// this bounds the recursion for them (a hostile document must not exhaust the stack).
        var nesting = 0
        static let maxNesting = Path.maxDepth + 8
        /// The children of the objects and arrays open around the value being read.
        let read = EntryStack()
        /// Keys met before, once the document has had a few (see `remember`).
        var knownKeys: KnownKeys?
        var keysRead = 0
        /// Set when reading again a document's text: its big containers stay text.
        var document: JSONDocument?

        init(bytes: UnsafeBufferPointer<UInt8>, options: Options) {
            self.bytes = bytes
            self.options = options
            self.baseKeys = options.base.keys
            self.depth = baseKeys.count
            self.pathBytes = options.base.utf8Length
        }

        var currentPath: String {
            let entered = trail.map { key -> String in
                if key < 0 { return String(-1 - key) }
                // Read again from the input: it was read once already, so it reads.
                var again = Cursor(bytes: bytes, options: options)
                again.index = key
                return (try? again.readString()) ?? ""
            }
            return "/" + (baseKeys + entered).joined(separator: "/")
        }

        /// Enters a child whose key (see `trail`) is `length` UTF-8 bytes: checks depth and
        /// path length, then the caller reads and calls `leave(length)`.
        mutating func enter(_ key: Int, length: Int, at offset: Int) throws {
            trail.append(key)
            pathBytes += length + (depth == 0 ? 0 : 1)
            depth += 1
            if depth > Path.maxDepth {
                throw error(DataError.pathTooDeep(path: currentPath, depth: depth).description, at: offset)
            }
            if pathBytes > Path.maxBytes {
                throw error(DataError.pathTooLong(path: currentPath, bytes: pathBytes).description, at: offset)
            }
        }

        mutating func leave(_ length: Int) {
            trail.removeLast()
            depth -= 1
            pathBytes -= length + (depth == 0 ? 0 : 1)
        }

        func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
            JSONParseError(message: message, offset: offset ?? index)
        }

        func describeCurrent() -> String {
            JSONReader.describe(index < bytes.count ? bytes[index] : nil)
        }

        @inline(__always) mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        @inline(__always) mutating func expect(_ byte: UInt8, _ what: String) throws {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else {
                throw error("expected \(what), found \(describeCurrent())")
            }
            index += 1
        }

        mutating func readValue() throws -> Node {
            skipWhitespace()
            guard index < bytes.count else { throw error("expected a value, found end of input") }
            if options.dropNonFiniteNumbers && nonFiniteToken() { return .empty }
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if let container = document?.containers[index], let document {
                    index = container.end
                    return Node(children: ChildMap(encoded: EncodedChildren(document: document, container: container)))
                }
                nesting += 1
                defer { nesting -= 1 }
                if nesting > Cursor.maxNesting {
                    throw error(DataError.pathTooDeep(path: currentPath, depth: depth + nesting).description)
                }
                return bytes[index] == UInt8(ascii: "{") ? try readObject() : try readArray()
            case UInt8(ascii: "\""):
                let start = index
                let s = try readString()
                if s.utf8.count > Node.maxStringBytes {
                    throw error(DataError.stringTooLong(path: currentPath, bytes: s.utf8.count).description, at: start)
                }
                return Node(.string(s))
            case UInt8(ascii: "t"): try literal("true"); return Node(.bool(true))
            case UInt8(ascii: "f"): try literal("false"); return Node(.bool(false))
            case UInt8(ascii: "n") where options.serverValueCalls && starts(with: "now"):
                return try readServerValueCall()
            case UInt8(ascii: "i") where options.serverValueCalls:
                return try readServerValueCall()
            case UInt8(ascii: "n"): try literal("null"); return .empty
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return Node(.number(try readNumber()))
            default:
                if bytes[index] == UInt8(ascii: "N") || bytes[index] == UInt8(ascii: "I") {
                    throw error("NaN and Infinity are not valid values: numbers must be finite")
                }
                throw error("expected a value, found \(describeCurrent())")
            }
        }

        func starts(with word: String) -> Bool {
            let n = word.utf8.count
            return index + n <= bytes.count && word.utf8.elementsEqual(UnsafeBufferPointer(rebasing: bytes[index..<(index + n)]))
        }

        /// `now()` or `increment(N)`, spaces allowed inside the parentheses.
        mutating func readServerValueCall() throws -> Node {
            guard options.allowServerValues else { throw error("expected a value, found \(describeCurrent())") }
            let isNow = starts(with: "now")
            guard isNow || starts(with: "increment") else {
                throw error("expected a value, found \(describeCurrent())")
            }
            index += isNow ? 3 : 9
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "(") else {
                throw error(isNow ? "expected '(' after now, as in now()" : "expected '(' after increment, as in increment(1)")
            }
            index += 1
            skipWhitespace()
            if isNow {
                try expect(UInt8(ascii: ")"), "')': now() takes nothing")
                return Node(.serverValue(.timestamp))
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "-") || (0x30...0x39).contains(bytes[index]) else {
                throw error("increment needs a number, as in increment(1)")
            }
            let delta = try readNumber()
            try expect(UInt8(ascii: ")"), "')' after the number of increment(N)")
            return Node(.serverValue(.increment(delta)))
        }

        /// Moves past `inf`, `-inf` or `nan` when one starts here.
        mutating func nonFiniteToken() -> Bool {
            for word in ["-inf", "inf", "nan"] {
                let n = word.utf8.count
                if index + n <= bytes.count, word.utf8.elementsEqual(UnsafeBufferPointer(rebasing: bytes[index..<(index + n)])) {
                    index += n
                    return true
                }
            }
            return false
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            let start = index
            if index + n <= bytes.count {
                var ok = true
                for i in 0..<n where bytes[index + i] != word.utf8Start[i] { ok = false; break }
                if ok { index += n; return }
            }
            throw error("expected a value, found \(describeCurrent())", at: start)
        }

        mutating func readNumber() throws -> Double {
            let start = index
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            // The digits as one integer (while at most 19 fit), and the power of ten it is
            // scaled by: enough to compute most numbers exactly below.
            var mantissa: UInt64 = 0
            var significant = 0
            var scale = 0
            let intStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if significant < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[index] - 0x30) } else { scale += 1 }
                if mantissa != 0 { significant += 1 }
                index += 1
            }
            if index == intStart { throw error("invalid number: expected a digit", at: index) }
            if index - intStart > 1 && bytes[intStart] == 0x30 { throw error("invalid number: leading zeros are not allowed", at: intStart) }
            if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
                index += 1
                let fracStart = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                    if significant < 19 {
                        mantissa = mantissa &* 10 &+ UInt64(bytes[index] - 0x30)
                        scale -= 1
                        if mantissa != 0 { significant += 1 }
                    }
                    index += 1
                }
                if index == fracStart { throw error("invalid number: expected a digit after '.'") }
            }
            var exact = significant < 19
            if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
                index += 1
                var exponentNegative = false
                if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                    exponentNegative = bytes[index] == UInt8(ascii: "-")
                    index += 1
                }
                let expStart = index
                var exponent = 0
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                    if exponent < 100_000 { exponent = exponent * 10 + Int(bytes[index] - 0x30) } else { exact = false }
                    index += 1
                }
                if index == expStart { throw error("invalid number: expected a digit in the exponent") }
                scale += exponentNegative ? -exponent : exponent
            }
            // Both the digits (below 2^53) and the power of ten (at most 10^22) are exact
            // doubles, so one multiplication or division rounds correctly: the value the
            // text names. Other numbers take the general conversion.
            if exact && mantissa <= 1 << 53 && scale >= -22 && scale <= 22 {
                let magnitude = Double(mantissa)
                let value = scale >= 0 ? magnitude * Cursor.powersOfTen[scale] : magnitude / Cursor.powersOfTen[-scale]
                return negative ? -value : value
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let v = Double(text), v.isFinite else {
                throw error("number \(text) is out of range: numbers must be finite doubles", at: start)
            }
            return v
        }

        /// 10^0 … 10^22, every one an exact double.
        static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }

        mutating func readString() throws -> String {
            let quote = index
            index += 1
            let ascii = try skipPlainBytes()
            return try finishString(openedAt: quote, ascii: ascii)
        }

        /// Moves to the string's first '"' or '\\' (or the end of input), refusing a control
        /// character on the way; true when every byte passed was ASCII.
        @inline(__always) mutating func skipPlainBytes() throws -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highBits: UInt64 = 0x8080_8080_8080_8080
            var high: UInt64 = 0  // every byte or-ed: no high bit set, the string is ASCII
            if let base = bytes.baseAddress {
                // Eight bytes at a time, while none of them is '"', '\\' or below 0x20 (the
                // word tests "has a zero byte", after xor, and "has a byte below n"). Their
                // lowest flag is exact (a false one only follows a true one, in a higher
                // byte), so the first such byte is found without looking at the ones before.
                while index &+ 8 <= bytes.count {
                    let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                    let quotes = word ^ (ones &* 0x22), backslashes = word ^ (ones &* 0x5C)
                    let special = (((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
                        | ((word &- ones &* 0x20) & ~word)) & highBits
                    if special != 0 {
                        let before = special.trailingZeroBitCount / 8
                        // The bytes before it, for the ASCII check (none when it is first).
                        high |= word & ((1 &<< UInt64(before * 8)) &- 1)
                        index &+= before
                        break
                    }
                    high |= word
                    index &+= 8
                }
            }
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { break }
                if b < 0x20 { throw error("control character in string (U+00\(String(b, radix: 16, uppercase: true).leftPadded(to: 2))) must be escaped") }
                high |= UInt64(b)
                index += 1
            }
            return high & highBits == 0
        }

        /// Reads the rest of the string opened at `quote`, `index` being where
        /// `skipPlainBytes` stopped and `ascii` what it answered.
        mutating func finishString(openedAt quote: Int, ascii: Bool) throws -> String {
            let start = quote + 1
            if index >= bytes.count { throw error("unterminated string", at: quote) }
            if bytes[index] == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // ASCII is valid UTF-8 as it is: no validation to pay for (most keys and values).
                if ascii || JSONReader.isValidUTF8(slice) { return String(decoding: slice, as: UTF8.self) }
                throw error("string is not valid UTF-8", at: start)
            }
            var out: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") {
                    index += 1
                    if out.withUnsafeBufferPointer(JSONReader.isValidUTF8) { return String(decoding: out, as: UTF8.self) }
                    throw error("string is not valid UTF-8", at: start)
                }
                if b < 0x20 { throw error("control character in string must be escaped") }
                if b != UInt8(ascii: "\\") { out.append(b); index += 1; continue }
                index += 1
                guard index < bytes.count else { break }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired surrogate in \\u escape")
                        }
                        index += 2
                        let low = try readHex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw error("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    guard let character = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    out.append(contentsOf: Array(String(character).utf8))
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'", at: index - 2)
                }
            }
            throw error("unterminated string", at: quote)
        }

        mutating func readHex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("incomplete \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[index]
                let d: UInt32
                switch b {
                case 0x30...0x39: d = UInt32(b - 0x30)
                case 0x41...0x46: d = UInt32(b - 0x41 + 10)
                case 0x61...0x66: d = UInt32(b - 0x61 + 10)
                default: throw error("invalid hex digit in \\u escape")
                }
                v = v * 16 + d
                index += 1
            }
            return v
        }

        mutating func readArray() throws -> Node {
            index += 1
            let base = read.count
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1; return .empty }
            var position = 0
            while true {
                try readChild(ChildKey.position(position), trail: -1 - position, at: index)
                position += 1
                skipWhitespace()
                guard index < bytes.count else { throw error("unterminated array: expected ',' or ']'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; break }
                throw error("expected ',' or ']' in array, found \(describeCurrent())")
            }
            // "0", "1", … "10" are integer keys and already in order.
            return Node(children: ChildMap(movingFrom: read.removeLast(from: base)))
        }

        mutating func readObject() throws -> Node {
            let open = index
            index += 1
            let base = read.count
            var hadChildren = false
            var priority: LeafValue?
            var value: Node?
            var serverValue: ServerValue?
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return .empty }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw error("expected a key in double quotes, found \(describeCurrent())")
                }
                let keyStart = index
                index += 1
                let ascii = try skipPlainBytes()
                if let keys = knownKeys, index < bytes.count, bytes[index] == UInt8(ascii: "\""),
                   let known = keys.find(UnsafeBufferPointer(rebasing: bytes[(keyStart + 1)..<index])) {
                    index += 1
                    try expect(UInt8(ascii: ":"), "':' after the key")
                    try readChild(known, trail: keyStart, at: keyStart)
                    hadChildren = true
                    if try endOfMember(openedAt: open) { break } else { continue }
                }
                let key = try finishString(openedAt: keyStart, ascii: ascii)
                // The key as written, quotes aside: the key itself unless it had escapes
                // (each of which is longer than what it stands for).
                let raw = UnsafeBufferPointer(rebasing: bytes[(keyStart + 1)..<(index - 1)])
                let unescaped = raw.count == key.utf8.count
                try expect(UInt8(ascii: ":"), "':' after the key")
                // Only the special keys start with "." (no key may hold one).
                // (Compared only then: a String comparison at every key cost a few percent.)
                switch key.utf8.first == UInt8(ascii: ".") ? key : nil {
                case ".priority"?:
                    let p = try readValue()
                    switch p.content {
                    case .empty: priority = nil
                    case .leaf(.bool):
                        throw error(DataError.invalidPriority(path: currentPath, reason: "a priority must be a string or a number, not a boolean").description, at: keyStart)
                    case .leaf(let v): priority = v
                    case .children:
                        throw error(DataError.invalidPriority(path: currentPath, reason: "a priority must be a string or a number, not an object").description, at: keyStart)
                    }
                case ".value"?:
                    let v = try readValue()
                    if case .children = v.content {
                        throw error(DataError.invalidValue(path: currentPath, reason: "\".value\" must be a string, number or boolean").description, at: keyStart)
                    }
                    value = v
                case ".sv"?:
                    guard options.allowServerValues else {
                        throw error(DataError.invalidValue(path: currentPath, reason: "server values are not allowed here").description, at: keyStart)
                    }
                    serverValue = try readServerValue(at: keyStart)
                default:
                    if let reason = unescaped ? Path.problem(utf8: raw) : Path.problem(with: key) {
                        let path = currentPath + (depth == 0 ? "" : "/") + key
                        throw error(DataError.invalidKey(key: key, path: path, reason: reason).description, at: keyStart)
                    }
                    let childKey = unescaped ? ChildKey(key, utf8: raw) : ChildKey(key)
                    if unescaped { remember(childKey, spelled: raw) }
                    try readChild(childKey, trail: keyStart, at: keyStart)
                    hadChildren = true
                }
                if try endOfMember(openedAt: open) { break }
            }
            if let serverValue {
                if value != nil || hadChildren {
                    throw error(DataError.invalidValue(path: currentPath, reason: "\".sv\" cannot be combined with other keys").description, at: open)
                }
                return Node(.serverValue(serverValue), priority: priority)
            }
            if let value {
                if read.count > base {
                    throw error(DataError.invalidValue(path: currentPath, reason: "\".value\" cannot be combined with other children").description, at: open)
                }
                return value.withPriority(value.isEmpty ? nil : priority)
            }
            return Node(children: ChildMap(movingFrom: read.removeLast(from: base)), priority: priority)
        }

        /// Reads the value under `key`, entered as `trail` (see there), whose key or element
        /// starts at `offset`.
        @inline(__always) mutating func readChild(_ key: ChildKey, trail: Int, at offset: Int) throws {
            let length = key.name.utf8.count
            try enter(trail, length: length, at: offset)
            let child = try readValue()
            leave(length)
            if !child.isEmpty { read.push(ChildEntry(key: key, value: consume child)) }
        }

        /// After an object's member: true at its closing '}', false after a ','.
        @inline(__always) mutating func endOfMember(openedAt open: Int) throws -> Bool {
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object: expected ',' or '}'", at: open) }
            if bytes[index] == UInt8(ascii: ",") { index += 1; return false }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return true }
            throw error("expected ',' or '}' in object, found \(describeCurrent())")
        }

        /// Keeps a valid key read from `raw` for `knownKeys`, which is made at the
        /// `KnownKeys.after`th key: a small document does not pay for the table.
        mutating func remember(_ key: ChildKey, spelled raw: UnsafeBufferPointer<UInt8>) {
            if let knownKeys {
                knownKeys.remember(key, spelled: raw)
                return
            }
            keysRead += 1
            if keysRead == KnownKeys.after { knownKeys = KnownKeys() }
        }

        mutating func readServerValue(at offset: Int) throws -> ServerValue {
            let node = try readValue()
            if node.leafValue == .string("timestamp") { return .timestamp }
            if case .children(let map) = node.content, map.count == 1,
               case .leaf(.number(let n))? = map["increment"]?.content {
                return .increment(n)
            }
            throw error(DataError.invalidValue(path: currentPath,
                reason: "unknown server value; use {\".sv\": \"timestamp\"} or {\".sv\": {\"increment\": N}}").description, at: offset)
        }

        mutating func readUpdateObject(base: Path) throws -> [(Path, Node)] {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
                throw error("an update needs a JSON object of child paths to values, found \(describeCurrent())")
            }
            index += 1
            var entries: [(Path, Node)] = []
            skipWhitespace()
            if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return [] }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw error("expected a path in double quotes, found \(describeCurrent())")
                }
                let keyStart = index
                let relative = Path(try readString())
                let full = base.appending(relative)
                do {
                    if relative.isRoot { throw DataError.invalidKey(key: "", path: full.description, reason: "update keys must not be empty") }
                    for (i, k) in relative.keys.enumerated() where !(k == ".priority" && i == relative.count - 1) {
                        try Path.validate(key: k, in: full.description)
                    }
                    try full.validateSize()
                } catch let e as DataError {
                    throw error(e.description, at: keyStart)
                }
                try expect(UInt8(ascii: ":"), "':' after the path")
                let saved = (baseKeys, depth, pathBytes)
                baseKeys = full.keys
                depth = baseKeys.count
                pathBytes = full.utf8Length
                let node = try readValue()
                (baseKeys, depth, pathBytes) = saved
                entries.append((relative, node))
                skipWhitespace()
                guard index < bytes.count else { throw error("unterminated object: expected ',' or '}'") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; break }
                throw error("expected ',' or '}' in object, found \(describeCurrent())")
            }
            return entries
        }
    }

    /// Valid keys already read, by their spelling: most documents repeat a few keys (the
    /// fields of their records) thousands of times, and a key found here is not made a
    /// string, validated and read as a number again.
    final class KnownKeys {
        /// The number of keys a document reads before it has a table.
        static let after = 16
        private static let slotCount = 256

        /// A key's bytes as two words and a count: compared and hashed in a few
        /// instructions. Only keys of at most 16 bytes have one (most field names; longer
        /// keys are mostly unique: push IDs).
        struct Spelling: Equatable {
            var words: (UInt64, UInt64) = (0, 0)
            var count = -1  // no key's

            init?(_ raw: UnsafeBufferPointer<UInt8>) {
                guard raw.count <= 16 else { return nil }
                withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(raw)) }
                count = raw.count
            }

            init() {}

            static func == (a: Spelling, b: Spelling) -> Bool {
                a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.count == b.count
            }

            /// A multiplicative hash, its top bits the slot.
            var slot: Int {
                let mixed = (words.0 &* 0x9E37_79B9_7F4A_7C15) ^ (words.1 &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(truncatingIfNeeded: count)
                return Int(truncatingIfNeeded: (mixed &* 0x1656_67B1_9E37_79F9) >> 56)
            }
        }

        /// Per slot, the last key kept that hashed there, and its spelling.
        private let spellings: UnsafeMutablePointer<Spelling>
        private let keys: UnsafeMutablePointer<ChildKey?>

        init() {
            spellings = .allocate(capacity: KnownKeys.slotCount)
            spellings.initialize(repeating: Spelling(), count: KnownKeys.slotCount)
            keys = .allocate(capacity: KnownKeys.slotCount)
            keys.initialize(repeating: nil, count: KnownKeys.slotCount)
        }

        deinit {
            spellings.deallocate()
            keys.deinitialize(count: KnownKeys.slotCount)
            keys.deallocate()
        }

        @inline(__always) func find(_ raw: UnsafeBufferPointer<UInt8>) -> ChildKey? {
            guard let spelling = Spelling(raw) else { return nil }
            let slot = spelling.slot
            return spellings[slot] == spelling ? keys[slot] : nil
        }

        func remember(_ key: ChildKey, spelled raw: UnsafeBufferPointer<UInt8>) {
            guard let spelling = Spelling(raw) else { return }
            let slot = spelling.slot
            spellings[slot] = spelling
            keys[slot] = key
        }
    }

    /// Children read but not yet in a map, innermost object's last: one buffer for a whole
    /// document, so an object's children are allocated once, in their map, at its end.
    final class EntryStack {
        // Allocated at the first child: a cursor is made for each small value (the envelope
        // reader makes one per scalar), most of which have none.
        private var base: UnsafeMutablePointer<ChildEntry>?
        private var capacity = 0
        private(set) var count = 0

        deinit {
            base?.deinitialize(count: count)
            base?.deallocate()
        }

        func push(_ entry: consuming ChildEntry) {
            if count == capacity {
                capacity = max(64, capacity * 2)
                let grown = UnsafeMutablePointer<ChildEntry>.allocate(capacity: capacity)
                if let base {
                    grown.moveInitialize(from: base, count: count)
                    base.deallocate()
                }
                base = grown
            }
            guard let base else { return }
            (base + count).initialize(to: entry)
            count += 1
        }

        /// Gives up the entries from `start` on: the caller moves every one out of the
        /// buffer before the next `push`.
        func removeLast(from start: Int) -> UnsafeMutableBufferPointer<ChildEntry> {
            let n = count - start
            count = start
            return UnsafeMutableBufferPointer(start: base.map { $0 + start }, count: n)
        }
    }
}
