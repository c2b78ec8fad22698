import XCTest
import RTDBTestSupport
@testable import RTDBData

final class OrderingTests: XCTestCase {
    func sortedKeys(_ keys: [String]) -> [String] {
        keys.map(ChildKey.init).sorted().map(\.name)
    }

    func testIntegerKeysFirstNumerically() {
        XCTAssertEqual(sortedKeys(["b", "10", "9", "a", "-5", "1"]), ["-5", "1", "9", "10", "a", "b"])
    }

    func testEqualIntegersOrderByLength() {
        XCTAssertEqual(sortedKeys(["007", "7", "07"]), ["7", "07", "007"])
        XCTAssertEqual(sortedKeys(["-0", "0"]), ["0", "-0"])
        // The same integer and length, yet two keys: both stay in a map.
        XCTAssertEqual(sortedKeys(["00", "-0"]), ["-0", "00"])
        let map = ChildMap(unsorted: [(ChildKey("00"), Node(1)), (ChildKey("-0"), Node(2))])
        XCTAssertEqual(map.count, 2)
        XCTAssertEqual(map["00"], Node(1))
    }

    func testThirtyTwoBitBoundary() {
        XCTAssertEqual(ChildKey("2147483647").intValue, 2147483647)
        XCTAssertEqual(ChildKey("-2147483648").intValue, -2147483648)
        XCTAssertNil(ChildKey("2147483648").intValue)
        XCTAssertNil(ChildKey("-2147483649").intValue)
        XCTAssertNil(ChildKey("12345678901").intValue)
        XCTAssertEqual(ChildKey("0000000000001").intValue, 1)  // leading zeros don't count
        XCTAssertNil(ChildKey("1.5").intValue)
        XCTAssertNil(ChildKey("-").intValue)
        XCTAssertNil(ChildKey("+1").intValue)
        XCTAssertNil(ChildKey(" 1").intValue)
        // Out-of-range numbers are strings and sort among the strings.
        XCTAssertEqual(sortedKeys(["a", "2147483648", "5"]), ["5", "2147483648", "a"])
    }

    func testStringsCompareByUTF16CodeUnits() {
        // U+FF5E (fullwidth tilde, 3-byte UTF-8) sorts after U+1F435 (monkey, a surrogate pair) in UTF-16.
        XCTAssertEqual(sortedKeys(["\u{FF5E}", "\u{1F435}", "z"]), ["z", "\u{1F435}", "\u{FF5E}"])
        XCTAssertEqual(ChildKey.compareUTF16("é", "e\u{301}"), 1)  // no normalisation: U+00E9 > U+0065
        XCTAssertEqual(sortedKeys(["B", "a", "A"]), ["A", "B", "a"])
        XCTAssertEqual(sortedKeys(["ab", "a"]), ["a", "ab"])
    }

    /// Short (inline) and long (stored) strings of every kind of character compare as their
    /// UTF-16 code units do, whichever side is which.
    func testStringsOfEveryLengthCompareAsUTF16() {
        var random = SeededRandom(seed: 5)
        let pieces = ["a", "b", "z", "A", "0", "é", "\u{FF5E}", "\u{E000}", "\u{1F435}", "\u{10000}", "~"]
        let strings = (0..<400).map { _ in
            String((0..<Int.random(in: 0...40, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
        }
        for (a, b) in Array(zip(strings, strings.shuffled(using: &random))) + Array(zip(strings, strings)) {
            let x = Array(a.utf16), y = Array(b.utf16)
            let expected = x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
            XCTAssertEqual(ChildKey.compareUTF16(a, b), expected, "\(a) vs \(b)")
        }
    }

    func testSentinels() {
        XCTAssertLessThan(ChildKey.min, ChildKey("-2147483648"))
        XCTAssertLessThan(ChildKey("\u{1F435}"), ChildKey.max)
        XCTAssertEqual(ChildKey.compare(.min, .min), 0)
    }

    func testValueOrder() throws {
        let values: [Node] = [.empty, Node(false), Node(true), Node(-1), Node(2.5), Node("A"), Node("a"),
                              try JSONReader.parse(#"{"x": 1}"#)]
        for (i, a) in values.enumerated() {
            for (j, b) in values.enumerated() {
                XCTAssertEqual(Index.compareValues(a, b), i == j ? 0 : (i < j ? -1 : 1), "\(i) vs \(j)")
            }
        }
        // Objects all tie.
        XCTAssertEqual(Index.compareValues(try JSONReader.parse(#"{"x": 1}"#), try JSONReader.parse(#"{"y": 2}"#)), 0)
    }

    /// The fast sort (ranks and number bits) agrees with sorting by `compareValues`, ties by
    /// position, across every kind of value and the numbers whose bits are tricky.
    func testSortedPositionsAgreesWithValueOrder() throws {
        let kinds: [Node] = [.empty, Node(.serverValue(.timestamp)), Node(false), Node(true), Node(0.0), Node(-0.0),
                             Node(-1), Node(1), Node(-2.5), Node(2.5), Node(1e300), Node(-1e300), Node(Double.leastNonzeroMagnitude),
                             Node(-Double.leastNonzeroMagnitude), Node(Double.greatestFiniteMagnitude), Node(-Double.greatestFiniteMagnitude),
                             Node(""), Node("A"), Node("a"), Node("\u{1F435}"), Node("\u{FFFD}"), Node("ab"),
                             try JSONReader.parse(#"{"x": 1}"#), try JSONReader.parse(#"{"y": 2}"#)]
        var generator = SeededRandom.forTest()
        for _ in 0..<20 {
            let values = (0..<200).map { _ in kinds.randomElement(using: &generator)! }
            let expected = values.indices.sorted { a, b in
                let c = Index.compareValues(values[a], values[b])
                return c != 0 ? c < 0 : a < b
            }
            XCTAssertEqual(Index.sortedPositions(count: values.count) { values[$0] }, expected)
        }
    }

    func order(_ json: String, _ index: Index) throws -> [String] {
        index.sortedChildren(of: try JSONReader.parse(json)).map(\.key.name)
    }

    func testPriorityOrder() throws {
        let json = #"""
        {"a": {".value": 1, ".priority": "x"}, "b": {".value": 1, ".priority": 5}, "c": 1,
         "d": {".value": 1, ".priority": 1}, "e": {".value": 1, ".priority": "a"}, "f": 2}
        """#
        XCTAssertEqual(try order(json, .priority), ["c", "f", "d", "b", "e", "a"])
    }

    func testValueAndChildOrderTieBreakByKey() throws {
        XCTAssertEqual(try order(#"{"b": 1, "a": 1, "c": "s", "d": false, "e": {"z": 1}}"#, .value), ["d", "a", "b", "c", "e"])
        let people = #"{"ada": {"age": 36}, "bob": {"age": 12}, "cy": {"name": "c"}, "dee": {"age": 12}}"#
        XCTAssertEqual(try order(people, .child(Path("age"))), ["cy", "bob", "dee", "ada"])
        let deep = #"{"x": {"a": {"b": 2}}, "y": {"a": {"b": 1}}}"#
        XCTAssertEqual(try order(deep, .child(Path("a/b"))), ["y", "x"])
        XCTAssertEqual(try order(#"{"b": 1, "10": 0, "2": 5}"#, .key), ["2", "10", "b"])
    }
}
