import XCTest
@testable import RTDBRules

/// `matches()` as JavaScript's `test()`, in time linear in the string.
final class RuleRegexTests: XCTestCase {
    private func regex(_ pattern: String, _ flags: String = "") throws -> RuleRegex {
        try RuleRegex(pattern, ignoringCase: flags == "i")
    }

    func testMatchesAsJavaScriptTestDoes() throws {
        let cases: [(String, String, String, Bool)] = [
            ("^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,4}$", "", "ada@example.com", true),
            ("^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,4}$", "", "ada@example", false),
            ("^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,4}$", "i", "ADA@EXAMPLE.COM", true),
            ("foo", "", "a food", true),
            ("^foo", "", "a food", false),
            ("bar$", "", "foobar", true),
            ("^\\d{4}-\\d{2}-\\d{2}$", "", "2026-11-23", true),
            ("^\\d{4}-\\d{2}-\\d{2}$", "", "2026-1-23", false),
            ("^(cat|dog)s?$", "", "dogs", true),
            ("^(cat|dog)s?$", "", "cow", false),
            ("^(?:ab)+$", "", "ababab", true),
            ("^(?:ab)+$", "", "ababa", false),
            ("^[^0-9]*$", "", "no digits", true),
            ("^[^0-9]*$", "", "one 1", false),
            ("^\\w+\\s\\W$", "", "word !", true),
            ("^a{2,3}$", "", "aaaa", false),
            ("^a{2,}$", "", "aaaa", true),
            ("^.$", "", "é", true),
            ("", "", "anything", true),
            ("^$", "", "", true),
            ("[A-Z]", "i", "lower", true),
        ]
        for (pattern, flags, text, expected) in cases {
            XCTAssertEqual(try regex(pattern, flags).matches(text), expected, "/\(pattern)/\(flags) on \(text)")
        }
    }

    func testRefusesWhatItDoesNotSupport() {
        for pattern in ["(a", "a)", "[a-", "*a", "a{3,2}", "(\\1)", "\\bword", "(?=x)", "a{1001}",
                        "(){1000}{1000}{1000}{1000}", "a{0}{1000}{1000}{1000}", "(a{1000}){1000}"] {
            XCTAssertThrowsError(try RuleRegex(pattern, ignoringCase: false), pattern)
        }
    }

    /// A pattern that makes a backtracking matcher run for years answers at once.
    func testNestedRepetitionStaysLinear() throws {
        let evil = try regex("^(a+)+$")
        XCTAssertFalse(evil.matches(String(repeating: "a", count: 5_000) + "!"))
        XCTAssertTrue(evil.matches(String(repeating: "a", count: 5_000)))
    }
}
