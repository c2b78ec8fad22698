import XCTest
import RTDBClient
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBShell

/// The shell against a real embedded engine, output captured.
final class ShellTests: XCTestCase {
    var database: Database!
    var shell: Shell!
    var output: BufferOutput!

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-shell-" + UUID().uuidString)
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        output = BufferOutput()
        shell = Shell(repo: Repo(transport: client), output: output)
    }

    override func tearDown() {
        shell.repo.close()
        database.close()
    }

    func testWritesAndReads() {
        XCTAssertEqual(shell.run(#"set /users/ada {"name": "Ada", "born": 1815}"#), .ok)
        XCTAssertEqual(shell.run("cd /users"), .ok)
        XCTAssertEqual(shell.run(#"update ada {"born": 1816, "langs/0": "en"}"#), .ok)
        XCTAssertEqual(shell.run("get ada"), .ok)
        XCTAssertEqual(shell.run("ls"), .ok)
        XCTAssertEqual(shell.run("ls ada --long"), .ok)
        XCTAssertEqual(shell.run("pwd"), .ok)
        XCTAssertEqual(shell.run("priority ada 5"), .ok)
        XCTAssertEqual(shell.run("get / --export"), .ok)
        XCTAssertEqual(shell.run("get / --shallow"), .ok)
        XCTAssertEqual(output.stdout, """
        {"born":1816,"langs":["en"],"name":"Ada"}
        ["ada"]
        {"born":1816,"langs":1,"name":"Ada"}
        /users
        {"users":{"ada":{".priority":5,"born":1816,"langs":{"0":"en"},"name":"Ada"}}}
        {"users":true}

        """)
        XCTAssertEqual(output.stderr, "")
    }

    func testPushPrintsAChronologicalKey() {
        XCTAssertEqual(shell.run("push /log first"), .ok)
        XCTAssertEqual(shell.run("push /log second"), .ok)
        let keys = output.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(keys.count, 2)
        XCTAssertTrue(keys.allSatisfy { $0.count == 20 })
        XCTAssertLessThan(keys[0], keys[1])
        XCTAssertEqual(database.value(at: Path("log/\(keys[1])")), Node("second"))
    }

    func testServerValues() {
        XCTAssertEqual(shell.run("set /n 5"), .ok)
        XCTAssertEqual(shell.run("set /n increment(2)"), .ok)
        XCTAssertEqual(shell.run("set /t now()"), .ok)
        XCTAssertEqual(database.value(at: Path("n")), Node(7))
        guard case .leaf(.number(let t)) = database.value(at: Path("t")).content else { return XCTFail() }
        XCTAssertEqual(t, Date().timeIntervalSince1970 * 1000, accuracy: 60_000)
    }

    func testInfo() {
        XCTAssertEqual(shell.run("get /.info/connected"), .ok)
        XCTAssertEqual(output.stdout, "true\n")
    }

    func testRemoveRootNeedsForceInScripts() {
        shell.run("set /a 1")
        XCTAssertEqual(shell.run("rm /"), .failed)
        XCTAssertEqual(output.stderr, "error: removing / deletes the whole database: add --force to do it from a script\n")
        XCTAssertEqual(database.value(at: Path("a")), Node(1))
        XCTAssertEqual(shell.run("rm / --force"), .ok)
        XCTAssertTrue(database.value(at: .root).isEmpty)
    }

    func testRemoveAsksOnATerminal() {
        var asked: [String] = []
        var answer = false
        shell.options.confirm = { asked.append($0); return answer }
        shell.run(#"set /big {"a": 1}"#)
        for i in 0..<101 { shell.run("set /list/k\(i) \(i)") }
        XCTAssertEqual(shell.run("rm /big"), .ok)  // small: no question
        XCTAssertEqual(shell.run("rm /list"), .failed)
        XCTAssertEqual(asked, ["remove /list (101 values)? [y/N] "])
        XCTAssertEqual(database.value(at: Path("list")).childCount, 101)
        answer = true
        XCTAssertEqual(shell.run("rm /list"), .ok)
        XCTAssertTrue(database.value(at: .root).isEmpty)
    }

    func testErrorsNameTheSourceAndColumn() {
        XCTAssertEqual(shell.run(#"set /x {"a": }"#, source: "line 3"), .failed)
        XCTAssertEqual(output.stderr, """
        error: line 3, column 14: expected a value, found '}'
          set /x {"a": }
                       ^

        """)
        XCTAssertTrue(database.value(at: .root).isEmpty, "nothing written")
    }

    func testHelp() {
        shell.run("help set")
        XCTAssertTrue(output.stdout.hasPrefix("usage: set PATH VALUE [--priority P]\n"), output.stdout)
        XCTAssertTrue(output.stdout.contains("  --priority P          also set the priority (a number or a string)\n"), output.stdout)
        shell.run("help")
        XCTAssertTrue(output.stdout.contains("  remove PATH [--force] (rm)"), output.stdout)
    }

    func testOfflineReadsAnswerFromWatchedDataOrSaySo() {
        // A client whose server is reachable once: after the drop, every attempt is refused.
        let database = self.database!
        let attempts = Counter()
        let repo = Repo(connector: { _, _ in
            let (client, server) = InProcessTransport.pair()
            if attempts.next() == 0 { database.accept(server) } else { server.close() }
            return client
        }, reconnect: ReconnectPolicy(minDelay: 0.01, maxDelay: 0.05))
        defer { repo.close() }
        repo.offlineReadTimeout = 0.2
        let offline = Shell(repo: repo, output: output)
        offline.readTimeout = 0.3
        let watched = DispatchSemaphore(value: 0)
        offline.options.backgroundOutput = { _ in watched.signal() }
        XCTAssertEqual(offline.run(#"set /kept {"a": 1}"#), .ok)
        XCTAssertEqual(offline.run("watch /kept --bg"), .ok)
        XCTAssertEqual(watched.wait(timeout: .now() + 10), .success, "the watch has the data")
        repo.interruptConnection()
        while repo.isConnected { usleep(1_000) }
        let before = output.stdout.count
        XCTAssertEqual(offline.run("get /kept"), .ok)
        XCTAssertEqual(offline.run("query /kept --orderByKey"), .ok)
        XCTAssertEqual(String(output.stdout.dropFirst(before)), #"{"a":1}"# + "\n" + #"[{"key":"a","value":1}]"# + "\n")
        XCTAssertEqual(offline.run("get /other"), .failed)
        XCTAssertEqual(offline.run("query /other --orderByKey"), .failed)
        XCTAssertEqual(output.stderr, "error: DISCONNECTED: Client is offline.\nerror: DISCONNECTED: Client is offline.\n")
    }
}

/// Counts calls from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        defer { count += 1 }
        return count
    }

    /// A line that contains the credential in use never reaches the history, whatever the
    /// command; lines without it do.
    func testHistoryNeverKeepsTheCurrentCredential() {
        let saved = HistoryFilter.credentials
        defer { HistoryFilter.credentials = saved }
        HistoryFilter.credentials = ["ya29.a0AfH6SMBx-secret"]
        XCTAssertTrue(HistoryFilter.isSensitive("set /debug/token ya29.a0AfH6SMBx-secret"))
        XCTAssertTrue(HistoryFilter.isSensitive(#"push /log {"t": "ya29.a0AfH6SMBx-secret"}"#))
        XCTAssertTrue(HistoryFilter.isSensitive("auth something"))
        XCTAssertFalse(HistoryFilter.isSensitive("set /debug/token ya29"))
        XCTAssertFalse(HistoryFilter.isSensitive("get /users"))
    }
}
