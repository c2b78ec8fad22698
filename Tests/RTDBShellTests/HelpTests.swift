import XCTest
@testable import RTDBShell
import RTDBData

/// `help` laid out for the terminal's width.
final class HelpTests: XCTestCase {
    func testSynopsisDropsFlagsAndLaterAlternatives() {
        let synopsis = Dictionary(uniqueKeysWithValues: CommandSpec.all.map { ($0.name, $0.synopsis) })
        XCTAssertEqual(synopsis["query"], "query PATH [flags]")
        XCTAssertEqual(synopsis["get"], "get [PATH] [query flags]")
        XCTAssertEqual(synopsis["set"], "set PATH VALUE [flags]")
        XCTAssertEqual(synopsis["tx"], "tx PATH EXPR [flags]")
        XCTAssertEqual(synopsis["update"], "update PATH OBJECT")
        XCTAssertEqual(synopsis["ondisconnect"], "ondisconnect [PATH ACTION [VALUE]]")
    }

    /// Every line fits; summaries start in one column, beside their command when it fits.
    func testOverviewFitsTheWidth() {
        for width in [80, 140] {
            let lines = Help.overview(width: width).split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertTrue(lines.allSatisfy { $0.count <= width }, "\(width): \(lines.filter { $0.count > width })")
            let commands = lines.dropFirst().prefix { !$0.isEmpty }
            XCTAssertEqual(commands.first, "  get [PATH] [query flags]        print the value at a path")
            // The continuation and next-line summaries start at the same column.
            for line in commands where line.hasPrefix("   ") {
                XCTAssertTrue(line.hasPrefix(String(repeating: " ", count: 34)) && line.dropFirst(34).first != " ", "\(width): '\(line)'")
            }
        }
        let wide = Help.overview(width: 140)
        XCTAssertTrue(wide.contains("  tx PATH EXPR [flags]            atomic read-modify-write of a value\n"), wide)
        XCTAssertTrue(wide.contains("  ondisconnect [PATH ACTION [VALUE]]\n                                  writes the server makes when this shell leaves\n"), wide)
    }

    /// Narrower than two columns allow: each summary under its command.
    func testNarrowTerminalsPutSummariesUnderTheirCommands() {
        let text = Help.overview(width: 50)
        XCTAssertTrue(text.hasPrefix("Commands:\n  get [PATH] [query flags]\n      print the value at a path\n"), text)
        XCTAssertTrue(text.split(separator: "\n").allSatisfy { $0.count <= 50 })
    }

    /// The long query usage is folded under "usage: ".
    func testCommandHelpFoldsTheUsage() {
        let text = Help.command("query", width: 80)
        XCTAssertTrue(text.hasPrefix("usage: query PATH [--orderByChild K | --orderByKey | --orderByValue |\n       --orderByPriority]"), text)
        XCTAssertTrue(text.split(separator: "\n").allSatisfy { $0.count <= 80 }, text)
    }

    /// `rules coverage` prints whatever a server sends without trapping: counts too large or
    /// not whole read as 0, depths out of range are clamped.
    func testACoverageReportWithOddNumbersPrints() throws {
        let report = try JSONValue.parse(#"""
            {"rules": [{"rule": "/.read", "line": 1e300, "column": -2, "evaluations": 1.5e308, "parts": [
              {"text": "auth != null", "depth": -7, "constant": false, "evaluations": 3, "values": {"true": 1e300, "false": 2}},
              {"text": "auth", "depth": 1e9, "constant": false, "evaluations": 0.5}]}]}
            """#)
        XCTAssertEqual(Shell.describeCoverage(report), """
            0 of 1 rules evaluated, 1 of 2 parts, since the rules were set
            /.read (line 0, column -2): never evaluated

            """)
    }
}
