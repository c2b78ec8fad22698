import XCTest
import RTDBClient
import RTDBData
import RTDBProtocol
import RTDBEngine
import RTDBTestSupport
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
        let output = BufferOutput()
        self.output = output
        shell = MainActor.assumeIsolated { Shell(repo: Repo(transport: client), output: output) }
    }

    override func tearDown() async throws {
        await shell.repo.close()
        database.close()
    }

    /// The outcome of a command (an async call cannot sit inside XCTAssertEqual).
    func assertOutcome(_ outcome: Shell.Outcome, _ expected: Shell.Outcome, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome, expected, file: file, line: line)
    }

    @MainActor
    func testWritesAndReads() async {
        assertOutcome(await shell.run(#"set /users/ada {"name": "Ada", "born": 1815}"#), .ok)
        assertOutcome(await shell.run("cd /users"), .ok)
        assertOutcome(await shell.run(#"update ada {"born": 1816, "langs/0": "en"}"#), .ok)
        assertOutcome(await shell.run("get ada"), .ok)
        assertOutcome(await shell.run("ls"), .ok)
        assertOutcome(await shell.run("ls ada --long"), .ok)
        assertOutcome(await shell.run("pwd"), .ok)
        assertOutcome(await shell.run("priority ada 5"), .ok)
        assertOutcome(await shell.run("get / --export"), .ok)
        assertOutcome(await shell.run("get / --shallow"), .ok)
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

    /// `repeat`: each run's output after the last in a script; at a terminal, the screen
    /// cleared under a header before each run. A failing run stops it.
    @MainActor
    func testRepeatAppendsOrRedraws() async throws {
        assertOutcome(await shell.run("set /n 1"), .ok)
        assertOutcome(await shell.run("repeat 2 --every 10ms get /n"), .ok)
        assertOutcome(await shell.run("repeat 3 --every 10ms update / {\"n\": increment(1)}"), .ok)
        assertOutcome(await shell.run("get /n"), .ok)
        XCTAssertEqual(output.stdout, "1\n1\n4\n")

        let screen = BufferOutput()
        var options = Shell.Options()
        options.redraws = true
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        let terminal = Shell(repo: Repo(transport: client), output: screen, options: options)
        assertOutcome(await terminal.run("repeat 2 --every 10ms get /n"), .ok)
        let header = "\u{1B}[H\u{1B}[2JEvery 10 ms: get /n  (run RUN of 2, TIME)\n\n"
        let fixed = screen.stdout.replacingOccurrences(of: #"\d\d:\d\d:\d\d\)"#, with: "TIME)", options: .regularExpression)
        XCTAssertEqual(fixed, header.replacingOccurrences(of: "RUN", with: "1") + "4\n" + header.replacingOccurrences(of: "RUN", with: "2") + "4\n")

        assertOutcome(await shell.run("repeat 5 --every 10ms get /n/.bad"), .failed)
        XCTAssertEqual(output.stdout, "1\n1\n4\n")
        await terminal.repo.close()
    }

    @MainActor
    func testPushPrintsAChronologicalKey() async {
        assertOutcome(await shell.run("push /log first"), .ok)
        assertOutcome(await shell.run("push /log second"), .ok)
        let keys = output.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(keys.count, 2)
        XCTAssertTrue(keys.allSatisfy { $0.count == 20 })
        XCTAssertLessThan(keys[0], keys[1])
        XCTAssertEqual(database.value(at: Path("log/\(keys[1])")), Node("second"))
    }

    @MainActor
    func testServerValues() async {
        assertOutcome(await shell.run("set /n 5"), .ok)
        assertOutcome(await shell.run("set /n increment(2)"), .ok)
        assertOutcome(await shell.run("set /t now()"), .ok)
        XCTAssertEqual(database.value(at: Path("n")), Node(7))
        guard case .leaf(.number(let t)) = database.value(at: Path("t")).content else { return XCTFail() }
        XCTAssertEqual(t, Date().timeIntervalSince1970 * 1000, accuracy: 60_000)
    }

    @MainActor
    func testInfo() async {
        assertOutcome(await shell.run("get /.info/connected"), .ok)
        XCTAssertEqual(output.stdout, "true\n")
    }

    @MainActor
    func testRemoveRootNeedsForceInScripts() async {
        await shell.run("set /a 1")
        assertOutcome(await shell.run("rm /"), .failed)
        XCTAssertEqual(output.stderr, "error: removing / deletes the whole database: add --force to do it from a script\n")
        XCTAssertEqual(database.value(at: Path("a")), Node(1))
        assertOutcome(await shell.run("rm / --force"), .ok)
        XCTAssertTrue(database.value(at: .root).isEmpty)
    }

    @MainActor
    func testRemoveAsksOnATerminal() async {
        var asked: [String] = []
        var answer = false
        shell.options.confirm = { asked.append($0); return answer }
        await shell.run(#"set /big {"a": 1}"#)
        for i in 0..<101 { await shell.run("set /list/k\(i) \(i)") }
        assertOutcome(await shell.run("rm /big"), .ok)  // small: no question
        assertOutcome(await shell.run("rm /list"), .failed)
        XCTAssertEqual(asked, ["remove /list (101 values)? [y/N] "])
        XCTAssertEqual(database.value(at: Path("list")).childCount, 101)
        answer = true
        assertOutcome(await shell.run("rm /list"), .ok)
        XCTAssertTrue(database.value(at: .root).isEmpty)
    }

    @MainActor
    func testErrorsNameTheSourceAndColumn() async {
        assertOutcome(await shell.run(#"set /x {"a": }"#, source: "line 3"), .failed)
        XCTAssertEqual(output.stderr, """
        error: line 3, column 14: expected a value, found '}'
          set /x {"a": }
                       ^

        """)
        XCTAssertTrue(database.value(at: .root).isEmpty, "nothing written")
    }

    /// A long line is quoted around the error, a line's worth, cut with … (a script line of a
    /// gigabyte once had all of it repeated on standard error).
    @MainActor
    func testAnErrorInALongLineQuotesOnlyAroundIt() async {
        let items = String(repeating: "1, ", count: 20_000)
        assertOutcome(await shell.run("set /x [\(items)tru, \(items)1]", source: "line 1"), .failed)
        // 50 characters either side of the error.
        let shown = ", " + String(repeating: "1, ", count: 16) + "tru, " + String(repeating: "1, ", count: 15)
        XCTAssertEqual(output.stderr, """
        error: line 1, column 60009: expected a value, found 't'
          …\(shown)…
           \(String(repeating: " ", count: 50))^

        """)
        func excerpt(_ line: String, _ column: Int) -> [String] {
            let (shown, caret) = Shell.excerpt(of: line, at: column, width: 10)
            return [shown, String(caret)]
        }
        XCTAssertEqual(excerpt("abc", 7), ["abc", "3"])
        XCTAssertEqual(excerpt(String(repeating: "é", count: 150), 0), [String(repeating: "é", count: 10) + "…", "0"])
        XCTAssertEqual(excerpt(String(repeating: "x", count: 150), 150), ["…" + String(repeating: "x", count: 10), "11"])
        XCTAssertTrue(database.value(at: .root).isEmpty, "nothing written")
    }

    @MainActor
    func testHelp() async {
        await shell.run("help set")
        XCTAssertTrue(output.stdout.hasPrefix("usage: set PATH VALUE [--priority P]\n"), output.stdout)
        XCTAssertTrue(output.stdout.contains("  --priority P          also set the priority (a number or a string)\n"), output.stdout)
        await shell.run("help")
        XCTAssertTrue(output.stdout.contains("  remove PATH [flags] (rm)        delete the value at a path\n"), output.stdout)
    }

    @MainActor
    func testOfflineReadsAnswerFromWatchedDataOrSaySo() async {
        // A client whose server is reachable once: after the drop, every attempt is refused.
        let database = self.database!
        let attempts = Counter()
        let repo = Repo(connector: { _, _ in
            let (client, server) = InProcessTransport.pair()
            if attempts.next() == 0 { database.accept(server) } else { server.close() }
            return client
        }, reconnect: ReconnectPolicy(minDelay: 0.01, maxDelay: 0.05))
        defer { Task { await repo.close() } }
        await repo.setOfflineReadTimeout(0.2)
        let offline = Shell(repo: repo, output: output)
        offline.options.readTimeout = 0.3
        let watched = DispatchSemaphore(value: 0)
        offline.options.backgroundOutput = { _ in watched.signal() }
        assertOutcome(await offline.run(#"set /kept {"a": 1}"#), .ok)
        assertOutcome(await offline.run("watch /kept --bg"), .ok)
        XCTAssertEqual(watched.wait(timeout: .now() + 10), .success, "the watch has the data")
        await repo.interruptConnection()
        while await repo.isConnected { try? await Task.sleep(nanoseconds: 1_000_000) }
        let before = output.stdout.count
        assertOutcome(await offline.run("get /kept"), .ok)
        assertOutcome(await offline.run("query /kept --orderByKey"), .ok)
        XCTAssertEqual(String(output.stdout.dropFirst(before)), #"{"a":1}"# + "\n" + #"[{"key":"a","value":1}]"# + "\n")
        assertOutcome(await offline.run("get /other"), .failed)
        assertOutcome(await offline.run("query /other --orderByKey"), .failed)
        XCTAssertEqual(output.stderr, "error: DISCONNECTED: Client is offline.\nerror: DISCONNECTED: Client is offline.\n")
    }
}

/// Ctrl-C: each kind of long command ends when its task is cancelled (as the signal does).
final class CancellationTests: XCTestCase {
    /// A server that says hello and then never answers anything.
    func silentRepo() -> Repo {
        let (client, server) = InProcessTransport.pair()
        server.start(onMessage: { _ in }, onClose: {})
        server.send(.handshake(Handshake(timestamp: Int64(Date().timeIntervalSince1970 * 1000), host: "", sessionID: "s")))
        return Repo(transport: client)
    }

    @MainActor
    func testCancellingTheTaskStopsEachLongCommand() async throws {
        let cases: [(command: String, outcome: Shell.Outcome, stderr: String)] = [
            ("get /a", .failed, "error: interrupted\n"),
            ("ls /a", .failed, "error: interrupted\n"),
            ("query /a --orderByKey --limitToFirst 2", .failed, "error: interrupted\n"),
            ("watch /a", .ok, ""),
            ("query /a --orderByKey --watch", .ok, ""),
            ("set /a 1", .failed, "error: not acknowledged yet: the write stays queued and is sent when the connection returns\n"),
            ("push /a 1", .failed, "error: not acknowledged yet: the write stays queued and is sent when the connection returns\n"),
        ]
        for (command, expected, stderr) in cases {
            let repo = silentRepo()
            let output = BufferOutput()
            let shell = Shell(repo: repo, output: output)
            let running = Task { await shell.run(command) }
            try await Task.sleep(nanoseconds: 200_000_000)
            running.cancel()
            let outcome = await running.value
            XCTAssertEqual(outcome, expected, command)
            XCTAssertEqual(output.stderr, stderr, command)
            XCTAssertEqual(output.stdout, "", command)
            await repo.close()
        }
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
    @MainActor
    func testHistoryNeverKeepsTheCurrentCredential() async {
        HistoryFilter.hold("ya29.a0AfH6SMBx-secret")
        // A short one (the emulator's owner) would hide every line that says it.
        HistoryFilter.hold("owner")
        XCTAssertFalse(HistoryFilter.isSensitive("set /roles/ada owner"))
        XCTAssertTrue(HistoryFilter.isSensitive("set /debug/token ya29.a0AfH6SMBx-secret"))
        XCTAssertTrue(HistoryFilter.isSensitive(#"push /log {"t": "ya29.a0AfH6SMBx-secret"}"#))
        XCTAssertTrue(HistoryFilter.isSensitive("auth something"))
        XCTAssertFalse(HistoryFilter.isSensitive("set /debug/token ya29"))
        XCTAssertFalse(HistoryFilter.isSensitive("get /users"))
    }
}

/// import and export through the shell.
extension ShellTests {
    // MARK: import and export

    func temporaryFile(_ text: String) throws -> String {
        let file = NSTemporaryDirectory() + "rtdb-import-" + UUID().uuidString + ".json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    @MainActor
    func testImportThenExportGivesTheFileBack() async throws {
        // 400 children of about 60 bytes: with 64k writes, several writes and export pages.
        let children = (0..<400).map { i in "\"k\(String(format: "%03d", i))\": {\"n\": \(i), \"s\": \"value number \(i)\", \"ok\": \(i % 2 == 0)}" }
        let text = "{\"big\": {" + children.joined(separator: ", ") + "}, \"small\": [1, 2]}\n"
        let file = try temporaryFile(String(repeating: text, count: 1).replacingOccurrences(of: "value number", with: String(repeating: "v", count: 300)))
        assertOutcome(await shell.run("set /data/old true"), .ok)
        assertOutcome(await shell.run("import /data \(file) --chunk-size 64k --json"), .ok)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(summary["path"] as? String, "/data")
        XCTAssertEqual(summary["writes"] as? Int, 1 + (try Data(contentsOf: URL(fileURLWithPath: file)).count) / 65536)
        XCTAssertTrue(output.stderr.hasSuffix("holds part of it until the same import is run again\n"), output.stderr)
        let out = file + ".out"
        assertOutcome(await shell.run("export /data \(out) --quiet"), .ok)
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? NSDictionary
        let exported = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? NSDictionary
        XCTAssertEqual(exported, expected)
        XCTAssertEqual(database.value(at: Path("data/old")), .empty)
    }

    /// A client of the test's database with a disk cache in `folder`.
    private func repoWithDiskCache(_ folder: String) throws -> Repo {
        let database = self.database!
        return Repo(connector: { _, _ in
            let (client, server) = InProcessTransport.pair()
            database.accept(server)
            return client
        }, reconnect: .never, cache: try DiskCache(folder: folder))
    }

    /// An import through a client with a disk cache leaves its data out of the cache (the
    /// file holds it): the cache keeps what was read before, not the imported megabytes.
    @MainActor
    func testImportDoesNotFillTheDiskCache() async throws {
        let cacheFolder = NSTemporaryDirectory() + "rtdb-import-cache-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: cacheFolder) }
        let repo = try repoWithDiskCache(cacheFolder)
        let cached = Shell(repo: repo, output: output)
        assertOutcome(await cached.run(#"set /read {"a": 1}"#), .ok)
        let summary = await repo.cacheSummary
        let before = try XCTUnwrap(summary).dataBytes
        XCTAssertGreaterThan(before, 0)
        let children = (0..<300).map { "\"k\($0)\": \"\(String(repeating: "v", count: 1000))\"" }
        let file = try temporaryFile("{" + children.joined(separator: ",") + "}")
        assertOutcome(await cached.run("import /data \(file) --chunk-size 64k -q"), .ok)
        XCTAssertEqual(database.value(at: Path("data")).childCount, 300)
        let afterwards = await repo.cacheSummary
        let after = try XCTUnwrap(afterwards)
        XCTAssertEqual(after.dataBytes, before)
        XCTAssertEqual(after.queuedWrites, 0)
        await repo.close()
    }

    /// Online, a query's one-time read answers the server's data, not what the disk cache
    /// holds complete from an earlier read; an export adds nothing to the cache.
    @MainActor
    func testAQueryReadAnswersTheServersDataAndAnExportLeavesTheCacheAlone() async throws {
        let cacheFolder = NSTemporaryDirectory() + "rtdb-query-cache-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: cacheFolder) }
        let repo = try repoWithDiskCache(cacheFolder)
        let cached = Shell(repo: repo, output: output)
        assertOutcome(await cached.run(#"set /list {"a": 1, "b": 2, "c": 3}"#), .ok)
        assertOutcome(await cached.run("get /list --orderByKey --limitToFirst 2 --json"), .ok)
        assertOutcome(await shell.run("set /list/a 10"), .ok)
        assertOutcome(await cached.run("get /list --orderByKey --limitToFirst 2 --json"), .ok)
        assertOutcome(await cached.run("query /list --orderByKey --limitToFirst 2 --json"), .ok)
        let summary = await repo.cacheSummary
        let before = try XCTUnwrap(summary).dataBytes
        assertOutcome(await cached.run("export /list -q"), .ok)
        XCTAssertEqual(output.stdout, """
        {"a":1,"b":2}
        {"a":10,"b":2}
        [{"key":"a","value":10},{"key":"b","value":2}]
        {"a":10,"b":2,"c":3}

        """)
        let afterwards = await repo.cacheSummary
        XCTAssertEqual(try XCTUnwrap(afterwards).dataBytes, before)
        await repo.close()

        // Offline, the query read before is answered from the cache; one never read is not.
        let offline = Repo(connector: { _, _ in NeverConnects() }, reconnect: .never, cache: try DiskCache(folder: cacheFolder))
        await offline.setOfflineReadTimeout(0.1)
        let offlineShell = Shell(repo: offline, output: output)
        assertOutcome(await offlineShell.run("get /list --orderByKey --limitToFirst 2 --json"), .ok)
        assertOutcome(await offlineShell.run("get /other --orderByKey --limitToFirst 1 --json"), .failed)
        XCTAssertEqual(output.stdout.split(separator: "\n").last, #"{"a":10,"b":2}"#)
        XCTAssertEqual(output.stderr, "error: DISCONNECTED: Client is offline.\n")
        await offline.close()
    }

    /// Pages the database refuses as too big are read again with fewer children, down to
    /// one; a single child too big for one read ends the export, saying which.
    @MainActor
    func testExportReadsSmallerPagesWhenOneIsTooBig() async throws {
        let database = self.database!
        let repo = Repo(transport: {
            let (client, server) = InProcessTransport.pair()
            database.accept(MessageLimitedTransport(server, maxBytes: 2000))
            return client
        }())
        defer { Task { await repo.close() } }
        let limited = Shell(repo: repo, output: output)
        // 64 children of some 210 bytes (the first page asks for 64): 8 fit in one message.
        let children = (0..<64).map { "\"k\(String(format: "%02d", $0))\": \"\(String(repeating: "v", count: 200))\"" }
        let text = "{" + children.joined(separator: ",") + "}"
        assertOutcome(await limited.run("set /data \(text)"), .ok)
        assertOutcome(await limited.run("export /data -q"), .ok)
        XCTAssertEqual(output.stdout, JSONWriter.string(try JSONReader.parse(text)) + "\n")
        XCTAssertEqual(output.stderr, "")
        assertOutcome(await limited.run("set /data/k10 \"\(String(repeating: "w", count: 3000))\""), .ok)
        let file = NSTemporaryDirectory() + "rtdb-export-" + UUID().uuidString + ".json"
        assertOutcome(await limited.run("export /data \(file) -q"), .failed)
        XCTAssertEqual(output.stderr, "error: cannot export /data: its child after \"k09\" is larger than the database sends in one read; export that child's children one by one\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: file), "nothing half written")
    }

    @MainActor
    func testExportToTheOutputAndWithPriorities() async throws {
        assertOutcome(await shell.run(#"set /a {"x": 1, "list": ["p", "q"]}"#), .ok)
        assertOutcome(await shell.run("priority /a 3"), .ok)
        assertOutcome(await shell.run("export /a -q"), .ok)
        assertOutcome(await shell.run("export /a - --priorities -q"), .ok)
        assertOutcome(await shell.run("export /nothing -q"), .ok)
        XCTAssertEqual(output.stdout, """
        {"list":["p","q"],"x":1}
        {".priority":3,"list":{"0":"p","1":"q"},"x":1}
        null

        """)
        assertOutcome(await shell.run("export /a"), .ok)
        XCTAssertTrue(output.stderr.hasPrefix("exported /a: 25 B, 2 keys, "), output.stderr)
    }

    @MainActor
    func testAnImportWithAMistakeWritesNothing() async throws {
        assertOutcome(await shell.run("set /data/old true"), .ok)
        let file = try temporaryFile("{\"a\": 1,\n \"b\": [1, 2,]}")
        assertOutcome(await shell.run("import /data \(file)"), .failed)
        XCTAssertEqual(output.stderr, "error: \(file):2:13: expected a value, found ']'; nothing was imported\n")
        assertOutcome(await shell.run("import /data -"), .failed)
        XCTAssertTrue(output.stderr.hasSuffix("error: import - reads the file from standard input, which carries this session's commands; give a file name, or run rtdb -c 'import PATH -' < FILE\n"), output.stderr)
        assertOutcome(await shell.run("import /data /no/such/file.json"), .failed)
        XCTAssertTrue(output.stderr.hasSuffix("error: cannot read /no/such/file.json: No such file or directory\n"), output.stderr)
        assertOutcome(await shell.run("import /data \(file) --chunk-size 1k"), .failed)
        XCTAssertTrue(output.stderr.contains("error: --chunk-size needs a size from 64k to 15M, as in --chunk-size 4M"), output.stderr)
        XCTAssertEqual(database.value(at: Path("data")), Node(json: .object([("old", .bool(true))])))
    }
}
