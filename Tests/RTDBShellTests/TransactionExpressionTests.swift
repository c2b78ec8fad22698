import Foundation
import XCTest
@testable import RTDBShell
import RTDBData

final class TransactionExpressionTests: XCTestCase {
    // MARK: Helpers

    private func node(_ json: String) throws -> Node {
        Node(json: try JSONValue.parse(json))
    }

    private func evaluate(_ source: String, on current: Node) throws -> TransactionOutcome {
        try TransactionExpression.parse(source).evaluate(current: current)
    }

    /// `source` evaluated on the JSON `current` gives the JSON `expected`.
    private func assertResult(_ source: String, on current: String = "null", is expected: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        do {
            let outcome = try evaluate(source, on: try node(current))
            XCTAssertEqual(outcome, .value(try node(expected)), String(source.prefix(80)), file: file, line: line)
        } catch {
            XCTFail("\(source.prefix(80)): \(error)", file: file, line: line)
        }
    }

    private func assertResult(_ source: String, on current: Node, is expected: Node,
                              file: StaticString = #filePath, line: UInt = #line) {
        do {
            let outcome = try evaluate(source, on: current)
            XCTAssertEqual(outcome, .value(expected), String(source.prefix(80)), file: file, line: line)
        } catch {
            XCTFail("\(source.prefix(80)): \(error)", file: file, line: line)
        }
    }

    private func assertAborts(_ source: String, on current: String = "null", with reason: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        do {
            let outcome = try evaluate(source, on: try node(current))
            XCTAssertEqual(outcome, .abort(reason), String(source.prefix(80)), file: file, line: line)
        } catch {
            XCTFail("\(source.prefix(80)): \(error)", file: file, line: line)
        }
    }

    /// Parsing `source` fails with exactly this message and offset.
    private func assertParseError(_ source: String, _ message: String, at offset: Int,
                                  file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try TransactionExpression.parse(source)
            XCTFail("\(source.prefix(80)): parsed, expected \(message)", file: file, line: line)
        } catch let error as ExpressionError {
            XCTAssertEqual(error, ExpressionError(message, offset: offset), String(source.prefix(80)), file: file, line: line)
        } catch {
            XCTFail("\(source.prefix(80)): unexpected \(error)", file: file, line: line)
        }
    }

    /// `source` parses, and evaluating it on `current` fails with exactly this message and offset.
    private func assertEvaluationError(_ source: String, on current: String = "null", _ message: String, at offset: Int,
                                       file: StaticString = #filePath, line: UInt = #line) {
        do {
            assertEvaluationError(source, on: try node(current), message, at: offset, file: file, line: line)
        } catch {
            XCTFail("\(current): \(error)", file: file, line: line)
        }
    }

    private func assertEvaluationError(_ source: String, on current: Node, _ message: String, at offset: Int,
                                       file: StaticString = #filePath, line: UInt = #line) {
        let expression: TransactionExpression
        do {
            expression = try TransactionExpression.parse(source)
        } catch {
            XCTFail("\(source.prefix(80)): does not parse: \(error)", file: file, line: line)
            return
        }
        do {
            let outcome = try expression.evaluate(current: current)
            XCTFail("\(source.prefix(80)): gave \(outcome), expected \(message)", file: file, line: line)
        } catch let error as ExpressionError {
            XCTAssertEqual(error, ExpressionError(message, offset: offset), String(source.prefix(80)), file: file, line: line)
        } catch {
            XCTFail("\(source.prefix(80)): unexpected \(error)", file: file, line: line)
        }
    }

    // MARK: Counters and the current value

    func testCounter() {
        assertResult("$ + 1", on: "null", is: "1")
        assertResult("$ + 1", on: "41", is: "42")
        assertResult("($ ?? 0) + 1", on: "null", is: "1")
        assertResult("($ ?? 0) + 1", on: "5", is: "6")
        assertResult("$", on: "{\"a\": [1, 2]}", is: "{\"a\": [1, 2]}")
        assertResult("null", on: "{\"a\": 1}", is: "null")
    }

    func testSourceIsKept() throws {
        XCTAssertEqual(try TransactionExpression.parse("$ + 1").source, "$ + 1")
    }

    func testOneExpressionEvaluatesManyTimes() throws {
        let expression = try TransactionExpression.parse("($ ?? 0) + $ + 1")
        XCTAssertEqual(try expression.evaluate(current: .empty), .value(Node(1)))
        XCTAssertEqual(try expression.evaluate(current: Node(2)), .value(Node(5)))
        XCTAssertEqual(try expression.evaluate(current: Node(20)), .value(Node(41)))
    }

    func testPrioritiesAreIgnored() {
        assertResult("$", on: Node(5).withPriority(.number(1)), is: Node(5))
        assertResult("$ + 1", on: Node(5).withPriority(.string("p")), is: Node(6))
        let plain = Node(children: ChildMap(unsorted: [(ChildKey("a"), Node(1))]))
        assertResult("$[\".priority\"]", on: plain.withPriority(.string("p")), is: .empty)
        assertResult("$", on: plain.withPriority(.string("p")), is: plain)
        let child = Node(children: ChildMap(unsorted: [(ChildKey("a"), Node(1).withPriority(.number(3)))]))
        assertResult("$", on: child, is: plain)
    }

    // MARK: Literals

    func testScalarLiterals() {
        assertResult("null", is: "null")
        assertResult("true", is: "true")
        assertResult("false", is: "false")
        assertResult("0", is: "0")
        assertResult("1.5e2", is: "150")
        assertResult("2.5E-1", is: "0.25")
        assertResult("1e+2", is: "100")
        assertResult("-0.5", is: "-0.5")
        assertResult(#""plain""#, is: #""plain""#)
        assertResult(#""q\"b\\s\/n\n\t\r\b\f""#, on: "null", is: #""q\"b\\s/n\n\t\r\b\f""#)
        assertResult(#""\u00e9\ud83d\ude00""#, on: Node.empty, is: Node("é😀"))
    }

    func testArrayLiterals() {
        assertResult("[1, \"a\", null, true]", is: "{\"0\": 1, \"1\": \"a\", \"3\": true}")
        assertResult("[]", is: "null")
        assertResult("[null, 1]", is: "{\"1\": 1}")
        assertResult("[[], {}, null]", is: "null")
        assertResult("[[1, 2], [3]]", is: "[[1, 2], [3]]")
    }

    func testObjectLiterals() {
        assertResult("{\"a\": 1, b: {\"c\": [1, \"x\"]}}", is: "{\"a\": 1, \"b\": {\"c\": {\"0\": 1, \"1\": \"x\"}}}")
        assertResult("{}", is: "null")
        assertResult("{\"a\": null}", is: "null")
        assertResult("{\"a\": {\"b\": null}, \"c\": 1}", is: "{\"c\": 1}")
        assertResult("{\"a\": 1, \"a\": 2}", is: "{\"a\": 2}")
        assertResult("{if: 1, null: 2, len: 3}", is: "{\"if\": 1, \"null\": 2, \"len\": 3}")
        assertResult("{café: 1, _x9: 2}", is: "{\"café\": 1, \"_x9\": 2}")
        assertResult("{\"with space\": $}", on: "3", is: "{\"with space\": 3}")
        assertResult("{\"10\": 1, \"9\": 2, \"a\": 3}", is: "{\"9\": 2, \"10\": 1, \"a\": 3}")
        let longest = String(repeating: "k", count: 768)
        assertResult("{\"\(longest)\": 1}", on: Node.empty, is: Node(children: ChildMap(unsorted: [(ChildKey(longest), Node(1))])))
    }

    func testInvalidObjectKeys() {
        assertParseError("{\"a.b\": 1}", ##"invalid key "a.b": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##, at: 1)
        assertParseError("{ok: 1, \"x/y\": 2}", ##"invalid key "x/y": keys must not contain ".", "$", "#", "[", "]" or "/" (found "/")"##, at: 8)
        assertParseError("{\"\": 1}", #"invalid key "": keys must not be empty"#, at: 1)
        assertParseError(#"{"a\u0001": 1}"#, #"invalid key "a\u0001": keys must not contain control characters (found U+0001)"#, at: 1)
        assertParseError("{\"$x\": 1}", ##"invalid key "$x": keys must not contain ".", "$", "#", "[", "]" or "/" (found "$")"##, at: 1)
        assertParseError("{\"a#\": 1}", ##"invalid key "a#": keys must not contain ".", "$", "#", "[", "]" or "/" (found "#")"##, at: 1)
        assertParseError("{\"[\": 1}", ##"invalid key "[": keys must not contain ".", "$", "#", "[", "]" or "/" (found "[")"##, at: 1)
        let tooLong = String(repeating: "k", count: 769)
        let shown = "\"" + String(repeating: "k", count: 40) + "…\""
        assertParseError("{\"\(tooLong)\": 1}", "invalid key \(shown): keys must be at most 768 bytes (this one is 769)", at: 1)
        // Bytes, not characters: 385 two-byte characters are 770 bytes.
        assertParseError("{\"\(String(repeating: "é", count: 385))\": 1}",
                         "invalid key \"\(String(repeating: "é", count: 40))…\": keys must be at most 768 bytes (this one is 770)", at: 1)
    }

    // MARK: Paths

    func testMembersAndIndexesIntoTheCurrentValue() {
        assertResult("$.count", on: "{\"count\": 3}", is: "3")
        assertResult("$.count + 1", on: "{\"count\": 3}", is: "4")
        assertResult("$.count", on: "null", is: "null")
        assertResult("$.missing", on: "{\"count\": 3}", is: "null")
        assertResult("$.a.b", on: "{\"a\": {\"b\": \"deep\"}}", is: "\"deep\"")
        assertResult("$.a.b.c.d", on: "{\"x\": 1}", is: "null")
        assertResult("$[\"a b\"]", on: "{\"a b\": \"x\"}", is: "\"x\"")
        assertResult("$[\"a\" + \"b\"]", on: "{\"ab\": 7}", is: "7")
        assertResult("$[0]", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "\"a\"")
        assertResult("$[1]", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "\"b\"")
        assertResult("$[2]", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "null")
        assertResult("$[\"1\"]", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "\"b\"")
        assertResult("$[\"01\"]", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "null")
        assertResult("$[1e300]", on: "{\"0\": \"a\"}", is: "null")
        assertResult("$[5]", on: "{\"0\": \"a\", \"5\": \"b\"}", is: "\"b\"")
        assertResult("$.list[1].name", on: "{\"list\": [{\"name\": \"x\"}, {\"name\": \"y\"}]}", is: "\"y\"")
        assertResult("$.café", on: "{\"café\": 2}", is: "2")
        assertResult("$.if", on: "{\"if\": 2}", is: "2")
    }

    func testMembersAndIndexesIntoComputedValues() {
        assertResult("({\"a\": {\"b\": 2}}).a.b", is: "2")
        assertResult("{\"x\": 1}.x", is: "1")
        assertResult("[10, 20, 30][1]", is: "20")
        assertResult("([10, 20])[\"1\"]", is: "20")
        assertResult("[10, 20][\"01\"]", is: "null")
        assertResult("[10, 20][\"x\"]", is: "null")
        assertResult("[10, 20].x", is: "null")
        assertResult("[10, 20][2]", is: "null")
        assertResult("[10, 20][1e300]", is: "null")
        assertResult("[10, 20][-0]", is: "10")
        assertResult("{\"5\": \"x\"}[5]", is: "\"x\"")
        assertResult("null.a", is: "null")
        assertResult("null[3].b", is: "null")
        assertResult("($ + {\"n\": 1}).n", on: "{\"m\": 2}", is: "1")
        assertResult("{\"a\": null}.a", is: "null")
    }

    func testAccessTypeErrors() {
        assertEvaluationError("$.count", on: "5", "cannot take .count of a number", at: 1)
        assertEvaluationError("$.a.b", on: "{\"a\": \"text\"}", "cannot take .b of a string", at: 3)
        assertEvaluationError("$[0]", on: "true", "cannot take [0] of a boolean", at: 1)
        assertEvaluationError("(1).x", "cannot take .x of a number", at: 3)
        assertEvaluationError("\"s\"[0]", "cannot take [0] of a string", at: 3)
        assertEvaluationError("true[\"k\"]", "cannot take [\"k\"] of a boolean", at: 4)
        assertEvaluationError("now().x", "cannot take .x of now()", at: 5)
        assertEvaluationError("$.t.x", on: Node(children: ChildMap(unsorted: [(ChildKey("t"), Node(.serverValue(.timestamp)))])),
                              "cannot take .x of now()", at: 3)
    }

    func testIndexTypeErrors() {
        let rule = "an index must be a string or a whole number of at least 0, found"
        assertEvaluationError("$[-1]", "\(rule) -1", at: 2)
        assertEvaluationError("$[1.5]", on: "[1, 2]", "\(rule) 1.5", at: 2)
        assertEvaluationError("$[true]", "\(rule) a boolean", at: 2)
        assertEvaluationError("$[null]", "\(rule) null", at: 2)
        assertEvaluationError("[1][ [0] ]", "\(rule) an array", at: 5)
        assertEvaluationError("{\"a\": 1}[{}]", "\(rule) an object", at: 9)
        assertEvaluationError("$[now()]", "\(rule) now()", at: 2)
    }

    // MARK: Arithmetic

    func testNumberArithmetic() {
        assertResult("1 + 2", is: "3")
        assertResult("10 - 4 - 3", is: "3")
        assertResult("2 * 3 / 4", is: "1.5")
        assertResult("8 / 2 / 2", is: "2")
        assertResult("7 % 3", is: "1")
        assertResult("-7 % 3", is: "-1")
        assertResult("7.5 % 2", is: "1.5")
        assertResult("- -2", is: "2")
        assertResult("1 - -1", is: "2")
        assertResult("2 * -3", is: "-6")
        assertResult("-$", on: "5", is: "-5")
        assertResult("-$.a", on: "{\"a\": 2}", is: "-2")
        assertResult("0.1 + 0.2", on: Node.empty, is: Node(0.1 + 0.2))
    }

    func testArithmeticErrors() {
        assertEvaluationError("1 / 0", "division by zero", at: 2)
        assertEvaluationError("$ / ($ - 1)", on: "1", "division by zero", at: 2)
        assertEvaluationError("1 % 0", "modulo by zero", at: 2)
        assertEvaluationError("1e308 * 10", "the result of '*' is too large (not a finite number)", at: 6)
        assertEvaluationError("1e308 + 1e308", "the result of '+' is too large (not a finite number)", at: 6)
        assertEvaluationError("-1e308 - 1e308", "the result of '-' is too large (not a finite number)", at: 7)
        assertEvaluationError("1e308 / 1e-10", "the result of '/' is too large (not a finite number)", at: 6)
        assertEvaluationError("\"a\" + 1", "cannot add a string and a number", at: 4)
        assertEvaluationError("1 + true", "cannot add a number and a boolean", at: 2)
        assertEvaluationError("{} + []", "cannot add an object and an array", at: 3)
        assertEvaluationError("$ + {\"x\": 1}", on: "{\"0\": \"a\"}", "cannot add an array and an object", at: 2)
        assertEvaluationError("1 - \"a\"", "cannot subtract a string from a number", at: 2)
        assertEvaluationError("null - 1", "cannot subtract a number from null", at: 5)
        assertEvaluationError("\"a\" * 2", "cannot multiply a string by a number", at: 4)
        assertEvaluationError("[1] / 2", "cannot divide an array by a number", at: 4)
        assertEvaluationError("true % 2", "cannot take the remainder of a boolean divided by a number", at: 5)
        assertEvaluationError("-\"a\"", "cannot negate a string", at: 0)
        assertEvaluationError("1 + -$", "cannot negate null", at: 4)
        assertEvaluationError("1 + 2 + \"x\" * 3", "cannot multiply a string by a number", at: 12)
        assertEvaluationError("\"x\" + 1 + 2", "cannot add a string and a number", at: 4)
    }

    func testAddition() {
        assertResult("\"ab\" + \"cd\"", is: "\"abcd\"")
        assertResult("$ + \"!\"", on: "\"hi\"", is: "\"hi!\"")
        assertResult("[1] + [2, 3]", is: "[1, 2, 3]")
        assertResult("$ + [\"x\"]", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "{\"0\": \"a\", \"1\": \"b\", \"2\": \"x\"}")
        assertResult("$ + [\"x\"]", on: "null", is: "{\"0\": \"x\"}")
        assertResult("{\"a\": 1, \"b\": 2} + {\"b\": 3, \"c\": 4}", is: "{\"a\": 1, \"b\": 3, \"c\": 4}")
        assertResult("$ + {\"b\": null}", on: "{\"a\": 1, \"b\": 2}", is: "{\"a\": 1}")
        assertResult("$ + {\"a\": {\"y\": 2}}", on: "{\"a\": {\"x\": 1}}", is: "{\"a\": {\"y\": 2}}")
        assertResult("$ + {\"a\": 1}", on: "null", is: "{\"a\": 1}")
        assertResult("null + null", is: "null")
        assertResult("\"x\" + null", is: "\"x\"")
        assertResult("null + [1]", is: "[1]")
        assertResult("{\"n\": {\"m\": 1}} + {\"k\": 2}", is: "{\"n\": {\"m\": 1}, \"k\": 2}")
    }

    func testNow() {
        assertResult("now()", on: Node.empty, is: Node(.serverValue(.timestamp)))
        assertResult("$ + {\"seen\": now()}", on: "{\"name\": \"Ada\"}", is: "{\"name\": \"Ada\", \"seen\": {\".sv\": \"timestamp\"}}")
        assertResult("{\"a\": [now()]}", is: "{\"a\": {\"0\": {\".sv\": \"timestamp\"}}}")
        assertResult("now() + null", is: "{\".sv\": \"timestamp\"}")
        assertResult("now() == now()", is: "true")
        assertResult("$ == now()", on: "5", is: "false")
        assertResult("$ ?? now()", on: "null", is: "{\".sv\": \"timestamp\"}")
        assertEvaluationError("now() + 1", "now() is only known to the server; it cannot be used in arithmetic", at: 6)
        assertEvaluationError("1 - now()", "now() is only known to the server; it cannot be used in arithmetic", at: 2)
        assertEvaluationError("-now()", "now() is only known to the server; it cannot be used in arithmetic", at: 0)
        assertEvaluationError("now() < 1", "now() is only known to the server; it cannot be compared", at: 6)
        assertEvaluationError("now() * \"a\"", "now() is only known to the server; it cannot be used in arithmetic", at: 6)
    }

    func testPendingIncrementInTheCurrentValue() {
        let pending = Node(.serverValue(.increment(1)))
        assertResult("$", on: pending, is: pending)
        assertEvaluationError("$ + 1", on: pending, "a pending increment is only known to the server; it cannot be used in arithmetic", at: 2)
        assertEvaluationError("$ >= 1", on: pending, "a pending increment is only known to the server; it cannot be compared", at: 2)
    }

    // MARK: Comparison

    func testEquality() {
        assertResult("1 == 1.0", is: "true")
        assertResult("1 == 1e0", is: "true")
        assertResult("1 != 2", is: "true")
        assertResult("1 != 1", is: "false")
        assertResult("\"a\" == \"a\"", is: "true")
        assertResult("1 == \"1\"", is: "false")
        assertResult("null == null", is: "true")
        assertResult("$ == null", on: "null", is: "true")
        assertResult("$ == null", on: "0", is: "false")
        assertResult("false == null", is: "false")
        assertResult("[1, [2]] == [1, [2]]", is: "true")
        assertResult("[1, 2] == [2, 1]", is: "false")
        assertResult("[1] == [1, null]", is: "false")
        assertResult("{\"a\": 1, \"b\": null} == {\"a\": 1}", is: "true")
        assertResult("{\"a\": 1} == {\"a\": 2}", is: "false")
        assertResult("$ == {\"x\": [1, 2]}", on: "{\"x\": {\"0\": 1, \"1\": 2}}", is: "true")
        assertResult("[] == {}", is: "false")
        // Unicode scalars, not canonical equivalence: precomposed and decomposed é differ.
        assertResult(#""\u00e9" == "e\u0301""#, is: "false")
    }

    func testOrdering() {
        assertResult("1 < 2", is: "true")
        assertResult("2 < 1", is: "false")
        assertResult("2 <= 2", is: "true")
        assertResult("3 > 2", is: "true")
        assertResult("2 >= 3", is: "false")
        assertResult("-1 < 0", is: "true")
        assertResult("\"a\" < \"b\"", is: "true")
        assertResult("\"ab\" < \"a\"", is: "false")
        assertResult("\"a\" <= \"a\"", is: "true")
        assertResult("\"Z\" < \"a\"", is: "true")
        assertResult("\"b\" >= \"a\"", is: "true")
        assertResult(#""\u00e9" > "z""#, is: "true")
        // UTF-8 byte (scalar) order: U+FFFF sorts before U+1F600, which UTF-16 would reverse.
        assertResult(#""\uffff" < "\ud83d\ude00""#, is: "true")
    }

    func testComparisonErrors() {
        assertEvaluationError("\"a\" < 1", "cannot compare a string and a number", at: 4)
        assertEvaluationError("null < 1", "cannot compare null and a number", at: 5)
        assertEvaluationError("$ > 0", on: "null", "cannot compare null and a number", at: 2)
        assertEvaluationError("[1] <= [2]", "cannot compare an array and an array", at: 4)
        assertEvaluationError("true >= false", "cannot compare a boolean and a boolean", at: 5)
        assertParseError("1 < 2 < 3", "comparisons cannot be chained; combine them with 'and'", at: 6)
        assertParseError("1 == 1 == true", "comparisons cannot be chained; combine them with 'and'", at: 7)
        assertParseError("1 < 2 == true", "comparisons cannot be chained; combine them with 'and'", at: 6)
        assertResult("(1 < 2) == true", is: "true")
    }

    // MARK: Logic

    func testLogic() {
        assertResult("true and false", is: "false")
        assertResult("true and true", is: "true")
        assertResult("true or false", is: "true")
        assertResult("false or false", is: "false")
        assertResult("not true", is: "false")
        assertResult("not not true", is: "true")
        assertResult("true and true and false", is: "false")
        assertResult("false or false or true", is: "true")
        assertResult("false or true and false", is: "false")
        assertResult("true or true and false", is: "true")
        assertResult("not false and false", is: "false")
    }

    func testLogicShortCircuits() {
        assertResult("false and abort(\"x\")", is: "false")
        assertResult("true or abort(\"x\")", is: "true")
        assertResult("false and 1", is: "false")
        assertResult("true or null", is: "true")
        assertResult("false and $.a.b", on: "5", is: "false")
        assertAborts("true and abort(\"x\")", with: "x")
        assertAborts("false or abort(\"y\")", with: "y")
    }

    func testLogicTypeErrors() {
        assertEvaluationError("1 and true", "'and' needs booleans, found a number", at: 2)
        assertEvaluationError("true and null", "'and' needs booleans, found null", at: 5)
        assertEvaluationError("true and true and null", "'and' needs booleans, found null", at: 14)
        assertEvaluationError("false or 1", "'or' needs booleans, found a number", at: 6)
        assertEvaluationError("\"x\" or true", "'or' needs booleans, found a string", at: 4)
        assertEvaluationError("not 1", "'not' needs a boolean, found a number", at: 0)
        assertEvaluationError("not not $", "'not' needs a boolean, found null", at: 4)
    }

    // MARK: Default values

    func testCoalesce() {
        assertResult("null ?? 1", is: "1")
        assertResult("2 ?? 1", is: "2")
        assertResult("false ?? true", is: "false")
        assertResult("2 ?? abort(\"x\")", is: "2")
        assertResult("null ?? null ?? 3", is: "3")
        assertResult("null ?? null", is: "null")
        assertResult("$.a ?? $.b ?? \"none\"", on: "{\"b\": \"B\"}", is: "\"B\"")
        assertResult("$.a ?? $.b ?? \"none\"", on: "{\"c\": 1}", is: "\"none\"")
        assertAborts("null ?? abort(\"empty\")", with: "empty")
    }

    // MARK: Conditionals

    func testConditionals() {
        assertResult("if $ == null then 0 else $ + 1", on: "null", is: "0")
        assertResult("if $ == null then 0 else $ + 1", on: "4", is: "5")
        assertResult("if true then 1 else abort(\"no\")", is: "1")
        assertResult("if false then abort(\"no\") else 2", is: "2")
        assertResult("if $ < 0 then \"neg\" else if $ == 0 then \"zero\" else \"pos\"", on: "0", is: "\"zero\"")
        assertResult("if $ < 0 then \"neg\" else if $ == 0 then \"zero\" else \"pos\"", on: "3", is: "\"pos\"")
        assertResult("if true then if false then 1 else 2 else 3", is: "2")
        // The else branch reaches as far right as it can.
        assertResult("if true then 1 else 2 + 3", is: "1")
        assertResult("if false then 1 else 2 + 3", is: "5")
        assertResult("1 + (if true then 1 else 2)", is: "2")
        assertResult("[if true then 1 else 2, 3]", is: "[1, 3]")
        assertAborts("if $ == null then abort(\"missing\") else $ + 1", with: "missing")
        assertResult("if $ == null then abort(\"missing\") else $ + 1", on: "1", is: "2")
        assertEvaluationError("if 1 then 2 else 3", "'if' needs a boolean condition, found a number", at: 3)
        assertEvaluationError("if $.ok then 2 else 3", "'if' needs a boolean condition, found null", at: 3)
    }

    func testConditionalSyntaxErrors() {
        assertParseError("if true 1 else 2", "expected 'then' after the condition of the 'if' at column 1, found '1'", at: 8)
        assertParseError("if true then 1", "expected 'else' to complete the 'if' at column 1, found end of expression", at: 14)
        assertParseError("1 + if true then 1 else 2", "put 'if … then … else …' in parentheses to use it as an operand", at: 4)
        assertParseError("then", "unexpected 'then'", at: 0)
        assertParseError("1 else 2", "unexpected 'else'", at: 2)
    }

    // MARK: Functions

    func testLen() {
        assertResult("len(\"héllo\")", is: "5")
        assertResult(#"len("e\u0301")"#, is: "1")
        assertResult("len(\"👍🏽\")", is: "1")
        assertResult("len(\"\")", is: "0")
        assertResult("len([1, null, 3])", is: "3")
        assertResult("len($)", on: "{\"a\": 1, \"b\": 2}", is: "2")
        assertResult("len($)", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "2")
        assertResult("len($)", on: "null", is: "0")
        assertResult("len({\"a\": 1, \"b\": null})", is: "1")
        assertEvaluationError("len(5)", "len() needs a string, an array or an object, found a number", at: 4)
        assertEvaluationError("len( true)", "len() needs a string, an array or an object, found a boolean", at: 5)
        assertEvaluationError("len(if true then 1 else 2)", "len() needs a string, an array or an object, found a number", at: 4)
        assertEvaluationError("len(now())", "len() needs a string, an array or an object, found now()", at: 4)
    }

    func testKeys() {
        assertResult("keys($)", on: "{\"b\": 1, \"a\": 2, \"10\": 3, \"9\": 4}", is: "[\"9\", \"10\", \"a\", \"b\"]")
        assertResult("keys($)", on: "{\"0\": \"a\", \"1\": \"b\"}", is: "[0, 1]")
        assertResult("keys($)", on: "null", is: "null")
        assertResult("keys($) == []", on: "null", is: "true")
        assertResult("keys({\"x\": 1, \"y\": null})", is: "[\"x\"]")
        assertResult("keys([\"a\", null])", is: "[0, 1]")
        assertEvaluationError("keys(\"s\")", "keys() needs an object or an array, found a string", at: 5)
        assertEvaluationError("keys(1 + 1)", "keys() needs an object or an array, found a number", at: 5)
    }

    func testAbort() {
        assertAborts("abort(\"too big\")", with: "too big")
        assertAborts("abort(\"a\" + \"b\")", with: "ab")
        assertAborts("$ + abort(\"x\")", on: "1", with: "x")
        assertAborts("[1, abort(\"in array\")]", with: "in array")
        assertAborts("{\"a\": abort(\"in object\")}", with: "in object")
        assertAborts("if $ > 10 then abort(\"limit is \" + \"10\") else $ + 1", on: "11", with: "limit is 10")
        assertAborts("len(abort(\"inner\"))", with: "inner")
        assertAborts("abort(\"first\") + abort(\"second\")", with: "first")
        assertEvaluationError("abort(1)", "abort() needs a string (the reason), found a number", at: 6)
        assertEvaluationError("abort($)", "abort() needs a string (the reason), found null", at: 6)
    }

    func testFunctionSyntaxErrors() {
        assertParseError("len()", "len() takes 1 argument, found 0", at: 0)
        assertParseError("1 + len(1, 2)", "len() takes 1 argument, found 2", at: 4)
        assertParseError("keys()", "keys() takes 1 argument, found 0", at: 0)
        assertParseError("now(1)", "now() takes no arguments, found 1", at: 0)
        assertParseError("abort()", "abort() takes 1 argument, found 0", at: 0)
        assertParseError("foo(1)", "unknown function 'foo'; the functions are len(), keys(), now(), abort()", at: 0)
        assertParseError("len", "expected '(' after 'len', found end of expression", at: 3)
        assertParseError("now + 1", "expected '(' after 'now', found '+'", at: 4)
        assertParseError("len(1", "expected ',' or ')' to close the '(' at column 4, found end of expression", at: 5)
        assertParseError("len(1 2)", "expected ',' or ')' to close the '(' at column 4, found '2'", at: 6)
        assertParseError("now(", "expected a value, found end of expression", at: 4)
        assertParseError("len(,)", "unexpected ','", at: 4)
    }

    // MARK: Syntax errors

    func testNames() {
        assertParseError("foo", "unknown name 'foo'; the current value is $", at: 0)
        assertParseError("$ + count", "unknown name 'count'; the current value is $", at: 4)
        assertParseError("True", "unknown name 'True'; the current value is $", at: 0)
        assertParseError("1 == not true", "put 'not …' in parentheses to use it as an operand", at: 5)
        assertParseError("and", "unexpected 'and'", at: 0)
    }

    func testPunctuationErrors() {
        assertParseError("($ + 1", "expected ')' to close the '(' at column 1, found end of expression", at: 6)
        assertParseError("1 + ($", "expected ')' to close the '(' at column 5, found end of expression", at: 6)
        assertParseError("(1 2)", "expected ')' to close the '(' at column 1, found '2'", at: 3)
        assertParseError("1, 2", "unexpected ','", at: 1)
        assertParseError("", "expected a value, found end of expression", at: 0)
        assertParseError("   ", "expected a value, found end of expression", at: 3)
        assertParseError("1 +", "expected a value, found end of expression", at: 3)
        assertParseError("1 2", "unexpected '2'", at: 2)
        assertParseError("$ $", "unexpected '$'", at: 2)
        assertParseError("1 \"a\"", "unexpected string", at: 2)
        assertParseError(")", "unexpected ')'", at: 0)
        assertParseError("* 2", "unexpected '*'", at: 0)
        assertParseError("[1, 2", "expected ',' or ']' to close the '[' at column 1, found end of expression", at: 5)
        assertParseError("[1 2]", "expected ',' or ']' to close the '[' at column 1, found '2'", at: 3)
        assertParseError("[1,]", "unexpected ']'", at: 3)
        assertParseError("{\"a\" 1}", "expected ':' after the key \"a\", found '1'", at: 5)
        assertParseError("{1: 2}", "expected a key (a string or a name), found '1'", at: 1)
        assertParseError("{\"a\": 1", "expected ',' or '}' to close the '{' at column 1, found end of expression", at: 7)
        assertParseError("{\"a\": 1,}", "expected a key (a string or a name), found '}'", at: 8)
        assertParseError("$[0", "expected ']' to close the '[' at column 2, found end of expression", at: 3)
        assertParseError("$[0, 1]", "expected ']' to close the '[' at column 2, found ','", at: 3)
        assertParseError("$.", "expected a name after '.', found end of expression", at: 2)
        assertParseError("$.0", "expected a name after '.', found '0'; write [0] for an index", at: 2)
        assertParseError("$.\"a\"", "expected a name after '.', found a string", at: 2)
    }

    func testLexicalErrors() {
        assertParseError("\"abc", "unterminated string", at: 0)
        assertParseError("1 + \"abc\\", "unterminated string", at: 4)
        assertParseError(#""a\qb""#, #"invalid escape '\q' in a string"#, at: 2)
        assertParseError(#""\u12""#, #"expected four hex digits after \u"#, at: 1)
        assertParseError(#""\u12"#, "unterminated string", at: 0)
        assertParseError(#""\ud83d""#, #"unpaired surrogate in a \u escape"#, at: 1)
        assertParseError(#""\ud83d\u0041""#, #"unpaired surrogate in a \u escape"#, at: 1)
        assertParseError(#""\ude00""#, #"unpaired surrogate in a \u escape"#, at: 1)
        assertParseError("\"a\tb\"", #"control character U+0009 in a string; write it as an escape such as \n"#, at: 2)
        assertParseError("\"a\nb\"", #"control character U+000A in a string; write it as an escape such as \n"#, at: 2)
        assertParseError("01", "numbers must not have leading zeros", at: 0)
        assertParseError("1.", "expected a digit after '.' in a number", at: 1)
        assertParseError("1.e5", "expected a digit after '.' in a number", at: 1)
        assertParseError("1e", "expected a digit in the exponent of a number", at: 1)
        assertParseError("1e+", "expected a digit in the exponent of a number", at: 1)
        assertParseError("1e999", "number out of range", at: 0)
        assertParseError("1 = 1", "unexpected '='; use '==' to compare", at: 2)
        assertParseError("!true", "unexpected '!'; use 'not'", at: 0)
        assertParseError("true && false", "unexpected '&'; use 'and'", at: 5)
        assertParseError("true || false", "unexpected '|'; use 'or'", at: 5)
        assertParseError("$ ? 1", "unexpected '?'; use '??' for a default", at: 2)
        assertParseError("'a'", "strings take double quotes, as in \"text\"", at: 0)
        assertParseError("1 @ 2", "unexpected character '@'", at: 2)
        assertParseError("1 \u{7}", "unexpected character U+0007", at: 2)
        assertParseError("1 +\u{A0}2", "unexpected character U+00A0", at: 3)
        assertParseError("1 +\u{200B}2", "unexpected character U+200B", at: 3)
        assertParseError("1 + .5", "unexpected '.'", at: 4)
    }

    func testOffsetsCountCharacters() {
        // é, 🎉 and 👍🏽 (two scalars) are one Character each.
        assertParseError("\"é🎉👍🏽\" foo", "unexpected 'foo'", at: 6)
        assertEvaluationError("\"e\u{301}\" + 1", "cannot add a string and a number", at: 4)
        // A quote followed by a combining mark is one Character; the string still ends there.
        assertParseError("\"a\"\u{301} + 1", "unexpected character '\u{301}'", at: 2)
        // "\r\n" is one Character too.
        assertParseError("1\r\n+ x", "unknown name 'x'; the current value is $", at: 4)
    }

    func testWhitespace() {
        assertResult("\t$\n+\r\n1 ", on: "1", is: "2")
        assertResult("  {  \"a\"  :  [ 1 ,2 ]  }  ", is: "{\"a\": [1, 2]}")
    }

    // MARK: Precedence

    func testPrecedence() {
        assertResult("1 + 2 * 3", is: "7")
        assertResult("(1 + 2) * 3", is: "9")
        assertResult("$ ?? 1 + 1", on: "null", is: "2")
        assertResult("$ ?? 1 + 1", on: "5", is: "5")
        assertResult("1 ?? 2 == 1", is: "true")
        assertResult("not 1 < 2", is: "false")
        assertResult("not 1 == 2", is: "true")
        assertResult("-2 * 3", is: "-6")
        assertResult("-2 + 3", is: "1")
        assertResult("-$.a * 2", on: "{\"a\": 3}", is: "-6")
        assertResult("1 < 2 and 3 < 4", is: "true")
        assertResult("1 + 1 == 2 or false", is: "true")
        assertResult("true and not false", is: "true")
    }

    // MARK: Conversions

    func testNodeArraysAndObjects() {
        // Keys 0 and 2 of 2 children: an array with a hole.
        let holes = "{\"0\": \"a\", \"2\": \"c\"}"
        assertResult("len($)", on: holes, is: "3")
        assertResult("$[1]", on: holes, is: "null")
        assertResult("keys($)", on: holes, is: "[0, 1, 2]")
        assertResult("$ + [\"d\"]", on: holes, is: "{\"0\": \"a\", \"2\": \"c\", \"3\": \"d\"}")
        assertResult("$ == [\"a\", null, \"c\"]", on: holes, is: "true")
        // Largest key not below twice the count: an object.
        let sparse = "{\"0\": \"a\", \"4\": \"b\"}"
        assertResult("keys($)", on: sparse, is: "[\"0\", \"4\"]")
        assertResult("len($)", on: sparse, is: "2")
        assertResult("$ + {\"1\": \"x\"}", on: sparse, is: "{\"0\": \"a\", \"1\": \"x\", \"4\": \"b\"}")
        // Non-canonical integer keys are object keys.
        assertResult("keys($)", on: "{\"00\": 1, \"1\": 2}", is: "[\"00\", \"1\"]")
        assertResult("keys($)", on: "{\"-1\": 1, \"0\": 2}", is: "[\"-1\", \"0\"]")
    }

    // MARK: Limits and hostile input

    func testLengthLimit() {
        assertResult(String(repeating: " ", count: 65_535) + "1", is: "1")
        assertParseError(String(repeating: " ", count: 65_536) + "1", "the expression is too long (the limit is 65536 characters)", at: 65_536)
        assertParseError(String(repeating: "x", count: 1_000_000), "the expression is too long (the limit is 65536 characters)", at: 65_536)
    }

    func testDepthLimit() {
        let tooDeep = "the expression is nested too deeply (the limit is 256 levels)"
        assertResult(String(repeating: "(", count: 256) + "1" + String(repeating: ")", count: 256), is: "1")
        assertParseError(String(repeating: "(", count: 257) + "1" + String(repeating: ")", count: 257), tooDeep, at: 256)
        assertParseError(String(repeating: "(", count: 10_000), tooDeep, at: 256)
        assertParseError(String(repeating: "[", count: 10_000), tooDeep, at: 256)
        assertParseError(String(repeating: "{a:", count: 10_000), tooDeep, at: 256 * 3)
        assertParseError(String(repeating: "-", count: 10_000) + "1", tooDeep, at: 256)
        assertParseError(String(repeating: "not ", count: 10_000) + "true", tooDeep, at: 256 * 4)
        assertParseError(String(repeating: "len(", count: 10_000), tooDeep, at: 256 * 4 + 3)
        assertParseError(String(repeating: "$[", count: 10_000), tooDeep, at: 256 * 2 + 1)
        assertParseError(String(repeating: "if true then 1 else ", count: 3_000) + "1", tooDeep, at: 256 * 20)
        assertResult(String(repeating: "-", count: 256) + "1", is: "1")
        assertResult(String(repeating: "not ", count: 256) + "true", is: "true")
        // Built by hand: the JSON reader refuses this depth.
        var nested = Node(1)
        for _ in 0..<256 { nested = Node(children: ChildMap(sorted: [(ChildKey("0"), nested)])) }
        assertResult(String(repeating: "[", count: 256) + "1" + String(repeating: "]", count: 256), on: Node.empty, is: nested)
    }

    func testLongChainsAreNotDeep() {
        assertResult(String(repeating: "1+", count: 30_000) + "1", is: "30001")
        assertResult(String(repeating: "null ?? ", count: 5_000) + "1", is: "1")
        assertResult(String(repeating: "true and ", count: 5_000) + "true", is: "true")
        assertResult("$" + String(repeating: ".a", count: 20_000), on: "{\"a\": {\"b\": 1}}", is: "null")
        assertResult("[" + String(repeating: "1,", count: 20_000) + "1][20000]", is: "1")
    }

    /// The deepest expressions parse and evaluate on a secondary thread with a small stack:
    /// 512 KiB, what Dispatch gives its threads on macOS, when optimized (they were measured to
    /// need under 192 KiB); unoptimized frames are several times larger (under 900 KiB was
    /// measured), so a debug build gets 2 MiB.
    func testDeepestExpressionsFitASmallStack() {
        #if DEBUG
        let stackSize = 2048 * 1024
        #else
        let stackSize = 512 * 1024
        #endif
        let sources = [
            String(repeating: "(", count: 256) + "$ + 1" + String(repeating: ")", count: 256),
            String(repeating: "[", count: 255) + "now()" + String(repeating: "]", count: 255),
            String(repeating: "{a:", count: 256) + "1" + String(repeating: "}", count: 256),
            String(repeating: "-", count: 256) + "1",
            String(repeating: "not ", count: 256) + "true",
            String(repeating: "len([", count: 128) + "1" + String(repeating: "])", count: 128),
            String(repeating: "if true then ", count: 256) + "1" + String(repeating: " else 2", count: 256),
            String(repeating: "[", count: 256) + "1" + String(repeating: "]", count: 256) + " == "
                + String(repeating: "[", count: 256) + "1" + String(repeating: "]", count: 256),
            String(repeating: "[0][", count: 256) + "0" + String(repeating: "]", count: 256),
            String(repeating: "(", count: 10_000),
        ]
        let finished = expectation(description: "evaluated on a small stack")
        let results = ResultBox()
        let thread = Thread {
            for source in sources {
                do {
                    results.append(try TransactionExpression.parse(source).evaluate(current: Node(1)))
                } catch {
                    results.append(error)
                }
            }
            finished.fulfill()
        }
        thread.stackSize = stackSize
        thread.start()
        wait(for: [finished], timeout: 60)
        XCTAssertEqual(results.count, sources.count)
        XCTAssertEqual(results.outcomes.count, sources.count - 1)
    }

    /// Every prefix and many mutations of valid expressions either parse and evaluate or fail
    /// with an ExpressionError inside the source: never a trap.
    func testMutatedInputsNeverTrap() throws {
        let seeds = [
            "if $ == null then abort(\"missing\") else $ + {\"n\": ($.n ?? 0) + 1, \"at\": now()}",
            "keys($)[0] ?? len(\"é🎉\") * -2.5e1 % 7 / 3",
            "not ($.a.b[\"c d\"][1] < 2) or [1, [2], {x: null}] == []",
            "\"\\u00e9\\ud83d\\ude00\\n\" + \"\\\"\"",
        ]
        let current = try node("{\"a\": {\"b\": {\"c d\": [1, 2, 3]}}, \"n\": 4}")
        let inserts = ["(", ")", "[", "]", "{", "}", "\"", "\\", "$", ".", ",", ":", "-", "1", "e", "?", "!", "=", " ", "\u{301}", "if", "not"]
        var checked = 0
        for seed in seeds {
            let characters = Array(seed)
            for cut in 0...characters.count {
                var variants = [String(characters[..<cut])]
                for insert in inserts {
                    variants.append(String(characters[..<cut]) + insert + String(characters[cut...]))
                }
                if cut < characters.count {
                    variants.append(String(characters[..<cut]) + String(characters[(cut + 1)...]))
                }
                for variant in variants {
                    do {
                        _ = try TransactionExpression.parse(variant).evaluate(current: current)
                    } catch let error as ExpressionError {
                        XCTAssert(error.offset >= 0 && error.offset <= variant.count, "\(variant.prefix(80)): offset \(error.offset)")
                        XCTAssertFalse(error.message.isEmpty)
                    }
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 1000)
    }

    func testErrorDescriptionIsTheMessage() {
        XCTAssertEqual("\(ExpressionError("division by zero", offset: 2))", "division by zero")
    }
}

/// Collects results from another thread for one test.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Any] = []

    func append(_ item: Any) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return items.count
    }

    var outcomes: [TransactionOutcome] {
        lock.lock()
        defer { lock.unlock() }
        return items.compactMap { $0 as? TransactionOutcome }
    }
}
