import Foundation
import XCTest

/// The shell over the network: two processes on one `rtdb serve`.
final class RemoteShellTests: XCTestCase {
    func testTwoShellsShareOneServer() throws {
        let folder = Binary.temporaryFolder()
        let (server, port) = try Binary.startServer(folder: folder)
        defer { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"

        // A watcher streams NDJSON while a second process writes.
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Binary.path)
        watcher.arguments = ["--url", url, "watch", "/notes", "--events", "child_added,child_removed", "--json"]
        let watched = Pipe()
        watcher.standardOutput = watched
        try watcher.run()
        let drained = Drain(watched.fileHandleForReading)
        usleep(800_000)
        let writer = try Binary.run(["--url", url], input: "set /notes/a 1\nset /notes/b 2\nrm /notes/a\nget /notes\n")
        XCTAssertEqual(writer.status, 0, writer.stderr)
        XCTAssertEqual(writer.stdout, #"{"b":2}"# + "\n")
        usleep(800_000)
        kill(watcher.processIdentifier, SIGINT)
        watcher.waitUntilExit()
        let events = drained.text().split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(object["event"]!) \(object["key"]!)"
        }
        XCTAssertEqual(events, ["child_added a", "child_added b", "child_removed a"])

        let refused = try Binary.run(["--url", "ws://127.0.0.1:1?ns=demo", "get", "/"])
        XCTAssertEqual(refused.status, 3)
        XCTAssertEqual(refused.stderr, "rtdb: cannot connect to ws://127.0.0.1:1/.ws?ns=demo: connection refused: is a server listening there?\n")
    }

    func testAShellRidesOutAServerRestart() throws {
        let folder = Binary.temporaryFolder()
        var (server, port) = try Binary.startServer(folder: folder)
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        let url = "ws://127.0.0.1:\(port)?ns=demo"

        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: Binary.path)
        watcher.arguments = ["--url", url, "watch", "/notes", "--events", "child_added", "--json"]
        let watched = Pipe()
        watcher.standardOutput = watched
        try watcher.run()
        let drained = Drain(watched.fileHandleForReading)

        // A script whose server goes away between its lines.
        let script = Process()
        script.executableURL = URL(fileURLWithPath: Binary.path)
        script.arguments = ["--url", url]
        let input = Pipe(), scriptOut = Pipe(), scriptErr = Pipe()
        script.standardInput = input
        script.standardOutput = scriptOut
        script.standardError = scriptErr
        try script.run()
        let out = Drain(scriptOut.fileHandleForReading), err = Drain(scriptErr.fileHandleForReading)
        input.fileHandleForWriting.write(Data("set /notes/a 1\n".utf8))
        usleep(800_000)

        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        input.fileHandleForWriting.write(Data("set /notes/b 2\n".utf8))
        usleep(300_000)
        (server, _) = try Binary.startServer(folder: folder, port: port)
        try input.fileHandleForWriting.close()
        script.waitUntilExit()
        XCTAssertEqual(script.terminationStatus, 0, err.text())
        XCTAssertEqual(out.text(), "")

        let read = try Binary.run(["--url", url, "get", "/notes"])
        XCTAssertEqual(read.stdout, #"{"a":1,"b":2}"# + "\n")
        // The watcher reconnects on its own schedule (backoff), then its listen is restored.
        XCTAssertTrue(drained.waitFor(#""key":"b""#))
        kill(watcher.processIdentifier, SIGINT)
        watcher.waitUntilExit()
        let keys = drained.text().split(separator: "\n").compactMap { line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return object["key"] as? String
        }
        XCTAssertEqual(keys, ["a", "b"])
    }
}
