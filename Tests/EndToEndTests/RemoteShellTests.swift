import Foundation
import XCTest

/// The shell over the network: two processes on one `rtdb serve`.
final class RemoteShellTests: XCTestCase {
    func testTwoShellsShareOneServer() throws {
        let folder = Binary.temporaryFolder()
        let (server, port) = try Binary.startServer(folder: folder)
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"

        // A watcher streams NDJSON while a second process writes, once its listen is up (its
        // first value event says so).
        let watcher = try Binary.start(["--url", url, "watch", "/notes", "--events", "value,child_added,child_removed", "--json"])
        XCTAssertTrue(watcher.stdout.waitFor(#""event":"value""#))
        let writer = try Binary.run(["--url", url], input: "set /notes/a 1\nset /notes/b 2\nrm /notes/a\nget /notes\n")
        XCTAssertEqual(writer.status, 0, writer.stderr)
        XCTAssertEqual(writer.stdout, #"{"b":2}"# + "\n")
        XCTAssertTrue(watcher.stdout.waitFor(#""event":"child_removed""#))
        watcher.interrupt()
        let events = watcher.stdout.text().split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String != "value" else { return nil }
            return "\(object["event"]!) \(object["key"]!)"
        }
        XCTAssertEqual(events, ["child_added a", "child_added b", "child_removed a"])

        let refused = try Binary.run(["--url", "ws://127.0.0.1:1?ns=demo", "get", "/"])
        XCTAssertEqual(refused.status, 3)
        XCTAssertEqual(refused.stderr, "rtdb: cannot connect to ws://127.0.0.1:1/.ws?ns=demo: connection refused: is a server listening there?\n")
    }

    /// A piped shell connected to `rtdb serve`, which is then stopped (SIGSTOP): the connection
    /// stays up and nothing answers. The server is continued and ended after the test.
    func shellOnAStoppedServer() throws -> Binary.Running {
        let (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
        addTeardownBlock { kill(server.processIdentifier, SIGCONT); kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let shell = try Binary.start(["--url", "ws://127.0.0.1:\(port)?ns=demo"])
        shell.input.write(Data("get /.info/connected\n".utf8))
        XCTAssertTrue(shell.stdout.waitFor("true\n"))
        kill(server.processIdentifier, SIGSTOP)
        return shell
    }

    /// Ctrl-C ends a command that waits for a server that no longer answers (stopped, not
    /// gone: the connection stays up): the shell says so and exits at once.
    func testCtrlCStopsAReadTheServerNeverAnswers() throws {
        let shell = try shellOnAStoppedServer()
        shell.input.write(Data("get /a\n".utf8))
        usleep(500_000)
        shell.interrupt()  // without it the read would wait for its 60-second limit and say so
        XCTAssertEqual(shell.process.terminationStatus, 1)
        XCTAssertEqual(shell.stderr.text(), "error: line 2: interrupted\n")
    }

    /// Ctrl-C during a script's end wait for its writes stops the wait and says what may be lost.
    func testCtrlCStopsTheWaitForAScriptsWrites() throws {
        let shell = try shellOnAStoppedServer()
        shell.input.write(Data("set /a 1\n".utf8))
        try shell.input.close()
        usleep(500_000)
        shell.interrupt()  // without it the wait would last its 30 seconds and say so
        XCTAssertEqual(shell.process.terminationStatus, 4)
        XCTAssertEqual(shell.stderr.text(), "error: 1 write was not acknowledged by the server before the wait was interrupted; it stays queued in the cache and will be sent the next time rtdb connects to this database\n")
    }

    /// --timeout bounds every wait for the server: a read on a stopped server fails after it.
    func testTimeoutBoundsAReadTheServerNeverAnswers() throws {
        let (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
        defer { kill(server.processIdentifier, SIGCONT); kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let shell = try Binary.start(["--url", "ws://127.0.0.1:\(port)?ns=demo", "--timeout", "1s"])
        shell.input.write(Data("get /.info/connected\n".utf8))
        XCTAssertTrue(shell.stdout.waitFor("true\n"))
        kill(server.processIdentifier, SIGSTOP)
        shell.input.write(Data("get /a\nget /b\n".utf8))
        try shell.input.close()
        shell.process.waitUntilExit()
        XCTAssertEqual(shell.process.terminationStatus, 1)
        XCTAssertEqual(shell.stderr.text(), "error: line 2: the server did not answer within 1 second\n")

        let bad = try Binary.run(["--timeout", "soon", "get", "/"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.hasPrefix("Error: --timeout 'soon' is not a duration: use 500ms, 10s, 2m (at most a day)\n"), bad.stderr)
    }

    func testAShellRidesOutAServerRestart() throws {
        let folder = Binary.temporaryFolder()
        var (server, port) = try Binary.startServer(folder: folder)
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"

        let watcher = try Binary.start(["--url", url, "watch", "/notes", "--events", "child_added", "--json"])

        // A script whose server goes away between its lines; without a disk cache, its end
        // waits for the server to come back.
        let script = try Binary.start(["--no-persistence", "--url", url])
        script.input.write(Data("set /notes/a 1\n".utf8))
        XCTAssertTrue(watcher.stdout.waitFor(#""key":"a""#))

        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        script.input.write(Data("set /notes/b 2\n".utf8))
        usleep(300_000)
        (server, _) = try Binary.startServer(folder: folder, port: port)
        try script.input.close()
        script.process.waitUntilExit()
        XCTAssertEqual(script.process.terminationStatus, 0, script.stderr.text())
        XCTAssertEqual(script.stdout.text(), "")

        let read = try Binary.run(["--url", url, "get", "/notes"])
        XCTAssertEqual(read.stdout, #"{"a":1,"b":2}"# + "\n")
        // The watcher reconnects on its own schedule (backoff), then its listen is restored.
        XCTAssertTrue(watcher.stdout.waitFor(#""key":"b""#))
        watcher.interrupt()
        let keys = watcher.stdout.text().split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["key"] as? String
        }
        XCTAssertEqual(keys, ["a", "b"])
    }
}
