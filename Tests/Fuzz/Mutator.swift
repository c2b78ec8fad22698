import RTDBTestSupport

/// Makes new inputs from a corpus: bit flips, random and interesting bytes, insertions,
/// deletions, repeats, splices of two inputs, and tokens that have broken parsers before
/// (huge numbers, lone surrogates, invalid UTF-8, deep nesting, empty names).
struct Mutator {
    var random: SeededRandom
    let corpus: [[UInt8]]
    let dictionary: [[UInt8]]

    static let tokens: [String] = [
        "1e300", "-1e300", "9.3e18", "-9.3e18", "1e999", "1.5", "-0", "0", "4294967296", "-2147483649",
        "null", "true", "false", "\"\"", "{}", "[]", "\\ud800", "\\udc00", "\\u0000", "\\\"",
        "{\".sv\":\"timestamp\"}", "{\".sv\":{\"increment\":1e308}}", "\".priority\"", "\".value\"",
        "\"r\":", "\"t\":", "\"a\":\"p\"", "\"p\":\"/a\"", "\"q\":{\"l\":", "\"h\":", "\"d\":",
        "%ff", "%", "?=", "&=", "==", "/.json", ".json", "\u{FFFD}", "/", "//", "..", "$", "#", "[", "]",
        "999999", "16384", "\r\n", "\n", " ", "'", "\\", "@", "now()", "increment(1e308)", "--limitToLast",
    ]

    init(seed: UInt64, corpus: [[UInt8]], extraTokens: [String] = []) {
        random = SeededRandom(seed: seed)
        self.corpus = corpus.isEmpty ? [[]] : corpus
        dictionary = (Mutator.tokens + extraTokens).map { Array($0.utf8) } + [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0x00], [0x7F]]
    }

    mutating func int(_ n: Int) -> Int { n <= 0 ? 0 : Int(random.next() % UInt64(n)) }

    mutating func next() -> [UInt8] {
        var input = corpus[int(corpus.count)]
        for _ in 0...int(4) { mutate(&input) }
        if input.count > 1 << 16 { input.removeLast(input.count - (1 << 16)) }
        return input
    }

    mutating func mutate(_ input: inout [UInt8]) {
        let at = int(input.count + 1)
        switch int(9) {
        case 0 where !input.isEmpty:
            input[int(input.count)] ^= UInt8(1 << int(8))
        case 1 where !input.isEmpty:
            input[int(input.count)] = UInt8(truncatingIfNeeded: random.next())
        case 2:
            input.insert(contentsOf: (0..<(1 + int(8))).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
        case 3 where !input.isEmpty:
            let start = int(input.count)
            input.removeSubrange(start..<min(input.count, start + 1 + int(16)))
        case 4 where !input.isEmpty:
            let start = int(input.count)
            let piece = input[start..<min(input.count, start + 1 + int(32))]
            input.insert(contentsOf: Array(repeating: Array(piece), count: 1 + int(8)).joined(), at: at)
        case 5:
            let other = corpus[int(corpus.count)]
            let from = int(other.count + 1)
            input = Array(input[..<min(at, input.count)]) + Array(other[from...])
        case 6, 7:
            input.insert(contentsOf: dictionary[int(dictionary.count)], at: at)
        default:
            // Deep nesting, of containers or of the keys that are not keys.
            let depth = 1 + (int(16) == 0 ? int(3000) : int(150))
            let opener: [UInt8] = [Array("[".utf8), Array("{\"a\":".utf8), Array("{\".priority\":".utf8),
                                   Array("{\".value\":".utf8), Array("{\".sv\":".utf8)][int(5)]
            input.insert(contentsOf: Array(repeating: opener, count: depth).joined(), at: at)
        }
    }
}
