import XCTest
import RTDBData
@testable import RTDBRules

/// Rules whose cost the data decides (a pattern that makes every position try thousands of
/// threads, replaces that multiply a string) are refused once a request's evaluation budget
/// runs out, naming where; ordinary rules never come near it.
final class RuleBudgetTests: XCTestCase {
    private let user = Identity.user(uid: "ada", claims: .object([("sub", .string("ada"))]), expires: nil)

    private func check(_ rule: String, _ value: Node, at path: String = "x") throws -> SecurityRules.Denial? {
        var rules = try SecurityRules(parsing: #"{"rules": {".write": true, "x": {".validate": "\#(rule)"}}}"#)
        rules.budget = SecurityRules.evaluationBudget / 5  // as much work, in a fifth of the time (a debug build)
        let after = Node.empty.setting(Path(path), to: value)
        return rules.checkWrite([(Path(path), value)], identity: user, before: .empty, after: after, now: 0)
    }

    func testAPatternThatWouldRunForSecondsIsRefusedAsOverBudget() throws {
        let text = Node(String(repeating: "a", count: 16 << 10))
        XCTAssertEqual(try check(#"newData.val().matches(/([a-z]{0,1000}){9}0/)"#, text), .overBudget(Path("x")))
        XCTAssertEqual(try check(#"newData.val().matches(/(a|aa|aaa|aaaa|a?a?a?a?){1,600}$/)"#, text), .overBudget(Path("x")))
        // The same patterns on short data, and ordinary ones on long data, are evaluated.
        XCTAssertEqual(try check(#"newData.val().matches(/([a-z]{0,1000}){9}0/)"#, Node("abc0")), nil)
        XCTAssertEqual(try check(#"newData.val().matches(/^a+$/)"#, text), nil)
        XCTAssertEqual(try check(#"newData.val().matches(/b/)"#, text), .validation(Path("x")))
    }

    func testReplacesThatMultiplyAStringAreRefusedBeforeTheyAreBuilt() throws {
        let eight = Array(repeating: ".replace('a', 'aaaaaaaa')", count: 8).joined()
        XCTAssertEqual(try check("newData.val()\(eight).length > 0", Node(String(repeating: "a", count: 1024))), .overBudget(Path("x")))
        let four = Array(repeating: ".replace('a', 'aaaaaaaa')", count: 4).joined()
        XCTAssertEqual(try check("newData.val()\(four).length == 4096", Node("a")), nil)
    }

    /// A write of many children, each validated by a cheap pattern, is not refused for its
    /// size: each rule brings its allowance.
    func testManyCheapRulesFitWhateverTheirNumber() throws {
        var rules = try SecurityRules(parsing: #"{"rules": {".write": true, "list": {"$id": {".validate": "newData.val().matches(/^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$/)"}}}}"#)
        rules.budget = SecurityRules.evaluationBudget / 5
        let children = (0..<5_000).map { (ChildKey("k\($0)"), Node("someone.\($0)@example.com")) }
        let list = Node(children: ChildMap(unsorted: children))
        XCTAssertNil(rules.checkWrite([(Path("list"), list)], identity: user, before: .empty, after: Node.empty.setting(Path("list"), to: list), now: 0))
    }

    func testAReadOverBudgetIsRefused() throws {
        var rules = try SecurityRules(parsing: #"{"rules": {"x": {".read": "data.val().matches(/([a-z]{0,1000}){9}0/)"}}}"#)
        rules.budget = SecurityRules.evaluationBudget / 5
        let data = Node.empty.setting(Path("x"), to: Node(String(repeating: "a", count: 16 << 10)))
        XCTAssertFalse(rules.canRead(Path("x"), identity: user, query: nil, data: data, now: 0))
    }
}
