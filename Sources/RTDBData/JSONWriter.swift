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
        public init(export: Bool = false, pretty: Bool = false, style: JSONStyle? = nil) {
            self.export = export; self.pretty = pretty; self.style = style
        }
    }

    public static func string(_ node: Node, options: Options = Options()) -> String {
        String(decoding: bytes(node, options: options), as: UTF8.self)
    }

    public static func bytes(_ node: Node, options: Options = Options()) -> [UInt8] {
        var out: [UInt8] = []
        write(node, to: &out, options: options)
        return out
    }

    public static func write(_ node: Node, to out: inout [UInt8], options: Options = Options()) {
        let w = Writer(options: options)
        w.value(node, depth: 0, out: &out)
    }

    /// Writes `node` in pieces: whenever `out` holds more than `threshold` bytes between two
    /// children, `drain` takes them, so a large value is never whole as text.
    public static func write(_ node: Node, to out: inout [UInt8], options: Options = Options(),
                             draining threshold: Int, _ drain: @escaping (inout [UInt8]) -> Void) {
        let w = Writer(options: options)
        w.drain = { out in if out.count > threshold { drain(&out) } }
        w.value(node, depth: 0, out: &out)
    }

    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { bytes in
            // Runs with nothing to escape (nearly every string) are copied whole.
            var start = 0
            for i in 0..<bytes.count {
                let b = bytes[i]
                guard b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                escape(b, &out)
                start = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
        out.append(0x22)
    }

    private static func escape(_ b: UInt8, _ out: inout [UInt8]) {
        switch b {
        case 0x22: out.append(0x5C); out.append(0x22)
        case 0x5C: out.append(0x5C); out.append(0x5C)
        case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
        case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
        case 0x08: out.append(0x5C); out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(0x5C); out.append(UInt8(ascii: "f"))
        default:
            let hex: StaticString = "0123456789abcdef"
            out.append(0x5C); out.append(UInt8(ascii: "u")); out.append(0x30); out.append(0x30)
            out.append(hex.utf8Start[Int(b >> 4)]); out.append(hex.utf8Start[Int(b & 0xF)])
        }
    }

    /// `formatNumber` straight into `out`: integers (most numbers) without a String.
    public static func writeNumber(_ v: Double, to out: inout [UInt8]) {
        guard v.isFinite, v == v.rounded(), abs(v) < 9.2e18 else {
            out.append(contentsOf: formatOtherNumber(v).utf8)
            return
        }
        var magnitude = Int64(v).magnitude
        if v < 0 && magnitude != 0 { out.append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var i = 20
            repeat {
                i -= 1
                digits[i] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[i..<20]))
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
    private static func formatOtherNumber(_ v: Double) -> String {
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

    /// A class: a struct holding the options (strings) would be copied, and each of its
    /// strings retained, at every value written.
    final class Writer {
        let options: Options
        var drain: ((inout [UInt8]) -> Void)? = nil

        init(options: Options) {
            self.options = options
        }

        func styled(_ text: String, _ color: KeyPath<JSONStyle, String>, _ out: inout [UInt8]) {
            if let style = options.style {
                out.append(contentsOf: style[keyPath: color].utf8)
                out.append(contentsOf: text.utf8)
                out.append(contentsOf: style.reset.utf8)
            } else {
                out.append(contentsOf: text.utf8)
            }
        }

        func stringToken(_ s: String, _ color: KeyPath<JSONStyle, String>, _ out: inout [UInt8]) {
            if let style = options.style { out.append(contentsOf: style[keyPath: color].utf8) }
            JSONWriter.writeString(s, to: &out)
            if let style = options.style { out.append(contentsOf: style.reset.utf8) }
        }

        func leaf(_ v: LeafValue, _ out: inout [UInt8]) {
            switch v {
            case .bool(let b): styled(b ? "true" : "false", \.literal, &out)
            case .number(let n):
                if options.style == nil { JSONWriter.writeNumber(n, to: &out) } else { styled(JSONWriter.formatNumber(n), \.number, &out) }
            case .string(let s): stringToken(s, \.string, &out)
            case .serverValue(.timestamp): out.append(contentsOf: Array("{\".sv\":\"timestamp\"}".utf8))
            case .serverValue(.increment(let n)):
                out.append(contentsOf: Array("{\".sv\":{\"increment\":\(JSONWriter.formatNumber(n))}}".utf8))
            }
        }

        func newline(_ depth: Int, _ out: inout [UInt8]) {
            guard options.pretty else { return }
            out.append(0x0A)
            for _ in 0..<depth { out.append(contentsOf: options.indent.utf8) }
        }

        func colon(_ out: inout [UInt8]) {
            out.append(UInt8(ascii: ":"))
            if options.pretty { out.append(0x20) }
        }

        func value(_ node: Node, depth: Int, out: inout [UInt8]) {
            switch node.content {
            case .empty:
                styled("null", \.literal, &out)
            case .leaf(let v):
                if options.export, let p = node.priority {
                    out.append(UInt8(ascii: "{")); newline(depth + 1, &out)
                    stringToken(".value", \.key, &out); colon(&out); leaf(v, &out)
                    out.append(UInt8(ascii: ",")); newline(depth + 1, &out)
                    stringToken(".priority", \.key, &out); colon(&out); leaf(p, &out)
                    newline(depth, &out); out.append(UInt8(ascii: "}"))
                } else {
                    leaf(v, &out)
                }
            case .children(let map):
                if !options.export, JSONWriter.isArray(map) {
                    out.append(UInt8(ascii: "["))
                    var next = 0
                    var first = true
                    map.forEachChild { key, child in
                        let position = Int(key.intValue ?? 0)  // isArray: every key is one
                        while next <= position {
                            if !first { out.append(UInt8(ascii: ",")) }
                            first = false
                            newline(depth + 1, &out)
                            if next == position { value(child, depth: depth + 1, out: &out) } else { styled("null", \.literal, &out) }
                            next += 1
                            drain?(&out)
                        }
                    }
                    newline(depth, &out)
                    out.append(UInt8(ascii: "]"))
                    return
                }
                out.append(UInt8(ascii: "{"))
                var first = true
                if options.export, let p = node.priority {
                    newline(depth + 1, &out)
                    stringToken(".priority", \.key, &out); colon(&out); leaf(p, &out)
                    first = false
                }
                map.forEachChild { key, child in
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    newline(depth + 1, &out)
                    stringToken(key.name, \.key, &out)
                    colon(&out)
                    value(child, depth: depth + 1, out: &out)
                    drain?(&out)
                }
                newline(depth, &out)
                out.append(UInt8(ascii: "}"))
            }
        }
    }

    /// Whether children render as an array: every key a canonical non-negative integer
    /// (`^(0|[1-9]\d*)$`) and the largest below twice the count. Checked with `forEachChild`:
    /// an iterator allocates its stack, once for every object written.
    static func isArray(_ map: ChildMap) -> Bool {
        guard let last = map.last, let maxKey = last.key.intValue, maxKey >= 0, Int(maxKey) < 2 * map.count else { return false }
        var canonical = true
        map.forEachChild { key, _ in
            guard canonical else { return }
            let name = key.name.utf8
            // "01" and "-0" are integer keys, but not array positions.
            canonical = (key.intValue ?? -1) >= 0 && name.first != UInt8(ascii: "-") && !(name.count > 1 && name.first == UInt8(ascii: "0"))
        }
        return canonical
    }
}
