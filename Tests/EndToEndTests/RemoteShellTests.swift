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
        XCTAssertEqual(refused.stderr, "rtdb: cannot connect to ws://127.0.0.1:1/.ws?ns=demo: is a server listening there?\n")
    }
}
