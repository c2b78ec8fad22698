/// Validates a JSON text in one pass and finds its big containers, for `JSONDocument`.
///
/// It takes only what a document can hold as text: no `null` (a removal), no empty object or
/// array, no `.priority`, `.value` or `.sv`, no key with an escape, no big object with a key
/// twice. Anything else, an error included, makes it give up (`Unfit`): the text is then read
/// the ordinary way, which takes all of JSON and words each error at its place.
struct JSONDocumentScanner {
    struct Unfit: Error {}

    /// What the scan learned of a value, for the containers around it.
    struct Summary {
        var canonical = true
        var hasArrays = false
        var hasArrayLikeObjects = false
        /// The longest path below the value, in keys and in bytes with separators.
        var depth = 0
        var pathBytes = 0
    }

    private var reader: JSONReader.Cursor
    private var containers: [Int: JSONContainer] = [:]
    /// The keys of the objects open around the scan, innermost last (an array's elements
    /// are only counted).
    private var offsets: [UInt32] = []
    private var nesting = 0

    /// `text`, or a copy of it at its size when more than a quarter of its room is spare:
    /// a document keeps the array it was read from, and one grown by doubling (a body of
    /// no declared length, parts smaller than announced) can have room for twice the text.
    /// (`Array(text)` would share the buffer, room and all.)
    static func keptAtItsSize(_ text: [UInt8]) -> [UInt8] {
        guard text.capacity > text.count + text.count / 4 else { return text }
        return text.withUnsafeBufferPointer { source in
            [UInt8](unsafeUninitializedCapacity: source.count) { copy, initialized in
                initialized = copy.initialize(fromContentsOf: source)
            }
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        reader = JSONReader.Cursor(bytes: bytes, options: .init(allowServerValues: false))
    }

    /// The value in `text`, written at `base`, with its big containers left as text; nil when
    /// the text has none, or is not one a document holds (see above).
    /// `range`: where in `text` the value is (what is around it stays unread).
    static func node(_ text: [UInt8], range: Range<Int>, base: Path) -> Node? {
        guard text.count < Int(UInt32.max), range.lowerBound >= 0, range.upperBound <= text.count else { return nil }
        return text.withUnsafeBufferPointer { whole -> Node? in
            // Nothing past the value is seen; offsets stay the text's own.
            let bytes = UnsafeBufferPointer(rebasing: whole[..<range.upperBound])
            var scanner = JSONDocumentScanner(bytes: bytes)
            scanner.reader.index = range.lowerBound
            scanner.reader.skipWhitespace()
            let start = scanner.reader.index
            guard let summary = try? scanner.value() else { return nil }
            scanner.reader.skipWhitespace()
            guard scanner.reader.index == bytes.count, !scanner.containers.isEmpty else { return nil }
            // The limits on paths, where the value is written.
            let separator = base.isRoot || summary.depth == 0 ? 0 : 1
            guard base.count + summary.depth <= Path.maxDepth,
                  base.utf8Length + separator + summary.pathBytes <= Path.maxBytes else { return nil }
            return JSONDocument(text: keptAtItsSize(text), containers: scanner.containers).value(at: start)
        }
    }

    private var bytes: UnsafeBufferPointer<UInt8> { reader.bytes }

    /// Moves past spaces; true when there were some.
    private mutating func skipSpace() -> Bool {
        let before = reader.index
        reader.skipWhitespace()
        return reader.index != before
    }

    private mutating func value() throws -> Summary {
        guard reader.index < bytes.count else { throw Unfit() }
        switch bytes[reader.index] {
        case UInt8(ascii: "{"): return try container(isArray: false)
        case UInt8(ascii: "["): return try container(isArray: true)
        case UInt8(ascii: "\""): return try string()
        case UInt8(ascii: "t"): try reader.literal("true"); return Summary()
        case UInt8(ascii: "f"): try reader.literal("false"); return Summary()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw Unfit()  // null, or no JSON
        }
    }

    private mutating func string() throws -> Summary {
        let quote = reader.index
        reader.index += 1
        let ascii = try reader.skipPlainBytes()
        guard reader.index < bytes.count else { throw Unfit() }
        var summary = Summary()
        let length: Int
        if bytes[reader.index] == UInt8(ascii: "\"") {
            let raw = UnsafeBufferPointer(rebasing: bytes[(quote + 1)..<reader.index])
            reader.index += 1
            guard ascii || JSONReader.isValidUTF8(raw) else { throw Unfit() }
            length = raw.count
            // The writer escapes DEL.
            summary.canonical = !raw.contains(0x7F)
        } else {
            length = try reader.finishString(openedAt: quote, ascii: ascii).utf8.count
            summary.canonical = false
        }
        guard length <= Node.maxStringBytes else { throw Unfit() }
        return summary
    }

    /// A number's grammar, checked without computing its value: only one with an exponent or
    /// more than 308 digits can be out of a double's range, and those the reader reads.
    private mutating func number() throws -> Summary {
        let start = reader.index
        var i = start
        @inline(__always) func digits() -> Int {
            let first = i
            while i < bytes.count, bytes[i] &- 0x30 < 10 { i += 1 }
            return i - first
        }
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let integerStart = i
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != 0x30 else { throw Unfit() }
        let zeroInteger = integerDigits == 1 && bytes[integerStart] == 0x30
        var fractionStart = i, fractionDigits = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            fractionStart = i
            fractionDigits = digits()
            guard fractionDigits > 0 else { throw Unfit() }
        }
        var exponent = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            exponent = true
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw Unfit() }
        }
        if exponent || integerDigits > 308 {
            _ = try reader.readNumber()  // throws past a double's range
        }
        reader.index = i
        // Whether `JSONWriter` writes the number as it is: an integer of at most 15 digits,
        // or a decimal of at most 15 significant digits with no trailing zero and at least
        // 0.0001 (smaller ones it writes with an exponent); no exponent, no "-0". At most 15
        // digits, no two such texts name one double, so its shortest form is this one.
        var canonical: Bool
        if exponent {
            canonical = false
        } else if fractionDigits == 0 {
            canonical = integerDigits <= 15 && !(zeroInteger && negative)
        } else {
            canonical = bytes[fractionStart + fractionDigits - 1] != 0x30
            var leadingZeros = 0
            if canonical && zeroInteger {
                while bytes[fractionStart + leadingZeros] == 0x30 { leadingZeros += 1 }
            }
            let significant = (zeroInteger ? 0 : integerDigits) + fractionDigits - leadingZeros
            canonical = canonical && significant <= 15 && leadingZeros <= 3
        }
        return Summary(canonical: canonical)
    }

    private mutating func container(isArray: Bool) throws -> Summary {
        let open = reader.index
        let close = UInt8(ascii: isArray ? "]" : "}")
        reader.index += 1
        nesting += 1
        defer { nesting -= 1 }
        guard nesting <= Path.maxDepth else { throw Unfit() }
        let mark = offsets.count
        defer { offsets.removeLast(offsets.count - mark) }
        var summary = Summary(hasArrays: isArray)
        var spaced = skipSpace()
        guard reader.index < bytes.count, bytes[reader.index] != close else { throw Unfit() }  // empty
        var sorted = true
        var previousKey: UnsafeBufferPointer<UInt8>?
        var arrayLike = !isArray  // every key an array position so far
        var largestPosition = -1
        var elements = 0
        while true {
            let keyLength: Int
            if isArray {
                keyLength = JSONDocumentScanner.digits(elements)
                elements += 1
            } else {
                guard reader.index < bytes.count, bytes[reader.index] == UInt8(ascii: "\"") else { throw Unfit() }
                let quote = reader.index
                reader.index += 1
                let ascii = try reader.skipPlainBytes()
                guard reader.index < bytes.count, bytes[reader.index] == UInt8(ascii: "\"") else { throw Unfit() }
                let raw = UnsafeBufferPointer(rebasing: bytes[(quote + 1)..<reader.index])
                reader.index += 1
                guard ascii || JSONReader.isValidUTF8(raw), JSONDocumentScanner.isPlainKey(raw) else { throw Unfit() }
                // The order matters only to a text that may be copied as it is, and to a big
                // object (which is sorted at its end when not known to be in order).
                if sorted && summary.canonical && !spaced {
                    if let previousKey, ChildKey.compare(raw: previousKey, raw) >= 0 { sorted = false }
                    previousKey = raw
                } else {
                    sorted = false
                }
                if arrayLike {
                    if let position = JSONDocumentScanner.arrayPosition(raw) {
                        largestPosition = max(largestPosition, position)
                    } else {
                        arrayLike = false
                    }
                }
                keyLength = raw.count
                offsets.append(UInt32(quote))
                spaced = skipSpace() || spaced
                guard reader.index < bytes.count, bytes[reader.index] == UInt8(ascii: ":") else { throw Unfit() }
                reader.index += 1
                spaced = skipSpace() || spaced
            }
            let child = try value()
            summary.canonical = summary.canonical && child.canonical
            summary.hasArrays = summary.hasArrays || child.hasArrays
            summary.hasArrayLikeObjects = summary.hasArrayLikeObjects || child.hasArrayLikeObjects
            summary.depth = max(summary.depth, 1 + child.depth)
            summary.pathBytes = max(summary.pathBytes, keyLength + (child.depth > 0 ? 1 + child.pathBytes : 0))
            spaced = skipSpace() || spaced
            guard reader.index < bytes.count else { throw Unfit() }
            if bytes[reader.index] == UInt8(ascii: ",") {
                reader.index += 1
                spaced = skipSpace() || spaced
                continue
            }
            guard bytes[reader.index] == close else { throw Unfit() }
            reader.index += 1
            break
        }
        let count = isArray ? elements : offsets.count - mark
        if arrayLike && largestPosition < 2 * count { summary.hasArrayLikeObjects = true }
        summary.canonical = summary.canonical && sorted && !spaced
        if count > ChildMap.packedLimit {
            // The outermost object takes the list itself rather than a copy of it.
            var keys: [UInt32] = []
            if !isArray {
                if mark == 0 { swap(&keys, &offsets) } else { keys = Array(offsets[mark...]) }
            }
            if !sorted { try sortByKey(&keys) }
            containers[open] = JSONContainer(
                start: open, end: reader.index, isArray: isArray, count: count, keyOffsets: keys, canonical: summary.canonical,
                hasArrays: summary.hasArrays, hasArrayLikeObjects: summary.hasArrayLikeObjects,
                depth: summary.depth, pathBytes: summary.pathBytes)
        }
        return summary
    }

    /// Puts an object's children in key order; a key twice is left to the ordinary reader
    /// (the last one wins there).
    private func sortByKey(_ children: inout [UInt32]) throws {
        let bytes = self.bytes
        // Each key's place and length, 8 bytes a child (a buffer of each is 16).
        var keyed = children.map { offset -> (offset: UInt32, length: UInt32) in
            (offset, UInt32(JSONDocument.rawKey(at: Int(offset), in: bytes).count))
        }
        func raw(_ key: (offset: UInt32, length: UInt32)) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[(Int(key.offset) + 1)..<(Int(key.offset) + 1 + Int(key.length))])
        }
        keyed.sort { ChildKey.compare(raw: raw($0), raw($1)) < 0 }
        for i in keyed.indices.dropFirst() where ChildKey.compare(raw: raw(keyed[i - 1]), raw(keyed[i])) == 0 { throw Unfit() }
        for i in keyed.indices { children[i] = keyed[i].offset }
    }

    /// Whether a key is valid as it is spelled (`Path.problem` finds none), by a table of the
    /// bytes no key may hold: controls, DEL and `.$#[]/` (the special keys start with `.`).
    @inline(__always)
    static func isPlainKey(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !raw.isEmpty else { return false }
        for b in raw where b < 0x80 {
            let word = b < 0x40 ? forbiddenLow : forbiddenHigh
            if word >> UInt64(b & 0x3F) & 1 != 0 { return false }
        }
        return true
    }

    /// Bits 0x00-0x1F and `#$./`; then `[]` and DEL, less 0x40.
    private static let forbiddenLow: UInt64 = 0x0000_C018_FFFF_FFFF
    private static let forbiddenHigh: UInt64 = 0x8000_0000_2800_0000

    /// The position a key names when the plain form would write it in an array: digits
    /// without a leading zero.
    private static func arrayPosition(_ raw: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = raw.first, first != 0x30 || raw.count == 1, raw.count <= 9 else { return nil }
        var value = 0
        for b in raw {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            value = value * 10 + Int(b - 0x30)
        }
        return value
    }

    private static func digits(_ n: Int) -> Int {
        var digits = 1, rest = n / 10
        while rest > 0 { digits += 1; rest /= 10 }
        return digits
    }
}
