import Foundation
import XCTest

/// `tx`, `ondisconnect` and `offline`/`online` as users run them: separate `rtdb` processes
/// on one `rtdb serve`.
final class TransactionAndPresenceTests: XCTestCase {
    var url = ""

    override func setUpWithError() throws {
        let (server, port) = try Binary.startServer(folder: Binary.temporaryFolder())
        addTeardownBlock { kill(server.processIdentifier, SIGTERM); server.waitUntilExit() }
        url = "ws://127.0.0.1:\(port)?ns=demo"
    }

    /// A running `rtdb`, killed at the end of the test if it is still running (a failed
    /// assertion must not leave a watcher behind).
    func start(_ arguments: [String]) throws -> Binary.Running {
        let running = try Binary.start(arguments)
        addTeardownBlock {
            if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL) }
            running.process.waitUntilExit()
        }
        return running
    }

    /// The keys a `watch --json` process reported, as "EVENT KEY", in order.
    func events(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let event = object["event"] as? String, let key = object["key"] as? String else { return nil }
            return "\(event) \(key)"
        }
    }

    /// Eight scripts of 250 transactions each on one counter, at the same time: every one
    /// commits, no increment is lost, and each value from 1 to 2000 is committed exactly once.
    func testEightProcessesOfTwoHundredFiftyTransactionsEndAtExactlyTwoThousand() throws {
        let script = (0..<250).map { $0 % 2 == 0 ? "tx /counter '$ + 1'\n" : "tx /counter --increment 1\n" }.joined()
        let processes = try (0..<8).map { _ in try start(["--url", url]) }
        for process in processes {
            process.input.write(Data(script.utf8))
            try process.input.close()
        }
        var committed: [Int] = []
        for process in processes {
            process.process.waitUntilExit()
            XCTAssertEqual(process.process.terminationStatus, 0, process.stderr.text())
            XCTAssertEqual(process.stderr.text(), "")
            committed += process.stdout.text().split(separator: "\n").compactMap { Int($0) }
        }
        XCTAssertEqual(committed.sorted(), Array(1...2000))
        let read = try Binary.run(["--url", url, "get", "/counter"])
        XCTAssertEqual(read.stdout, "2000\n")
    }

    /// The presence recipe: a shell marks itself present and registers its removal; killed
    /// with SIGKILL, the server runs the removal and another shell's watch sees it. A
    /// cancelled registration does not run.
    func testAKilledShellsOnDisconnectWritesReachAWatcher() throws {
        let watcher = try start(["--url", url, "watch", "/presence", "--events", "child_added,child_removed", "--json"])
        let shell = try start(["--url", url])
        shell.input.write(Data("""
        get /.info/connected
        ondisconnect /presence/ada remove
        ondisconnect /lastSeen/ada set now()
        set /presence/ada true
        set /presence/bob true
        ondisconnect /presence/bob remove
        ondisconnect /presence/bob cancel
        ondisconnect

        """.utf8))
        XCTAssertTrue(shell.stdout.waitFor("/lastSeen/ada  set"))
        XCTAssertTrue(watcher.stdout.waitFor(#""key":"bob""#))
        kill(shell.process.processIdentifier, SIGKILL)
        shell.process.waitUntilExit()
        XCTAssertEqual(shell.stdout.text(), """
        true
        /presence/ada  remove
        /lastSeen/ada  set {".sv":"timestamp"}

        """)
        XCTAssertTrue(watcher.stdout.waitFor(#""event":"child_removed""#))
        watcher.interrupt()
        XCTAssertEqual(events(watcher.stdout.text()), ["child_added ada", "child_added bob", "child_removed ada"])
        let after = try Binary.run(["--url", url], input: "get /presence\nget /lastSeen/ada --json\n")
        XCTAssertEqual(after.status, 0, after.stderr)
        let lines = after.stdout.split(separator: "\n")
        XCTAssertEqual(lines.first, #"{"bob":true}"#)
        XCTAssertNotNil(lines.last.flatMap { Double($0) }, "lastSeen is not a timestamp: \(after.stdout)")
    }

    /// Writes made after `offline` land in order after `online`; a transaction made offline
    /// commits on the value the server has by then, which another process changed meanwhile.
    func testOfflineWritesAndATransactionLandInOrderAfterOnline() throws {
        XCTAssertEqual(try Binary.run(["--url", url, "set", "/counter", "10"]).status, 0)
        let watcher = try start(["--url", url, "watch", "/log", "--events", "child_added", "--json"])
        let shell = try start(["--url", url])
        shell.input.write(Data("keepsynced /counter on\nget /counter\noffline\n".utf8))
        XCTAssertTrue(shell.stderr.waitFor("offline: writes queue until 'online'\n"))
        shell.input.write(Data("""
        set /log/a 1
        tx /counter '$ * 2'
        update /log {"b": 2, "c": 3}
        push /log 4

        """.utf8))
        XCTAssertTrue(shell.stderr.waitFor("'online' sends it"))
        XCTAssertEqual(try Binary.run(["--url", url, "set", "/counter", "50"]).status, 0)
        shell.input.write(Data("online\nget /counter\n".utf8))
        try shell.input.close()
        shell.process.waitUntilExit()
        XCTAssertEqual(shell.process.terminationStatus, 0, shell.stderr.text())
        XCTAssertEqual(shell.stderr.text(), """
        offline: writes queue until 'online'
        offline: the transaction is queued; 'online' sends it and prints its outcome

        """)
        let out = shell.stdout.text().split(separator: "\n")
        XCTAssertEqual(out.count, 4, shell.stdout.text())
        guard out.count == 4 else { return }
        XCTAssertEqual(out[0], "10")
        let pushed = String(out[1])  // the push key
        XCTAssertEqual(Array(out[2...]), ["100", "100"])
        XCTAssertTrue(watcher.stdout.waitFor(pushed))
        watcher.interrupt()
        XCTAssertEqual(events(watcher.stdout.text()), ["child_added a", "child_added b", "child_added c", "child_added \(pushed)"])
    }
}
