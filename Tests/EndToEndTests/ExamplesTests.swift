import Foundation
import XCTest
import RTDBShell

/// Every example `help` prints, and the README tour's commands, run as printed by the real
/// binary, against an embedded database and against `rtdb serve`.
final class ExamplesTests: XCTestCase {
    /// What the examples assume is there (users, notes, stock, a background watch, a file).
    static let seed = """
    set /users {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}, "cy": {"name": "Cy"}}
    set /notes {"n1": {"lastModified": 10}, "n2": {"lastModified": 20}, "n5": {"lastModified": 50}}
    set /stock/pens 3
    set /scores {"a": 10, "b": 7}
    set /sessions/old true
    set /tasks {"a": 1, "b": 2}
    watch /notes --events child_added --bg

    """

    /// Examples that watch in the foreground run until Ctrl-C: started apart and interrupted.
    static func isForegroundWatch(_ example: String) -> Bool {
        (example.hasPrefix("watch ") || example.contains(" --watch")) && !example.contains("--bg")
    }

    /// Runs `script` through `rtdb ARGS` in a folder holding config.json, settings.json and
    /// users.json; every line must succeed, with nothing on stderr but the summaries of
    /// import and export.
    func runScript(_ arguments: [String], _ script: String, label: String) throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(#"{"theme": "dark"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/config.json"))
        try Data(#"{"theme": "light", "lang": "en"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/settings.json"))
        try Data(#"{"ada": {"name": "Ada"}, "dan": {"name": "Dan"}}"#.utf8).write(to: URL(fileURLWithPath: folder + "/users.json"))
        try Data("owner\n".utf8).write(to: URL(fileURLWithPath: folder + "/token.txt"))
        try Data(#"{"rules": {".read": true, ".write": true}}"#.utf8).write(to: URL(fileURLWithPath: folder + "/rules.json"))
        let result = try Binary.run(arguments, input: script, in: folder)
        XCTAssertEqual(result.status, 0, "\(label): \(result.stderr)\n\(result.stdout)")
        // Nothing on stderr but what timing says by design.
        let messages = result.stderr.split(separator: "\n").filter { line in
            !["timing is ", "Time: ", "imported ", "exported ", "authenticated as ", "logged out", "the rules of ", "now on namespace ",
              "saved snapshot ", "restored snapshot ", "removed snapshot ", "profiling ", "wrote "].contains { line.hasPrefix($0) }
                && !line.hasSuffix(" recorded")
        }
        XCTAssertEqual(messages, [], label)
    }

    /// Each command's examples after the seed; those of server-only commands (`auth`,
    /// `rules`) only for a server, signed in as its owner (token.txt holds `owner`), as are
    /// those of commands a server keeps for its owner (`snapshot`).
    func examplesScript(server: Bool) -> [(String, String)] {
        CommandSpec.all.filter { !$0.examples.isEmpty && (server || !$0.needsServer) }.map { spec in
            let seed = Self.seed + (spec.needsServer || (server && spec.ownerOnServer) ? "auth token.txt\n" : "")
            return (spec.name, seed + spec.examples.filter { !Self.isForegroundWatch($0) }.joined(separator: "\n") + "\n")
        }
    }

    func tourScript() throws -> String {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let start = text.range(of: "## A tour\n\n```text\n"),
              let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else { return "" }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            line.range(of: #"^rtdb[^ ]*> "#, options: .regularExpression).map { String(line[$0.upperBound...]) }
        }.joined(separator: "\n") + "\n"
    }

    func testExamplesAndTheTourOnAnEmbeddedDatabase() throws {
        for (name, script) in examplesScript(server: false) {
            try runScript(["--data", Binary.temporaryFolder()], script, label: "help \(name)")
        }
        try runScript(["--data", Binary.temporaryFolder()], try tourScript(), label: "README tour")
    }

    func testExamplesAndTheTourOnAServer() throws {
        let (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        XCTAssertEqual(examplesScript(server: true).filter { CommandSpec.find($0.0)?.needsServer == true }.map(\.0), ["cache", "auth", "rules", "namespaces", "use"])
        for (name, script) in examplesScript(server: true) {
            try runScript(["--url", "ws://127.0.0.1:\(port)?ns=examples-\(name)"], script, label: "help \(name)")
        }
        try runScript(["--url", "ws://127.0.0.1:\(port)?ns=tour"], try tourScript(), label: "README tour")
    }

    /// The foreground watch examples print their first events, and Ctrl-C ends them.
    func testForegroundWatchExamples() throws {
        let examples = CommandSpec.all.flatMap(\.examples).filter(Self.isForegroundWatch)
        XCTAssertGreaterThanOrEqual(examples.count, 3)
        let folder = Binary.temporaryFolder()
        XCTAssertEqual(try Binary.run(["--data", folder], input: Self.seed).status, 0)
        for example in examples {
            let watch = try Binary.start(["--data", folder] + example.split(separator: " ").map(String.init))
            XCTAssertTrue(watch.stdout.waitFor("\"event\":"), "\(example): \(watch.stderr.text())")
            watch.interrupt()
        }
    }
}
