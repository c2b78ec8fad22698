import Foundation
import XCTest

/// `rules coverage` as a user reads it: what the requests of every client made of each rule
/// and each part of it since the rules were set, per namespace.
final class RulesCoverageTests: XCTestCase {
    static let rules = """
        {
          "rules": {
            "notes": {
              ".read": "auth != null",
              "$uid": {
                ".write": "auth.uid == $uid",
                "$note": { ".validate": "newData.child('text').isString()" }
              }
            }
          }
        }

        """

    func testTheReportFollowsTheRequestsOfEveryClient() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.rules.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        try "owner\n".write(toFile: folder + "/owner.txt", atomically: true, encoding: .utf8)
        let (server, port) = try Binary.startServer(folder: folder + "/data", arguments: ["--rules", folder + "/rules.json"])
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        func shell(_ namespace: String, _ script: String) throws -> Binary.Result {
            try Binary.run(["--url", "ws://127.0.0.1:\(port)?ns=\(namespace)", "--no-persistence", "--keep-going"], input: script, in: folder)
        }
        // Two users; one write refused by the .write, one by the .validate, one read refused.
        _ = try shell("demo", """
            auth --uid ada
            set /notes/ada/n1 {"text": "hi"}
            set /notes/ada/n2 {"text": 2}
            set /notes/bob/n1 {"text": "not mine"}
            get /notes/ada/n1
            logout
            get /notes
            """)
        let report = try shell("demo", "auth owner.txt\nrules coverage\n")
        XCTAssertEqual(report.stderr, "authenticated as owner (from owner.txt)\n")
        XCTAssertEqual(report.stdout, """
            3 of 3 rules evaluated, 10 of 10 parts, since the rules were set
            /notes/.read (line 4, column 17): evaluated 2 times
              auth != null → false ×1, true ×1
                auth → auth ×1, null ×1
            /notes/$uid/.write (line 6, column 20): evaluated 3 times
              auth.uid == $uid → true ×2, false ×1
                auth.uid → "ada" ×3
                  auth → auth ×3
                $uid → "ada" ×2, "bob" ×1
            /notes/$uid/$note/.validate (line 7, column 34): evaluated 2 times
              newData.child('text').isString() → false ×1, true ×1
                newData.child('text') → a snapshot ×2
                  newData → a snapshot ×2

            """)
        // Each namespace counts its own requests; new rules count afresh.
        let other = try shell("other", "auth owner.txt\nrules coverage\nrules coverage --json\n")
        XCTAssertTrue(other.stdout.hasPrefix("""
            0 of 3 rules evaluated, 0 of 10 parts, since the rules were set
            /notes/.read (line 4, column 17): never evaluated
            /notes/$uid/.write (line 6, column 20): never evaluated
            /notes/$uid/$note/.validate (line 7, column 34): never evaluated

            """), other.stdout)
        let json = try XCTUnwrap(other.stdout.split(separator: "\n").last)
        XCTAssertTrue(json.hasPrefix(#"{"source":"{\n  \"rules\": {\n"#), String(json))
        XCTAssertTrue(json.contains(#"\n}\n","rules":[{"rule":"/notes/.read","line":4,"column":17,"text":"auth != null","evaluations":0,"parts":["#), String(json))
        let reset = try shell("demo", "auth owner.txt\nrules set rules.json\nrules coverage\n")
        XCTAssertTrue(reset.stdout.hasPrefix("0 of 3 rules evaluated"), reset.stdout)
        // An embedded database has no rules to cover.
        let embedded = try Binary.run(["--data", folder + "/embedded", "-c", "rules coverage"])
        XCTAssertEqual(embedded.stderr, "error: -c 1: an embedded database has no rules, so no coverage: rules apply to rtdb serve (--rules) and hosted databases\n")
    }
}
