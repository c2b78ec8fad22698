// Follows the Firebase JS SDK's nameCompare and tryParseInt (core/util/util.ts).

/// A child key together with what its ordering needs, computed once.
///
/// Keys that read as 32-bit integers sort first, numerically (ties by length, so "1" < "01");
/// every other key sorts after them by UTF-16 code units, as the official clients compare.
/// `min` and `max` are the sentinels used by query bounds.
public struct ChildKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let name: String
    /// The integer value when the key matches `^-?0*\d{1,10}$` and fits in 32 bits.
    public let intValue: Int32?
    let sentinel: Int8  // -1 min, 0 ordinary, 1 max

    public init(_ name: String) {
        self.name = name
        self.intValue = ChildKey.parseInt32(name.utf8)
        self.sentinel = 0
    }

    /// A key whose UTF-8 bytes are at hand (a reader's input): read as an integer from them.
    init(_ name: String, utf8: UnsafeBufferPointer<UInt8>) {
        self.name = name
        self.intValue = ChildKey.parseInt32(utf8)
        self.sentinel = 0
    }

    /// The key of an array's element at `position`.
    init(position: Int) {
        self.name = String(position)
        self.intValue = Int32(exactly: position)
        self.sentinel = 0
    }

    /// The key of an array's element at `position`, made once for the first positions.
    static func position(_ position: Int) -> ChildKey {
        position >= 0 && position < firstPositions.count ? firstPositions[position] : ChildKey(position: position)
    }

    private static let firstPositions = (0..<64).map(ChildKey.init(position:))

    private init(sentinel: Int8, name: String) {
        self.name = name
        self.intValue = nil
        self.sentinel = sentinel
    }

    public static let min = ChildKey(sentinel: -1, name: "[MIN_NAME]")
    public static let max = ChildKey(sentinel: 1, name: "[MAX_NAME]")

    public var isSentinel: Bool { sentinel != 0 }
    public var description: String { name }

    public static func == (a: ChildKey, b: ChildKey) -> Bool {
        // Byte-wise: Swift's String == treats canonically equivalent strings as equal, the database does not.
        a.sentinel == b.sentinel && a.name.utf8.elementsEqual(b.name.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        for byte in name.utf8 { hasher.combine(byte) }
    }

    public static func < (a: ChildKey, b: ChildKey) -> Bool { compare(a, b) < 0 }

    /// Three-way key comparison (`nameCompare`).
    @inline(__always)
    public static func compare(_ a: ChildKey, _ b: ChildKey) -> Int {
        if a.sentinel != 0 || b.sentinel != 0 {
            return a.sentinel == b.sentinel ? 0 : (a.sentinel < b.sentinel ? -1 : 1)
        }
        switch (a.intValue, b.intValue) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            let la = a.name.utf8.count, lb = b.name.utf8.count
            // "-0" and "00" are the same integer and length, but two keys: a map must keep both.
            return la == lb ? compareUTF16(a.name, b.name) : (la < lb ? -1 : 1)
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return compareUTF16(a.name, b.name)
        }
    }

    /// Compares two strings by UTF-16 code units without transcoding.
    ///
    /// UTF-8 byte order equals code point order; UTF-16 order differs only where a supplementary
    /// character (4-byte UTF-8, lead F0–F4) meets one in U+E000–U+FFFF (lead EE or EF): as UTF-16
    /// the supplementary one is a surrogate (D800–DFFF) and sorts first.
    public static func compareUTF16(_ a: String, _ b: String) -> Int {
        // Lent in place where the bytes are contiguous (native strings, small ones included):
        // a copy of each to lend its bytes retained and released it at every comparison.
        if let result = a.utf8.withContiguousStorageIfAvailable({ ua in
            b.utf8.withContiguousStorageIfAvailable { ub in compareUTF16(ua, ub) }
        }), let result { return result }
        var a = a, b = b
        return a.withUTF8 { ua in b.withUTF8 { ub in compareUTF16(ua, ub) } }
    }

    /// `compare` of two keys spelled by their UTF-8 bytes (a document's text).
    static func compare(raw a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        compare(raw: a, parseInt32(a), b, parseInt32(b))
    }

    /// `compare(raw:_:)` with each key's `parseInt32` already at hand (a sort reads each once).
    @inline(__always)
    static func compare(raw a: UnsafeBufferPointer<UInt8>, _ aInt: Int32?, _ b: UnsafeBufferPointer<UInt8>, _ bInt: Int32?) -> Int {
        switch (aInt, bInt) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            return a.count == b.count ? compareUTF16(a, b) : (a.count < b.count ? -1 : 1)
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return compareUTF16(a, b)
        }
    }

    private static func compareUTF16(_ ua: UnsafeBufferPointer<UInt8>, _ ub: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(ua.count, ub.count)
        var i = 0
        while i < n {
            let x = ua[i], y = ub[i]
            if x != y {
                if x >= 0xF0 && (y == 0xEE || y == 0xEF) { return -1 }
                if y >= 0xF0 && (x == 0xEE || x == 0xEF) { return 1 }
                return x < y ? -1 : 1
            }
            i += 1
        }
        return ua.count == ub.count ? 0 : (ua.count < ub.count ? -1 : 1)
    }

    static func parseInt32<Bytes: Collection<UInt8>>(_ s: Bytes) -> Int32? {
        var value: Int64 = 0
        var digits = 0
        var negative = false
        var first = true
        for byte in s {
            if first && byte == UInt8(ascii: "-") {
                negative = true
                first = false
                continue
            }
            first = false
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            // Leading zeros are free; at most 10 significant digits (the regex allows 0*\d{1,10}).
            if digits == 0 && byte == 0x30 {
                continue
            }
            digits += 1
            if digits > 10 { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        if first { return nil }  // empty
        if negative && s.count == 1 { return nil }  // "-"
        if negative { value = -value }
        guard value >= Int64(Int32.min) && value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }
}
