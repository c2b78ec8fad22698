import Foundation
import XCTest

/// `import` and `export` with the real binary: a file several writes long into an embedded
/// database and into `rtdb serve`, exported back equal to the input; standard input; the
/// README's commands as printed.
final class ImportExportTests: XCTestCase {
    /// About 3 MB: 20,000 notes of six values, a list and some users.
    static func document() -> String {
        var notes: [String] = []
        for i in 0..<20_000 {
            notes.append(#""n\#(String(format: "%05d", i))": {"title": "note \#(i) \u00e9 \"q\"", "lastModified": \#(1_700_000_000_000 + i), "#
                         + #""done": \#(i % 3 == 0), "rank": \#(Double(i) / 7), "tags": {"x": \#(i), "y": -\#(i)}}"#)
        }
        let users = (0..<500).map { #""u\#($0)": {"name": "user \#($0)", "age": \#($0 % 90)}"# }
        return #"{"notes": {"# + notes.joined(separator: ", ") + #"}, "users": {"# + users.joined(separator: ",\n")
            + #"}, "meta": {"version": 3, "tags": ["a", "b", null, "d"]}}"# + "\n"
    }

    func json(_ file: String) throws -> NSObject? {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)), options: [.fragmentsAllowed]) as? NSObject
    }

    func roundTrip(_ database: [String], folder: String) throws {
        let input = folder + "/in.json", output = folder + "/out.json"
        let imported = try Binary.run(database + ["-c", "import /data in.json --chunk-size 256k", "-c", "export /data out.json"],
                                      in: folder)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let lines = imported.stderr.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("in.json is 3.1 MB: it is imported as 13 writes of about 262 kB, not one atomic write;") }, imported.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("imported in.json into /data: 3.1 MB in 13 writes, ") }, imported.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("exported /data to out.json: 2.7 MB, 3 keys, ") }, imported.stderr)
        XCTAssertEqual(try json(output), try json(input))

        // From standard input, merged: the children it names are replaced, the others stay.
        let merged = try Binary.run(database + ["-c", "import /data - --merge --quiet", "-c", "get /data --shallow"],
                                    input: #"{"meta": {"version": 4}, "extra": true}"#, in: folder)
        XCTAssertEqual(merged.status, 0, merged.stderr)
        XCTAssertEqual(merged.stderr, "")
        XCTAssertEqual(merged.stdout, #"{"extra":true,"meta":true,"notes":true,"users":true}"# + "\n")
    }

    func testAFileOfManyWritesRoundTripsThroughAnEmbeddedDatabaseAndAServer() throws {
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(Self.document().utf8).write(to: URL(fileURLWithPath: folder + "/in.json"))
        try roundTrip(["--data", folder + "/db"], folder: folder)
        let (server, port) = try Binary.startServer(folder: folder + "/served")
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        try roundTrip(["--url", "ws://127.0.0.1:\(port)?ns=imports"], folder: folder)
    }

    /// The commands of the README's "Moving data in and out", run as printed in a folder
    /// where ./live holds data: ./copy ends up equal to it.
    func testTheReadmeCommandsRunAsPrinted() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "### Moving data in and out\n\n```text\n"))
        let end = try XCTUnwrap(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        let commands = text[start.upperBound..<end.lowerBound].split(separator: "\n").map { String($0.dropFirst(2)) }
        XCTAssertGreaterThanOrEqual(commands.count, 3)
        let folder = Binary.temporaryFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let seed = try Binary.run(["--data", folder + "/live", "-c", #"set /users {"ada": {"name": "Ada"}}"#, "-c", #"set /notes/n1 {"text": "hi"}"#])
        XCTAssertEqual(seed.status, 0, seed.stderr)
        let bin = URL(fileURLWithPath: Binary.path).deletingLastPathComponent().path
        for command in commands {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/bash")
            shell.arguments = ["-c", command]
            shell.currentDirectoryURL = URL(fileURLWithPath: folder)
            shell.environment = ProcessInfo.processInfo.environment.merging(["PATH": bin + ":/usr/bin:/bin"]) { $1 }
            try shell.run()
            shell.waitUntilExit()
            XCTAssertEqual(shell.terminationStatus, 0, command)
        }
        let live = try Binary.run(["--data", folder + "/live", "get", "/", "--json"])
        let copy = try Binary.run(["--data", folder + "/copy", "get", "/", "--json"])
        XCTAssertEqual(copy.stdout, live.stdout)
        XCTAssertEqual(copy.stdout, #"{"notes":{"n1":{"text":"hi"}},"users":{"ada":{"name":"Ada"}}}"# + "\n")
    }
}
