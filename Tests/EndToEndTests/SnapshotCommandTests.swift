import Foundation
import XCTest

/// `snapshot save|restore|list|rm` as a user runs them: on an embedded database (in this
/// process, and through the owner's socket), on a server's namespace (the owner's only),
/// with the exact events a watch sees, a test suite resetting between cases, and a server
/// killed while saving and after a restore.
final class SnapshotCommandTests: XCTestCase {
    /// The time `snapshot list` prints, made fixed.
    static func fixedTimes(_ text: String) -> String {
        text.replacingOccurrences(of: #"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"#, with: "YYYY-MM-DD hh:mm:ss", options: .regularExpression)
            .replacingOccurrences(of: #""saved":\d+"#, with: #""saved":0"#, options: .regularExpression)
    }

    func testEmbeddedSaveRestoreListRemove() throws {
        let folder = Binary.temporaryFolder()
        let script = """
            set /users {"ada": {"name": "Ada"}, "bob": {"name": "Bob"}}
            snapshot save seed
            snapshot list
            set /users/ada/name "Changed"
            set /users/cy {"name": "Cy"}
            get /users
            snapshot restore seed
            get /users
            snapshot save empty-one
            snapshot list --json
            snapshot rm empty-one
            snapshot list

            """
        let result = try Binary.run(["--data", folder], input: script)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(Self.fixedTimes(result.stdout), """
            seed  YYYY-MM-DD hh:mm:ss  395 B
            {"ada":{"name":"Changed"},"bob":{"name":"Bob"},"cy":{"name":"Cy"}}
            {"ada":{"name":"Ada"},"bob":{"name":"Bob"}}
            {"empty-one":{"saved":SAVED,"bytes":395},"seed":{"saved":SAVED,"bytes":395}}
            seed  YYYY-MM-DD hh:mm:ss  395 B

            """.replacingOccurrences(of: "SAVED", with: "0"), result.stdout)
        XCTAssertEqual(result.stderr, """
            saved snapshot seed (395 B)
            restored snapshot seed
            saved snapshot empty-one (395 B)
            removed snapshot empty-one

            """)
    }

    func testMistakesAreSaidWithTheirColumn() throws {
        let folder = Binary.temporaryFolder()
        let cases: [(String, String)] = [
            ("snapshot save ../x", """
                error: -c 1, column 15: invalid snapshot name "../x": use 1 to 64 letters, digits, "-" and "_"
                  snapshot save ../x
                                ^

                """),
            ("snapshot keep x", """
                error: -c 1, column 10: snapshot save NAME, snapshot restore NAME, snapshot list, or snapshot rm NAME
                  snapshot keep x
                           ^

                """),
            ("snapshot restore nope", "error: -c 1: there is no snapshot named nope\n"),
            ("snapshot rm nope", "error: -c 1: there is no snapshot named nope\n"),
        ]
        for (command, expected) in cases {
            let result = try Binary.run(["--data", folder, "-c", command])
            XCTAssertEqual(result.status, 1, command)
            XCTAssertEqual(result.stderr, expected, command)
        }
    }

    /// A second process on the folder asks the owner, on its socket; what it saves, the
    /// owner restores, and the other way round.
    func testASecondProcessKeepsSnapshotsThroughTheOwner() throws {
        let folder = Binary.temporaryFolder()
        let owner = try Binary.start(["--data", folder])
        owner.input.write(Data("set /n 1\nget /n\n".utf8))
        XCTAssertTrue(owner.stdout.waitFor("1\n"))
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: folder + "/socket") && Date() < deadline { usleep(20_000) }
        let saved = try Binary.run(["--data", folder, "-c", "snapshot save one", "-c", "set /n 2", "-c", "snapshot list"])
        XCTAssertEqual(saved.status, 0, saved.stderr)
        XCTAssertEqual(Self.fixedTimes(saved.stdout), "one  YYYY-MM-DD hh:mm:ss  119 B\n")
        owner.input.write(Data("snapshot restore one\nget /n\n".utf8))
        XCTAssertTrue(owner.stdout.waitFor("1\n1\n"), owner.stdout.current() + owner.stderr.current())
        let removed = try Binary.run(["--data", folder, "-c", "snapshot rm one", "-c", "snapshot rm one"])
        XCTAssertEqual(removed.status, 1)
        XCTAssertEqual(removed.stderr, "removed snapshot one\nerror: -c 2: there is no snapshot named one\n")
        try owner.input.close()
        owner.process.waitUntilExit()
        XCTAssertEqual(owner.process.terminationStatus, 0, owner.stderr.text())
        XCTAssertEqual(owner.stderr.text(), "restored snapshot one\n")
    }

    /// On a server, snapshots are the owner's; a watch in another process sees a restore as
    /// the changes it makes, exactly.
    func testOnAServerAWatchSeesTheRestore() throws {
        let folder = Binary.temporaryFolder()
        let (server, port) = try Binary.startServer(folder: folder)
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"
        let owner = ["RTDB_AUTH_TOKEN": "owner"]
        let seeded = try Binary.run(["--url", url, "-c", #"set /users {"ada": {"n": 1}, "bob": {"n": 2}}"#, "-c", "snapshot save s"], environment: owner)
        XCTAssertEqual(seeded.status, 0, seeded.stderr)
        XCTAssertEqual(seeded.stderr, "saved snapshot s (391 B)\n")

        let refused = try Binary.run(["--url", url, "-c", "snapshot list"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "error: -c 1: 127.0.0.1 refused: Permission denied: only the owner may keep snapshots (auth with owner)\n")

        let watch = try Binary.start(["--url", url, "watch", "/users"])
        defer { watch.interrupt() }
        XCTAssertTrue(watch.stdout.waitFor(#""event":"value""#), watch.stderr.current())
        let changed = try Binary.run(["--url", url, "-c", #"set /users/cy {"n": 3}"#, "-c", "set /users/ada/n 5", "-c", "snapshot restore s",
                                      "-c", "get /users"], environment: owner)
        XCTAssertEqual(changed.status, 0, changed.stderr)
        XCTAssertEqual(changed.stdout, #"{"ada":{"n":1},"bob":{"n":2}}"# + "\n")
        // Three events for the first value, seven since.
        let deadline = Date().addingTimeInterval(15)
        while watch.stdout.current().split(separator: "\n").count < 10 && Date() < deadline { usleep(20_000) }
        let events = watch.stdout.current().split(separator: "\n").map { line in
            line.replacingOccurrences(of: #"\{"time":"[^"]*","#, with: "{", options: .regularExpression)
        }
        XCTAssertEqual(Array(events.suffix(7)), [
            #"{"event":"child_added","path":"/users","key":"cy","prev":"bob","data":{"n":3}}"#,
            #"{"event":"value","path":"/users","key":null,"prev":null,"data":{"ada":{"n":1},"bob":{"n":2},"cy":{"n":3}}}"#,
            #"{"event":"child_changed","path":"/users","key":"ada","prev":null,"data":{"n":5}}"#,
            #"{"event":"value","path":"/users","key":null,"prev":null,"data":{"ada":{"n":5},"bob":{"n":2},"cy":{"n":3}}}"#,
            // The restore: one write, so one value event after its child events.
            #"{"event":"child_removed","path":"/users","key":"cy","prev":null,"data":{"n":3}}"#,
            #"{"event":"child_changed","path":"/users","key":"ada","prev":null,"data":{"n":1}}"#,
            #"{"event":"value","path":"/users","key":null,"prev":null,"data":{"ada":{"n":1},"bob":{"n":2}}}"#,
        ], watch.stdout.current())
    }

    /// A test suite's pattern: fixtures saved once, restored before each case; each case
    /// sees the fixtures alone, whatever the one before it wrote.
    func testASuiteResetsBetweenCases() throws {
        let folder = Binary.temporaryFolder()
        var script = """
            set /fixtures {"count": 0, "items": {"a": true}}
            snapshot save fixtures

            """
        for n in 1...5 {
            script += """
                snapshot restore fixtures
                set /fixtures/count \(n)
                set /fixtures/items/case\(n) true
                get /fixtures

                """
        }
        let result = try Binary.run(["--data", folder], input: script)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, (1...5).map { #"{"count":\#($0),"items":{"a":true,"case\#($0)":true}}"# + "\n" }.joined())
    }

    /// Killed while saving a large namespace, the server loses nothing: the data is whole,
    /// the snapshot is not there and its unfinished file is gone (or, when the save ended in
    /// the moment between the file being seen and the kill, it is there whole). Killed
    /// right after a restore was answered, it comes back as restored, and stays so through
    /// --recover and a checkpoint at the next stop.
    func testKillNineDuringASaveAndAfterARestore() throws {
        let folder = Binary.temporaryFolder()
        var (server, port) = try Binary.startServer(folder: folder)
        var url = "ws://127.0.0.1:\(port)?ns=big"
        let owner = ["RTDB_AUTH_TOKEN": "owner"]
        let children = (0..<20_000).map { #""k\#($0)": {"v": \#($0), "text": "item number \#($0)"}"# }.joined(separator: ", ")
        let seedFile = folder + "-seed.json"
        try Data(("{" + children + "}").utf8).write(to: URL(fileURLWithPath: seedFile))
        let seeded = try Binary.run(["--url", url, "-c", "import /list \(seedFile)", "-c", "snapshot save small"], environment: owner)
        XCTAssertEqual(seeded.status, 0, seeded.stderr)
        let before = try Binary.run(["--url", url, "get", "/list", "--shallow"]).stdout

        // Killed while the snapshot's file is being written.
        let saving = try Binary.start(["--url", url, "-c", "snapshot save big"], environment: owner)
        let snapshots = folder + "/big/snapshots"
        let deadline = Date().addingTimeInterval(30)
        var writing = false
        while !writing && Date() < deadline {
            writing = ((try? FileManager.default.contentsOfDirectory(atPath: snapshots)) ?? []).contains { $0.hasSuffix(".tmp") }
            if !writing { usleep(500) }
        }
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        saving.process.waitUntilExit()
        XCTAssertTrue(writing, "the save was never seen writing its file")
        XCTAssertEqual(saving.process.terminationStatus, 1)

        (server, port) = try Binary.startServer(folder: folder)
        url = "ws://127.0.0.1:\(port)?ns=big"
        XCTAssertEqual(try Binary.run(["--url", url, "get", "/list", "--shallow"]).stdout, before)
        let listed = try Binary.run(["--url", url, "-c", "snapshot list --json"], environment: owner)
        let small = #""small":{"saved":0,"bytes":3957918}"#
        if Self.fixedTimes(listed.stdout).hasPrefix(#"{"big""#) {
            // The save ended between the file being seen and the kill: then it is whole.
            XCTAssertEqual(Self.fixedTimes(listed.stdout), #"{"big":{"saved":0,"bytes":3957918},"# + small + "}\n")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: snapshots).sorted(), ["0000000001.rtdb", "0000000002.rtdb", "NAMES"])
        } else {
            XCTAssertEqual(Self.fixedTimes(listed.stdout), "{" + small + "}\n", listed.stderr)
            // What the killed save left is gone.
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: snapshots).sorted(), ["0000000001.rtdb", "NAMES"])
        }

        let restored = try Binary.run(["--url", url, "-c", "set /extra 1", "-c", "snapshot restore small"], environment: owner)
        XCTAssertEqual(restored.stderr, "restored snapshot small\n")
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        let recovered = try Binary.run(["serve", "--data", folder, "--recover"])
        XCTAssertEqual(recovered.status, 0, recovered.stderr + recovered.stdout)
        (server, port) = try Binary.startServer(folder: folder)
        url = "ws://127.0.0.1:\(port)?ns=big"
        XCTAssertEqual(try Binary.run(["--url", url, "get", "/list", "--shallow"]).stdout, before)
        XCTAssertEqual(try Binary.run(["--url", url, "get", "/extra"]).stdout, "null\n")
        kill(server.processIdentifier, SIGTERM)  // a stop checkpoints: the tree moves into the node file
        server.waitUntilExit()
        (server, port) = try Binary.startServer(folder: folder)
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        url = "ws://127.0.0.1:\(port)?ns=big"
        XCTAssertEqual(try Binary.run(["--url", url, "get", "/list", "--shallow"]).stdout, before)
    }
    /// The README's example, run as printed: its script, and the two values it says it prints.
    func testTheReadmeExample() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = text[try XCTUnwrap(text.range(of: "**Snapshots for tests.**")).upperBound...]
        let open = try XCTUnwrap(section.range(of: "```text\n"))
        let close = try XCTUnwrap(section.range(of: "```\n", range: open.upperBound..<section.endIndex))
        let script = String(section[open.upperBound..<close.lowerBound])
        let run = try XCTUnwrap(section.range(of: "run with `rtdb --data /tmp/reset-demo < reset.rtdb` prints `"))
        let first = section[run.upperBound...].prefix { $0 != "`" }
        let then = try XCTUnwrap(section.range(of: "then `", range: run.upperBound..<section.endIndex))
        let second = section[then.upperBound...].prefix { $0 != "`" }
        let result = try Binary.run(["--data", Binary.temporaryFolder()], input: script)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, first + "\n" + second + "\n")
        XCTAssertEqual(result.stderr, "saved snapshot fixtures (267 B)\nrestored snapshot fixtures\n")
    }
}
