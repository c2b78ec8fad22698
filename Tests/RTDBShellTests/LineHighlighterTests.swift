import XCTest
import RTDBData
@testable import RTDBShell

/// The line as it is typed: its exact escape sequences, the mistakes marked, the hints.
final class LineHighlighterTests: XCTestCase {
    let bold = "\u{1B}[1m", yellow = "\u{1B}[33m", blue = "\u{1B}[34m", green = "\u{1B}[32m", cyan = "\u{1B}[36m"
    let magenta = "\u{1B}[35m", server = "\u{1B}[35;1m", red = "\u{1B}[4;31m", off = "\u{1B}[0m"

    func highlight(_ line: String) -> String { LineHighlighter.highlight(line) }

    func testCommandsPathsFlagsAndValues() {
        XCTAssertEqual(highlight(#"set /users/ada {"name": "Ada", "n": 1.5, "ok": true}"#),
                       "\(bold)set\(off) \(blue)/users/ada\(off) {\"name\": \(green)\"Ada\"\(off), \"n\": \(cyan)1.5\(off), \"ok\": \(magenta)true\(off)}")
        XCTAssertEqual(highlight("query /u --orderByChild age --limitToFirst 2 --format csv"),
                       "\(bold)query\(off) \(blue)/u\(off) \(yellow)--orderByChild\(off) \(green)age\(off) \(yellow)--limitToFirst\(off) \(cyan)2\(off) \(yellow)--format\(off) \(magenta)csv\(off)")
        XCTAssertEqual(highlight(#"set /a {"at": now(), "n": increment(2)}"#),
                       "\(bold)set\(off) \(blue)/a\(off) {\"at\": \(server)now()\(off), \"n\": \(server)increment(2)\(off)}")
        XCTAssertEqual(highlight("set /c increment(-1)"), "\(bold)set\(off) \(blue)/c\(off) \(server)increment(-1)\(off)")
        XCTAssertEqual(highlight("set /name 'Ada L.'"), "\(bold)set\(off) \(blue)/name\(off) \(green)'Ada L.'\(off)")
        XCTAssertEqual(highlight("cp /a /b --force"), "\(bold)cp\(off) \(blue)/a\(off) \(blue)/b\(off) \(yellow)--force\(off)")
        XCTAssertEqual(highlight("repeat 3 --every 1s get /n"), "\(bold)repeat\(off) \(cyan)3\(off) \(yellow)--every\(off) \(green)1s\(off) \(bold)get\(off) \(blue)/n\(off)")
        XCTAssertEqual(highlight("rules check read /users"), "\(bold)rules\(off) \(magenta)check\(off) \(magenta)read\(off) \(blue)/users\(off)")
        XCTAssertEqual(highlight(#"update /u {"a/b": 1}"#), "\(bold)update\(off) \(blue)/u\(off) {\"a/b\": \(cyan)1\(off)}")
        XCTAssertEqual(highlight("   "), "   ")
        // What other parsers read is not judged by JSON's rules: a transaction's expression,
        // an update's paths in rules check, the claims of auth.
        XCTAssertEqual(highlight("tx /n {count: $.count + 1}"), "\(bold)tx\(off) \(blue)/n\(off) {count: $.count + 1}")
        XCTAssertEqual(highlight(#"rules check update /a {"b/c": 1}"#), "\(bold)rules\(off) \(magenta)check\(off) \(magenta)update\(off) \(blue)/a\(off) {\"b/c\": \(cyan)1\(off)}")
        XCTAssertEqual(highlight(#"auth --uid ada --claims {"https://x.io/r": 1}"#),
                       "\(bold)auth\(off) \(yellow)--uid\(off) \(green)ada\(off) \(yellow)--claims\(off) {\"https://x.io/r\": \(cyan)1\(off)}")
        XCTAssertEqual(highlight("repeat 3 "), "\(bold)repeat\(off) \(cyan)3\(off) ")
    }

    /// What the parser would stop at, underlined in red from where it starts.
    func testMistakesAreMarkedWhereTheyStart() {
        XCTAssertEqual(highlight("sett /a 1"), "\(red)sett\(off) /a 1")
        XCTAssertEqual(highlight("get /a --shallo"), "\(bold)get\(off) \(blue)/a\(off) \(red)--shallo\(off)")
        XCTAssertEqual(highlight("get /a$b"), "\(bold)get\(off) \(red)/a$b\(off)")
        XCTAssertEqual(highlight(#"set /a {"x": 1"#), "\(bold)set\(off) \(blue)/a\(off) \(red){\"x\": 1\(off)")
        XCTAssertEqual(highlight(#"set /a "open"#), "\(bold)set\(off) \(blue)/a\(off) \(red)\"open\(off)")
        XCTAssertEqual(highlight(#"set /a {"x": tru}"#), "\(bold)set\(off) \(blue)/a\(off) {\"x\": \(red)tru}\(off)")
        XCTAssertEqual(highlight("get /a --format xml"), "\(bold)get\(off) \(blue)/a\(off) \(yellow)--format\(off) \(red)xml\(off)")
        XCTAssertEqual(highlight("rules chek"), "\(bold)rules\(off) \(red)chek\(off)")
        XCTAssertEqual(highlight("help sett"), "\(bold)help\(off) \(red)sett\(off)")
        XCTAssertEqual(highlight("repeat 2 sett"), "\(bold)repeat\(off) \(cyan)2\(off) \(red)sett\(off)")
        // Typing a string inside a value: what comes before keeps its colours.
        XCTAssertEqual(highlight(#"set /a {"na"#), "\(bold)set\(off) \(blue)/a\(off) \(red){\"na\(off)")
    }

    /// Once the line ends in a space, the command's usage still to type; a history line
    /// that starts with the line comes first, the newest.
    func testHints() {
        XCTAssertEqual(LineHighlighter.usageHint("set"), " PATH VALUE [--priority P]")
        XCTAssertEqual(LineHighlighter.usageHint("set "), "PATH VALUE [--priority P]")
        XCTAssertEqual(LineHighlighter.usageHint("set /a "), "VALUE [--priority P]")
        XCTAssertEqual(LineHighlighter.usageHint("set /a 1 "), "[--priority P]")
        XCTAssertEqual(LineHighlighter.usageHint("set /a"), nil)
        XCTAssertEqual(LineHighlighter.usageHint("cp /a --merge "), "DST [--merge] [--force]")
        XCTAssertEqual(LineHighlighter.usageHint("repeat 3 --every 1s set "), "PATH VALUE [--priority P]")
        XCTAssertEqual(LineHighlighter.usageHint("sett "), nil)
        XCTAssertEqual(LineHighlighter.usageHint("get /a --format "), "FORMAT")
        XCTAssertEqual(LineHighlighter.usageHint("get /a --format csv "), "[--shallow] [--export] [query flags] [--explain]")
        XCTAssertEqual(LineHighlighter.usageHint(#"set /a {"#), nil)
        let history = ["get /users", "get /users/ada", "set /x 1", "get /users/bob"]
        XCTAssertEqual(LineHighlighter.suggestion("get /users/", history: history), "bob")
        XCTAssertEqual(LineHighlighter.suggestion("get /users/a", history: history), "da")
        XCTAssertEqual(LineHighlighter.suggestion("get /users/ada", history: history), nil)
        XCTAssertEqual(LineHighlighter.suggestion("", history: history), nil)
        // A value continued over lines is not offered: the prompt shows one row.
        XCTAssertEqual(LineHighlighter.suggestion("set /a", history: ["set /a 1", "set /a {\n\"x\": 1}"]), " 1")
        XCTAssertEqual(LineHighlighter.dimmed("bob"), "\u{1B}[2mbob\u{1B}[0m")
    }

    /// Non-ASCII text keeps its place: spans count Unicode scalars.
    func testTextBeyondASCII() {
        XCTAssertEqual(highlight("set /名前 \"é😀\""), "\(bold)set\(off) \(blue)/名前\(off) \(green)\"é😀\"\(off)")
        XCTAssertEqual(highlight("set /a 😀$"), "\(bold)set\(off) \(blue)/a\(off) \(green)😀$\(off)")
    }
}
