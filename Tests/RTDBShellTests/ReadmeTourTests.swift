import XCTest
import RTDBClient
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBShell

/// The README's tour, typed as printed into a shell that renders as on a terminal (pretty, no
/// colour): every command succeeds and prints what the README shows, push keys and clock
/// times aside.
final class ReadmeTourTests: XCTestCase {
    /// The tour's commands, each with the lines the README shows after it.
    static func tour() throws -> [(command: String, output: [String])] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let start = text.range(of: "## A tour\n\n```text\n"),
              let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            // Failed, not skipped: a heading that moved would otherwise leave the tour untested.
            throw TourMissing()
        }
        var steps: [(command: String, output: [String])] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if let prompt = line.range(of: #"^rtdb[^ ]*> "#, options: .regularExpression) {
                steps.append((String(line[prompt.upperBound...]), []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].output.append(String(line))
            }
        }
        return steps
    }

    /// Push keys and clock times differ from run to run.
    static func normalized(_ line: String) -> String {
        line.replacingOccurrences(of: #"-[0-9A-Za-z_-]{19}"#, with: "<push id>", options: .regularExpression)
            .replacingOccurrences(of: #"\d\d:\d\d:\d\d\.\d{3}"#, with: "<time>", options: .regularExpression)
    }

    @MainActor
    func testTheTourRunsAsPrinted() async throws {
        let steps = try Self.tour()
        XCTAssertGreaterThan(steps.count, 10)
        let database = try Database(folder: NSTemporaryDirectory() + "rtdb-tour-" + UUID().uuidString)
        defer { database.close() }
        let repo = embeddedRepo(database)
        let output = BufferOutput()
        var options = Shell.Options()
        options.renderer = Renderer(pretty: true, color: false)
        options.backgroundOutput = { output.write($0 + "\n") }
        let shell = Shell(repo: repo, output: output, options: options)
        for step in steps {
            let before = output.stdout.count
            let outcome = await shell.run(step.command, source: "tour")
            XCTAssertEqual(outcome, step.command == "exit" ? .exit : .ok, "\(step.command): \(output.stderr)")
            let printed = String(output.stdout.dropFirst(before)).split(separator: "\n").map { Self.normalized(String($0)) }
            XCTAssertEqual(printed, step.output.map(Self.normalized), step.command)
        }
        XCTAssertEqual(output.stderr, "")
        await repo.close()
    }
}

/// The README's tour (its heading "## A tour" and a text block) was not found.
struct TourMissing: Error, CustomStringConvertible {
    var description: String { "README.md has no \"## A tour\" section with a text block: the tour's commands cannot be checked" }
}
