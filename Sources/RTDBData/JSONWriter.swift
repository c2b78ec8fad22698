/// ANSI (or any) strings wrapped around each kind of token when writing JSON for a person.
public struct JSONStyle: Sendable {
    public var key: String, string: String, number: String, literal: String, reset: String
    public init(key: String, string: String, number: String, literal: String, reset: String) {
        self.key = key; self.string = string; self.number = number; self.literal = literal; self.reset = reset
    }
    public static let ansi = JSONStyle(key: "\u{1B}[34;1m", string: "\u{1B}[32m", number: "\u{1B}[36m",
                                       literal: "\u{1B}[35m", reset: "\u{1B}[0m")
}

/// Writes a `Node` straight to JSON bytes.
///
/// Two forms: the plain form users and REST see (objects with array-like keys become arrays,
/// no priorities) and the export form used on the wire and on disk (`.priority`, `.value`, no
/// arrays). Numbers print as JavaScript prints them, so `4` is `4`, not `4.0`.
public struct JSONWriter {
    public struct Options: Sendable {
        public var export = false
        public var pretty = false
        public var indent = "  "
        public var style: JSONStyle? = nil
        /// A document's children are written as the text they were read from, whatever its
        /// form: the same value when read again, though not the same bytes as the export
        /// form. For what only this program reads back (the log).
        public var textAsRead = false
        public init(export: Bool = false, pretty: Bool = false, style: JSONStyle? = nil) {
            self.export = export; self.pretty = pretty; self.style = style
        }
    }

    public static func string(_ node: Node, options: Options = Options()) -> String {
        String(decoding: bytes(node, options: options), as: UTF8.self)
    }

    public static func bytes(_ node: Node, options: Options = Options()) -> [UInt8] {
        if !options.pretty, options.style == nil, node.priority == nil, case .children(let map) = node.content,
           let text = map.wholeText(options.textAsRead ? .asRead : options.export ? .export : .plain) {
            return text
        }
        var out: [UInt8] = []
        write(node, to: &out, options: options)
        return out
    }

    public static func write(_ node: Node, to out: inout [UInt8], options: Options = Options()) {
        _ = write(node, to: &out, options: options, limit: .max)
    }

    /// Writes `node` unless its text is longer than `limit` bytes: then returns false, having
    /// left `out` as it was and written little more than `limit` to find out (a value too
    /// large to send is not written whole only to be refused).
    public static func write(_ node: Node, to out: inout [UInt8], options: Options = Options(), limit: Int) -> Bool {
        if case .leaf(let v) = node.content, !options.export || node.priority == nil, options.style == nil {
            // Most values on the wire are one leaf: no buffer of the writer's own for those.
            let before = out.count
            switch v {
            case .number(let n): writeNumber(n, to: &out)
            case .string(let s): writeString(s, to: &out)
            default: break
            }
            if out.count > before {
                guard out.count - before <= limit else {
                    out.removeLast(out.count - before)
                    return false
                }
                return true
            }
        }
        var writer = Writer(options: options, capacity: 256, limit: limit)
        writer.value(node, depth: 0)
        guard writer.out.count <= limit else { return false }
        writer.out.flush(into: &out)
        return true
    }

    /// Writes `node` in pieces: whenever `out` holds more than `threshold` bytes between two
    /// children, `drain` takes them, so a large value is never whole as text.
    public static func write(_ node: Node, to out: inout [UInt8], options: Options = Options(),
                             draining threshold: Int, _ drain: @escaping (inout [UInt8]) -> Void) {
        var carried = out
        out = []
        var writer = Writer(options: options, capacity: min(threshold, 1 << 16) + 1)
        writer.drain = { written in
            guard carried.count + written.count > threshold else { return }
            written.flush(into: &carried)
            drain(&carried)
        }
        writer.value(node, depth: 0)
        writer.out.flush(into: &carried)
        out = carried
    }

    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { bytes in
            forEachRun(bytes, from: 0, run: { out.append(contentsOf: $0) }, escaped: { escape($0) { out.append($0) } })
        }
        out.append(0x22)
    }

    /// `path` as a JSON string, its keys joined by "/" ("a/b"; with `leadingSlash`, "/a/b" and
    /// "/" for the root), written key by key: no joined String is made.
    public static func writePath(_ path: Path, leadingSlash: Bool, to out: inout [UInt8]) {
        out.append(0x22)
        for (i, key) in path.keys.enumerated() {
            if i > 0 || leadingSlash { out.append(0x2F) }
            var key = key
            key.withUTF8 { bytes in
                forEachRun(bytes, from: 0, run: { out.append(contentsOf: $0) }, escaped: { escape($0) { out.append($0) } })
            }
        }
        if leadingSlash && path.keys.isEmpty { out.append(0x2F) }
        out.append(0x22)
    }

    /// Walks a string's bytes from `start`: `run` gets each stretch with nothing to escape
    /// (nearly every string is one, copied whole), `escaped` each byte between them.
    @inline(__always) static func forEachRun(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int,
                                             run: (UnsafeBufferPointer<UInt8>) -> Void, escaped: (UInt8) -> Void) {
        var start = start
        for i in start..<bytes.count where needsEscape(bytes[i]) {
            run(UnsafeBufferPointer(rebasing: bytes[start..<i]))
            escaped(bytes[i])
            start = i + 1
        }
        run(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
    }

    /// The escape sequence for a byte `needsEscape` names, one byte at a time.
    @inline(__always) static func escape(_ b: UInt8, _ emit: (UInt8) -> Void) {
        emit(0x5C)
        switch b {
        case 0x22: emit(0x22)
        case 0x5C: emit(0x5C)
        case 0x0A: emit(UInt8(ascii: "n"))
        case 0x0D: emit(UInt8(ascii: "r"))
        case 0x09: emit(UInt8(ascii: "t"))
        case 0x08: emit(UInt8(ascii: "b"))
        case 0x0C: emit(UInt8(ascii: "f"))
        default:
            let hex: StaticString = "0123456789abcdef"
            emit(UInt8(ascii: "u")); emit(0x30); emit(0x30)
            emit(hex.utf8Start[Int(b >> 4)]); emit(hex.utf8Start[Int(b & 0xF)])
        }
    }

    /// `formatNumber` straight into `out`: integers (most numbers) without a String.
    public static func writeNumber(_ v: Double, to out: inout [UInt8]) {
        if withIntegerText(v, { out.append(contentsOf: $0) }) == nil { out.append(contentsOf: formatOtherNumber(v).utf8) }
    }

    /// Lends `body` the text of `v` when it is an integer of at most 19 digits (most
    /// numbers), written without a String; nil for any other number.
    @inline(__always) static func withIntegerText(_ v: Double, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Void? {
        guard v.isFinite, v == v.rounded(), abs(v) < 9.2e18 else { return nil }
        var magnitude = Int64(v).magnitude
        let negative = v < 0 && magnitude != 0  // -0 is written 0
        // Backwards from the end of room for 19 digits and a sign.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { room in
            var i = 20
            repeat {
                i -= 1
                room[i] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if negative {
                i -= 1
                room[i] = UInt8(ascii: "-")
            }
            body(UnsafeBufferPointer(rebasing: room[i..<20]))
        }
    }

    /// A number as JavaScript's `String(n)` writes it (integers without a fraction).
    /// NaN and ±Infinity, which JSON cannot hold, are written `null` as JavaScript's
    /// `JSON.stringify` does; the engine never stores one.
    public static func formatNumber(_ v: Double) -> String {
        var out: [UInt8] = []
        writeNumber(v, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The numbers `writeNumber` does not write as an Int64: fractions, huge ones, non-finite.
    static func formatOtherNumber(_ v: Double) -> String {
        guard v.isFinite else { return "null" }
        if v == v.rounded(), abs(v) < 1e21 { return String(format: "%.0f", v) }
        var s = v.description  // shortest round-trip
        // Bytes, not Characters: most numbers have no exponent, and finding that out was half
        // the cost of writing one.
        if let e = s.utf8.firstIndex(of: UInt8(ascii: "e")) {
            let mantissa = s[..<e]
            var exp = s[s.index(after: e)...]
            var sign = "+"
            if exp.first == "-" || exp.first == "+" { sign = exp.first == "-" ? "-" : "+"; exp = exp.dropFirst() }
            while exp.count > 1 && exp.first == "0" { exp = exp.dropFirst() }
            s = mantissa + "e" + sign + exp
        }
        return s
    }

    /// Whether a byte of a string is written escaped.
    @inline(__always) static func needsEscape(_ b: UInt8) -> Bool { b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F }

    /// Whether any of a word's eight bytes `needsEscape` (a byte below 0x20, or 0x22, 0x5C,
    /// 0x7F), without looking at them one by one: the classic tests for a zero byte and for
    /// a byte below a bound, which see no bytes of 0x80 and above (those never need it).
    @inline(__always) static func anyNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
        let below = (word &- ones &* 0x20) & ~word & highs
        return below | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C)) | hasZero(word ^ (ones &* 0x7F)) != 0
    }

    /// One document being written into its own buffer. Passed `inout` all the way down, so
    /// nothing in it is retained or checked for exclusive access at each value.
    struct Writer: ~Copyable {
        var out: JSONOutput
        let export: Bool
        let pretty: Bool
        let indent: String
        /// The colours, or nil (then nothing is looked up at each token).
        let style: JSONStyle?
        let textAsRead: Bool
        var drain: ((inout JSONOutput) -> Void)? = nil
        /// Past this many bytes, no more values are written (the caller gives up on the text).
        let limit: Int

        init(options: Options, capacity: Int, limit: Int = .max) {
            self.limit = limit
            out = JSONOutput(capacity: capacity)
            export = options.export
            pretty = options.pretty
            indent = options.indent
            style = options.style
            textAsRead = options.textAsRead
        }

        /// What a token is, for its colour.
        enum Token { case key, string, number, literal }

        mutating func color(_ token: Token) {
            guard let style else { return }
            switch token {
            case .key: out.append(style.key)
            case .string: out.append(style.string)
            case .number: out.append(style.number)
            case .literal: out.append(style.literal)
            }
        }

        mutating func reset() {
            if let style { out.append(style.reset) }
        }

        mutating func styled(_ text: StaticString, _ token: Token) {
            color(token)
            out.append(text)
            reset()
        }

        mutating func string(_ s: String, _ token: Token) {
            color(token)
            if s.utf8.withContiguousStorageIfAvailable({ quoted($0) }) == nil {
                var s = s
                s.withUTF8 { quoted($0) }
            }
            reset()
        }

        /// A string's bytes in quotes.
        mutating func quoted(_ bytes: UnsafeBufferPointer<UInt8>) {
            // Copied unchecked into room for them and the quotes until a byte that needs an
            // escape (in nearly every string, none): eight at a time, the last few one by one.
            var copied = 0
            out.append(reserving: bytes.count + 2) { room in
                room[0] = 0x22
                var written = 1
                guard let source = bytes.baseAddress else {
                    room[1] = 0x22
                    return 2
                }
                while copied + 8 <= bytes.count {
                    let word = UnsafeRawPointer(source + copied).loadUnaligned(as: UInt64.self)
                    if JSONWriter.anyNeedsEscape(word) { break }
                    UnsafeMutableRawPointer(room + written).storeBytes(of: word, as: UInt64.self)
                    copied += 8
                    written += 8
                }
                while copied < bytes.count, !JSONWriter.needsEscape(source[copied]) {
                    room[written] = source[copied]
                    copied += 1
                    written += 1
                }
                if copied == bytes.count {
                    room[written] = 0x22
                    written += 1
                }
                return written
            }
            guard copied < bytes.count else { return }
            JSONWriter.forEachRun(bytes, from: copied, run: { out.append($0) }, escaped: { JSONWriter.escape($0) { out.append($0) } })
            out.append(0x22)
        }

        /// A document's text, as it is: in pieces when the output drains (so a big one is
        /// never whole twice), and no further than just past `limit`.
        mutating func copy(_ text: UnsafeBufferPointer<UInt8>) {
            let piece = drain == nil ? text.count : 1 << 16
            var start = 0
            while start < text.count {
                let room = max(0, limit - out.count)
                var end = min(piece, text.count - start)
                if room < end { end = room + 1 }
                end += start
                out.append(UnsafeBufferPointer(rebasing: text[start..<end]))
                start = end
                if out.count > limit { return }
                drain?(&out)
            }
        }

        mutating func number(_ v: Double) {
            color(.number)
            if JSONWriter.withIntegerText(v, { out.append($0) }) == nil { out.append(JSONWriter.formatOtherNumber(v)) }
            reset()
        }

        mutating func leaf(_ v: LeafValue) {
            switch v {
            case .bool(let b): styled(b ? "true" : "false", .literal)
            case .number(let n): number(n)
            case .string(let s): string(s, .string)
            case .serverValue(.timestamp): out.append(#"{".sv":"timestamp"}"#)
            case .serverValue(.increment(let n)):
                out.append(#"{".sv":{"increment":"#)
                out.append(JSONWriter.formatNumber(n))
                out.append("}}")
            }
        }

        @inline(__always) mutating func newline(_ depth: Int) {
            if pretty { indented(depth) }
        }

        mutating func indented(_ depth: Int) {
            out.append(0x0A)
            for _ in 0..<depth { out.append(indent) }
        }

        mutating func colon() {
            out.append(UInt8(ascii: ":"))
            if pretty { out.append(0x20) }
        }

        mutating func value(_ node: Node, depth: Int) {
            guard out.count <= limit else { return }
            switch node.content {
            case .empty:
                styled("null", .literal)
            case .leaf(let v):
                if export, let p = node.priority {
                    out.append(UInt8(ascii: "{")); newline(depth + 1)
                    string(".value", .key); colon(); leaf(v)
                    out.append(UInt8(ascii: ",")); newline(depth + 1)
                    string(".priority", .key); colon(); leaf(p)
                    newline(depth); out.append(UInt8(ascii: "}"))
                } else {
                    leaf(v)
                }
            case .children(let map):
                if !pretty, style == nil, node.priority == nil {
                    if map.withText(textAsRead ? .asRead : export ? .export : .plain, { copy($0) }) != nil { return }
                    // Kept text in another spelling: rewritten from the text, not through nodes.
                    if case .encoded(let kept) = map.storage, JSONRespeller.applies(to: kept, export: export) {
                        JSONRespeller(document: kept.document, export: export).write(kept.container, to: &self)
                        return
                    }
                }
                if !export, JSONWriter.isArray(map) {
                    out.append(UInt8(ascii: "["))
                    var next = 0
                    map.forEachEntry { entry in
                        let position = Int(entry.key.intValue ?? 0)  // isArray: every key is one
                        while next <= position {
                            if next > 0 { out.append(UInt8(ascii: ",")) }
                            newline(depth + 1)
                            if next == position { value(entry.value, depth: depth + 1) } else { styled("null", .literal) }
                            next += 1
                            drain?(&out)
                        }
                    }
                    newline(depth)
                    out.append(UInt8(ascii: "]"))
                    return
                }
                out.append(UInt8(ascii: "{"))
                var first = true
                if export, let p = node.priority {
                    newline(depth + 1)
                    string(".priority", .key); colon(); leaf(p)
                    first = false
                }
                map.forEachEntry { entry in
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    newline(depth + 1)
                    string(entry.key.name, .key)
                    colon()
                    value(entry.value, depth: depth + 1)
                    drain?(&out)
                }
                newline(depth)
                out.append(UInt8(ascii: "}"))
            }
        }
    }

    /// Whether children render as an array: every key a canonical non-negative integer
    /// (`^(0|[1-9]\d*)$`) and the largest below twice the count. Checked with `forEachEntry`:
    /// an iterator allocates its stack, once for every object written.
    static func isArray(_ map: ChildMap) -> Bool {
        if map.isTextArray { return true }  // keys 0 to n - 1, known without reading them
        guard let maxKey = map.lastKey?.intValue, maxKey >= 0, Int(maxKey) < 2 * map.count else { return false }
        var canonical = true
        map.forEachEntry { entry in
            // "01" and "-0" are integer keys, but not array positions: a canonical one has
            // exactly its value's digits.
            guard canonical, let value = entry.key.intValue, value >= 0 else { return canonical = false }
            var digits = 1, rest = value / 10
            while rest > 0 { digits += 1; rest /= 10 }
            canonical = entry.key.name.utf8.count == digits
        }
        return canonical
    }
}
