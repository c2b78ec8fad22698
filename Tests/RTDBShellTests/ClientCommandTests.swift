import XCTest
import RTDBClient
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBShell

/// `tx`, `ondisconnect`, `online`/`offline`, `keepsynced` and `status` against a real
/// embedded engine, output captured: the exact lines a script sees.
final class ClientCommandTests: XCTestCase {
    var database: Database!
    var shell: Shell!
    var output: BufferOutput!

    override func setUpWithError() throws {
        let database = try Database(folder: NSTemporaryDirectory() + "rtdb-client-commands-" + UUID().uuidString)
        self.database = database
        let repo = embeddedRepo(database)
        let output = BufferOutput()
        self.output = output
        shell = MainActor.assumeIsolated {
            var options = Shell.Options()
            options.waitForWrites = false  // as a script
            options.location = { "embedded database in /tmp/db" }
            options.credential = "none"
            return Shell(repo: repo, output: output, options: options)
        }
    }

    override func tearDown() async throws {
        await shell.repo.close()
        database.close()
    }

    /// A write by another client (REST, say), waited for.
    @MainActor
    func write(_ path: String, _ value: Node) async throws {
        let done = OneShot<Response>()
        database.submit(.put(path: Path(path), data: value, hash: nil)) { done.resolve(.success($0)) }
        let answer = try await done.value()
        XCTAssertEqual(answer, .ok)
    }

    @MainActor
    func run(_ lines: String) async -> [Shell.Outcome] {
        var outcomes: [Shell.Outcome] = []
        for (i, line) in lines.split(separator: "\n").enumerated() {
            outcomes.append(await shell.run(String(line), source: "line \(i + 1)", lineNumber: i + 1))
            _ = shell.reportRejectedWrites()
        }
        return outcomes
    }

    @MainActor
    func testTransactionsPrintTheCommittedValue() async {
        let outcomes = await run("""
        tx /counter '$ + 1'
        tx /counter $ + 1
        tx /counter --increment 2.5
        tx /counter ($ ?? 0) * 2 --json
        tx /users/ada '$ + {"name": "Ada"}'
        tx /list --append a
        tx /list --append b
        tx /owner --set-if-absent ada
        tx /owner --set-if-absent bob
        tx /stock 'if ($ ?? 0) < 1 then abort("sold out") else $ - 1'
        tx /stock '$ + 1' --json
        """)
        XCTAssertEqual(outcomes, [.ok, .ok, .ok, .ok, .ok, .ok, .ok, .ok, .failed, .failed, .ok])
        XCTAssertEqual(output.stdout, """
        1
        2
        4.5
        {"committed":true,"attempts":1,"value":9}
        {"name":"Ada"}
        ["a"]
        ["a","b"]
        "ada"
        "ada"
        null
        {"committed":true,"attempts":1,"value":1}

        """)
        XCTAssertEqual(output.stderr, """
        error: aborted: /owner already has a value; the value stays
        error: aborted: sold out; the value stays

        """)
    }

    @MainActor
    func testVerbosePrintsEachAttempt() async throws {
        // The value kept synced first: a transaction starts on what the client holds, and
        // once the set is acknowledged, without a listen, it holds nothing at /n (a first
        // attempt on null, as the official clients make it, then one on the server's 41).
        let outcomes = await run("set /n 41\nkeepsynced /n on\nget /n\ntx /n '$ + 1' --verbose")
        XCTAssertEqual(outcomes, [.ok, .ok, .ok, .ok])
        XCTAssertEqual(output.stdout, "41\n42\n")
        XCTAssertEqual(output.stderr, "attempt 1: 41 -> 42\n")
    }

    @MainActor
    func testATransactionMadeOfflineCommitsOnTheFreshValueAfterOnline() async throws {
        // Another client changes the value while this one is offline with the old one cached.
        var outcomes = await run("set /n 41")
        // Acknowledged first: a write still unanswered when the connection goes is sent
        // again on the next one (as the official clients do), after the other client's.
        let written = await shell.finishWrites(timeout: 10)
        XCTAssertTrue(written)
        outcomes += await run("keepsynced /n on\nget /n\noffline")
        try await write("n", Node(100))
        outcomes += await run("tx /n $ + 1 --verbose\ntx /missing 'abort(\"no\")'\nget /n\nonline\nget /n")
        XCTAssertEqual(outcomes, [.ok, .ok, .ok, .ok, .ok, .failed, .ok, .ok, .ok])
        // Shown at once on the cached 41; committed on the server's 100, reported by 'online'.
        // The abort needs no server: reported at once.
        XCTAssertEqual(output.stdout, "41\nnull\n42\n101\n101\n")
        XCTAssertEqual(output.stderr, """
        offline: writes queue until 'online'
        offline: the transaction is queued; 'online' sends it and prints its outcome
        error: aborted: no; the value stays
        attempt 1: 41 -> 42
        attempt 2: 100 -> 101

        """)
        XCTAssertEqual(database.value(at: Path("n")), Node(101))
    }

    /// A list key past the 32-bit index range makes the value no list to append to.
    @MainActor
    func testAppendRefusesAKeyBeyondTheIndexRange() async throws {
        try await write("list", Node(json: .object([("0", .string("a")), ("9223372036854775807", .string("b"))])))
        let outcomes = await run("tx /list --append c")
        XCTAssertEqual(outcomes, [.failed])
        XCTAssertEqual(output.stderr, "error: line 1: cannot append to /list: it holds {\"0\":\"a\",\"9223372036854775807\":\"b\"}, not a list\n")
    }

    /// After 'offline' a read answers from the cache, or fails at once: no connection is coming.
    @MainActor
    func testOfflineReadsAnswerFromTheCacheOrFailAtOnce() async throws {
        try await write("config", Node(json: .object([("mode", .string("dark"))])))
        let outcomes = await run("keepsynced /config on\nget /config\noffline\nget /config/mode\nget /other\nonline\nget /other")
        XCTAssertEqual(outcomes, [.ok, .ok, .ok, .ok, .failed, .ok, .ok])
        XCTAssertEqual(output.stdout, "{\"mode\":\"dark\"}\n\"dark\"\nnull\n")
        XCTAssertEqual(output.stderr, "offline: writes queue until 'online'\nerror: line 5: DISCONNECTED: Client is offline.\n")
    }

    /// A script that ends offline says at once that its queued writes were never sent.
    @MainActor
    func testAScriptEndingOfflineSaysItsWritesWereNeverSent() async {
        let outcomes = await run("offline\nset /a 1\nset /b 2")
        XCTAssertEqual(outcomes, [.ok, .ok, .ok])
        let acknowledged = await shell.finishWrites(timeout: 30)
        XCTAssertFalse(acknowledged)
        XCTAssertEqual(output.stderr, "offline: writes queue until 'online'\nerror: 2 writes were never sent: the connection is offline by 'offline' ('online' sends what is queued); they are lost\n")
    }

    @MainActor
    func testExpressionErrorsPointAtTheirColumn() async {
        let outcomes = await run("""
        set /name "Ada"
        tx /name '$ + 1'
        tx /x '1 +'
        tx /x --increment 1 --append 2
        tx /x --increment one
        tx /.info/x '$'
        tx /name --append 1
        """)
        XCTAssertEqual(outcomes, [.ok, .failed, .failed, .failed, .failed, .failed, .failed])
        XCTAssertEqual(output.stderr, """
        error: line 2, column 13: cannot add a string and a number
          tx /name '$ + 1'
                      ^
        error: line 3, column 11: expected a value, found end of expression
          tx /x '1 +'
                    ^
        error: line 4, column 21: --increment and --append do not go together: choose one
          tx /x --increment 1 --append 2
                              ^
        error: line 5, column 19: --increment needs a number, as in --increment 1
          tx /x --increment one
                            ^
        error: line 6, column 4: "/.info/x" is read-only: /.info is maintained by the client
          tx /.info/x '$'
             ^
        error: line 7: cannot append to /name: it holds "Ada", not a list

        """)
    }

    @MainActor
    func testOnDisconnectRegistersListsAndCancels() async throws {
        let outcomes = await run("""
        ondisconnect
        ondisconnect /presence/ada remove
        ondisconnect /status/ada update {"state": "away", "mood": null}
        ondisconnect /status/ada/at set now()
        ondisconnect /rooms/a/ada set "left"
        ondisconnect /rooms cancel
        ondisconnect
        ondisconnect --json
        ondisconnect /x explode
        ondisconnect /x set
        """)
        XCTAssertEqual(outcomes, [.ok, .ok, .ok, .ok, .ok, .ok, .ok, .ok, .failed, .failed])
        XCTAssertEqual(output.stdout, """
        no onDisconnect writes on this connection
        /presence/ada  remove
        /status/ada  update {"mood":null,"state":"away"}
        /status/ada/at  set {".sv":"timestamp"}
        [{"path":"/presence/ada","remove":true},{"path":"/status/ada","update":{"mood":null,"state":"away"}},{"path":"/status/ada/at","set":{".sv":"timestamp"}}]

        """)
        XCTAssertTrue(output.stderr.contains("'explode' is not an onDisconnect action: use set, update, remove or cancel"), output.stderr)
        XCTAssertTrue(output.stderr.contains("ondisconnect set needs a value"), output.stderr)
        // Going offline ends the connection: the server runs them, the list is empty again.
        _ = await run("set /presence/ada true")
        _ = await shell.repo.waitForPendingWrites(idle: 10)
        XCTAssertEqual(database.value(at: Path("presence/ada")), Node(true))
        _ = await run("offline")
        // The server runs them when it sees the connection end, on its own queue.
        for _ in 0..<200 where database.value(at: Path("status/ada/state")) != Node("away") {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTAssertEqual(database.value(at: Path("presence")), .empty)
        XCTAssertEqual(database.value(at: Path("status/ada/state")), Node("away"))
        guard case .leaf(.number) = database.value(at: Path("status/ada/at")).content else { return XCTFail("no timestamp") }
        _ = await run("ondisconnect")
        XCTAssertTrue(output.stdout.hasSuffix("no onDisconnect writes on this connection\n"), output.stdout)
    }

    /// The examples `help` prints for these commands run as printed (on a stock of pens).
    @MainActor
    func testTheHelpExamplesRun() async throws {
        try await write("stock/pens", Node(3))
        let names: Set = ["tx", "ondisconnect", "online", "offline", "keepsynced", "status"]
        let examples = CommandSpec.all.filter { names.contains($0.name) }.flatMap(\.examples)
        XCTAssertGreaterThanOrEqual(examples.count, 12)
        for example in examples {
            let outcome = await shell.run(example, source: "example")
            XCTAssertEqual(outcome, .ok, "\(example): \(output.stderr)")
        }
        XCTAssertEqual(output.stderr, "")
        XCTAssertEqual(database.value(at: Path("stock/pens")), Node(2))
    }

    @MainActor
    func testKeepSyncedAndStatus() async {
        let outcomes = await run("""
        keepsynced
        keepsynced /config on
        keepsynced /a/b on
        keepsynced
        keepsynced --json
        keepsynced /a/b off
        keepsynced /x maybe
        status
        offline
        status --json
        online
        """)
        XCTAssertEqual(outcomes, [.ok, .ok, .ok, .ok, .ok, .ok, .failed, .ok, .ok, .ok, .ok])
        XCTAssertEqual(output.stdout, """
        no kept-synced paths
        /a/b
        /config
        ["/a/b","/config"]
        database      embedded database in /tmp/db
        state         online
        server clock  0 ms from this one
        credential    none
        pending       0 writes, 0 transactions
        cache         none (an embedded database is on disk already)
        watches       none in the background
        keepsynced    /config
        ondisconnect  0 writes
        {"location":"embedded database in /tmp/db","online":false,"offlineByChoice":true,"serverTimeOffset":0,"credential":"none","pendingWrites":0,"pendingTransactions":0,"backgroundWatches":[],"keptSynced":["/config"],"onDisconnectWrites":0,"cache":null}

        """)
        XCTAssertTrue(output.stderr.contains("expected on or off, found 'maybe'"), output.stderr)
    }
}
