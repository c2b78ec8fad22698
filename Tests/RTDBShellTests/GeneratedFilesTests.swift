import Foundation
import XCTest
@testable import RTDBShell

/// The completion scripts and the manual's OPTIONS and COMMANDS sections are made from the
/// program's option table and the command table;
/// the checked-in files must be exactly what it makes. `scripts/generate-docs` (or this test
/// with RTDB_REGENERATE=1) rewrites them after the table changes.
final class GeneratedFilesTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let regenerate = ProcessInfo.processInfo.environment["RTDB_REGENERATE"] == "1"

    func check(_ relative: String, _ expected: String) throws {
        let url = Self.root.appendingPathComponent(relative)
        if regenerate { try expected.write(to: url, atomically: true, encoding: .utf8) }
        let actual = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(actual == expected, "\(relative) is not what the command table makes: run scripts/generate-docs")
    }

    func testCompletionScripts() throws {
        try check("completions/rtdb.bash", try XCTUnwrap(CompletionScript.script(for: "bash")))
        try check("completions/_rtdb", try XCTUnwrap(CompletionScript.script(for: "zsh")))
        try check("completions/rtdb.fish", try XCTUnwrap(CompletionScript.script(for: "fish")))
        XCTAssertNil(CompletionScript.script(for: "tcsh"))
    }

    func testManualCommandsSection() throws {
        try checkManualSection(begin: ManPage.beginMarker, end: ManPage.endMarker, ManPage.commandsSection())
    }

    func testManualOptionsSection() throws {
        try checkManualSection(begin: ManPage.optionsBeginMarker, end: ManPage.optionsEndMarker, ManPage.optionsSection())
    }

    func testManualServeOptions() throws {
        try checkManualSection(begin: ManPage.serveOptionsBeginMarker, end: ManPage.serveOptionsEndMarker, ManPage.serveOptionsSection())
    }

    /// The part of man/rtdb.1 from the comment that starts like `begin` through `end` is `section`.
    private func checkManualSection(begin beginMarker: String, end endMarker: String, _ section: String) throws {
        let url = Self.root.appendingPathComponent("man/rtdb.1")
        let page = try String(contentsOf: url, encoding: .utf8)
        let opening = String(beginMarker.prefix { $0 != "(" }).trimmingCharacters(in: .whitespaces)
        let begin = try XCTUnwrap(page.range(of: opening), "man/rtdb.1 has no \(opening) marker")
        let end = try XCTUnwrap(page.range(of: endMarker + "\n", range: begin.upperBound..<page.endIndex))
        let regenerated = String(page[..<begin.lowerBound]) + section + String(page[end.upperBound...])
        try check("man/rtdb.1", regenerated)
    }

    /// Every command of the table is in the manual, each usage word set as roff wants.
    func testManualFormatting() {
        let section = ManPage.commandsSection()
        for spec in CommandSpec.all { XCTAssertTrue(section.contains(ManPage.flag(spec.name)), spec.name) }
        XCTAssertEqual(ManPage.usage("set PATH VALUE [--priority P]"), "\\fBset\\fR \\fIPATH\\fR \\fIVALUE\\fR [\\fB\\-\\-priority\\fR \\fIP\\fR]")
        XCTAssertEqual(ManPage.text(".hidden"), "\\&.hidden")
        XCTAssertEqual(ManPage.marked("a `--b` *C*."), "a \\fB\\-\\-b\\fR \\fIC\\fR.")
        XCTAssertEqual(ManPage.marked("`*` for any"), "\\fB*\\fR for any")
        XCTAssertEqual(ProgramOption("--x", "", details: "`*` or *N* `a`").plainDetails, "* or N a")
    }
}
