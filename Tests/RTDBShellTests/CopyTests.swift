import XCTest
import RTDBClient
import RTDBData
import RTDBEngine
import RTDBProtocol
import RTDBTestSupport
@testable import RTDBShell

/// `cp` and `mv`: one guarded write, and nothing lost when another client writes the
/// source or the destination between the read and the write.
final class CopyTests: XCTestCase {
    var database: Database!
    var shell: Shell!
    var output: BufferOutput!
    /// What the shell prints above the prompt (a queued write's late rejection).
    var late: BufferOutput!

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-copy-" + UUID().uuidString)
        let output = BufferOutput(), late = BufferOutput()
        (self.output, self.late) = (output, late)
        var options = Shell.Options()
        options.backgroundOutput = { late.write($0 + "\n") }
        let repo = embeddedRepo(database)
        shell = MainActor.assumeIsolated { Shell(repo: repo, output: output, options: options) }
    }

    override func tearDown() async throws {
        await shell.repo.close()
        database.close()
    }

    func node(_ json: String) -> Node { (try? JSONReader.parse(json)) ?? .empty }

    /// What `commands` print on stderr (they must all succeed when `ok`).
    @MainActor
    func run(_ commands: String..., ok: Bool = true) async -> String {
        let before = output.stderr.count
        for command in commands {
            let outcome = await shell.run(command)
            if ok { XCTAssertEqual(outcome, .ok, "\(command): \(output.stderr)") }
        }
        return String(output.stderr.dropFirst(before))
    }

    @MainActor
    func testCopyMoveAndMerge() async throws {
        _ = await run(#"set /a {"x": 1, "y": {"z": 2}}"#, "priority /a 5", "cp /a /b")
        XCTAssertEqual(database.value(at: .root), node(#"{"a": {".priority": 5, "x": 1, "y": {"z": 2}}, "b": {".priority": 5, "x": 1, "y": {"z": 2}}}"#))
        _ = await run("mv /b /c/d", "rename /c/d/x /c/d/w")
        XCTAssertEqual(database.value(at: Path("c")), node(#"{"d": {".priority": 5, "w": 1, "y": {"z": 2}}}"#))
        XCTAssertEqual(database.value(at: Path("b")), .empty)
        _ = await run(#"set /defaults {"theme": "dark", "lang": "en"}"#, #"set /settings {"lang": "fr", "size": 3}"#)
        let clash = await run("cp /defaults /settings --merge", ok: false)
        XCTAssertEqual(clash,
                       "error: /settings already has a child of the same name as /defaults's (lang): --force replaces it\n")
        _ = await run("cp /defaults /settings --merge --force")
        XCTAssertEqual(database.value(at: Path("settings")), node(#"{"lang": "en", "size": 3, "theme": "dark"}"#))
        _ = await run("mv /defaults /settings/old --merge")
        XCTAssertEqual(database.value(at: Path("settings/old")), node(#"{"lang": "en", "theme": "dark"}"#))
        XCTAssertEqual(database.value(at: Path("defaults")), .empty)
        // Into a parent: the destination is replaced by the copy.
        _ = await run("cp /settings/old /settings --force")
        XCTAssertEqual(database.value(at: Path("settings")), node(#"{"lang": "en", "theme": "dark"}"#))
    }

    @MainActor
    func testWhatIsRefused() async throws {
        _ = await run(#"set /a {"x": 1}"#, "set /b 2")
        let refusals = await run("cp /a /b", "cp /b /a", "cp /nothing /q", "cp /a/x /b --merge", "mv /a /a/in", "mv /a/x /a", "cp /a /", "cp /a /a",
                                 "cp /a/.priority /c", ok: false)
        XCTAssertEqual(refusals, """
        error: /b already holds 2: --force replaces it, --merge writes into it
        error: /a already has 1 child: --force replaces it, --merge writes into it
        error: there is nothing at /nothing to copy
        error: /a/x is a value, not a list: --merge writes its children into /b (without --merge, /b becomes it)
        error: /a/in is inside /a: a path cannot be moved into itself
          mv /a /a/in
                ^
        error: /a holds /a/x: moving it there would replace what it is moved out of (cp --force copies it)
          mv /a/x /a
                  ^
        error: copying onto / would replace the whole database: --merge writes /a's children into it
          cp /a /
                ^
        error: /a is the source and the destination: nothing to copy
          cp /a /a
                ^
        error: invalid key ".priority" in "/a/.priority": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")
          cp /a/.priority /c
             ^

        """)
        XCTAssertEqual(database.value(at: .root), node(#"{"a": {"x": 1}, "b": 2}"#))
    }

    /// Offline, the move is queued with what was read; the source changed by another client
    /// before it reaches the server makes the server refuse it whole: both values stay.
    @MainActor
    func testAQueuedMoveWhoseSourceChangedMeanwhileWritesNothing() async throws {
        _ = await run(#"set /a {"x": 1}"#, "keepsynced / on", "get /b", "offline")
        let queued = await run("mv /a /b")
        XCTAssertEqual(queued, "offline: the write is applied locally and queued until 'online'\n")
        let other = embeddedRepo(database)
        try await other.set(Path("a/x"), Node(2)).acknowledged()
        _ = await run("online")
        let late = self.late!
        try await Self.waitFor { late.stdout.contains("rejected") }
        XCTAssertEqual(late.stdout, "a queued write was rejected: DATASTALE: the data at /a changed since it was read\n")
        XCTAssertEqual(database.value(at: .root), node(#"{"a": {"x": 2}}"#))
        // The shell's own view is the server's again.
        _ = await run("get /")
        XCTAssertEqual(output.stdout.split(separator: "\n").last, #"{"a":{"x":2}}"#)
        await other.close()
    }

    /// The same for a destination another client wrote meanwhile: it is not overwritten.
    @MainActor
    func testAQueuedCopyWhoseDestinationWasWrittenMeanwhileWritesNothing() async throws {
        _ = await run(#"set /a {"x": 1}"#, "keepsynced / on", "get /b", "offline")
        _ = await run("cp /a /b")
        let other = embeddedRepo(database)
        try await other.set(Path("b"), Node("theirs")).acknowledged()
        _ = await run("online")
        let late = self.late!
        try await Self.waitFor { late.stdout.contains("rejected") }
        XCTAssertEqual(late.stdout, "a queued write was rejected: DATASTALE: the data at /b changed since it was read\n")
        XCTAssertEqual(database.value(at: .root), node(#"{"a": {"x": 1}, "b": "theirs"}"#))
        await other.close()
    }

    /// Nobody else wrote: the queued move is made when the connection returns.
    @MainActor
    func testAQueuedMoveIsMadeWhenNothingChanged() async throws {
        _ = await run(#"set /a {"x": 1}"#, "keepsynced / on", "get /b", "offline", "mv /a /b")
        // Applied locally at once.
        _ = await run("get /")
        XCTAssertEqual(output.stdout.split(separator: "\n").last, #"{"b":{"x":1}}"#)
        _ = await run("online")
        let left = await shell.repo.waitForPendingWrites(idle: 10)
        XCTAssertEqual(left, 0)
        XCTAssertEqual(database.value(at: .root), node(#"{"b": {"x": 1}}"#))
        XCTAssertEqual(late.stdout, "")
    }

    /// At the prompt: another client's write lands between the shell's read and its write
    /// (of the source, then of the destination); the server refuses the move, and says which.
    @MainActor
    func testAMoveRacingAnotherWriterWritesNothing() async throws {
        let database = self.database!
        for (target, theirs, expected) in [("a/x", Node(2), #"{"a": {"x": 2}}"#), ("b", Node("theirs"), #"{"a": {"x": 1}, "b": "theirs"}"#)] {
            database.write(.root, node(#"{"a": {"x": 1}}"#)) { _ in }
            let repo = Repo(connector: { _, _ in
                let (client, server) = InProcessTransport.pair()
                database.accept(InterceptingTransport(server) { message in
                    // The other writer's change is made before the move reaches the server.
                    if case .request(_, .merge(_, _, let guards), _) = message, !guards.isEmpty { database.write(Path(target), theirs) { _ in } }
                })
                return client
            }, reconnect: .never)
            let output = BufferOutput()
            let shell = Shell(repo: repo, output: output)
            let outcome = await shell.run("mv /a /b")
            XCTAssertEqual(outcome, .failed)
            XCTAssertEqual(output.stderr, "error: nothing was written: the data at /\(target.prefix(1)) changed since it was read; run it again to move what is there now\n")
            XCTAssertEqual(database.value(at: .root), node(expected))
            await repo.close()
        }
    }

    /// On a server that does not check guards, a transaction at the lowest path above both;
    /// never at the root, which would read the whole database.
    @MainActor
    func testAServerWithoutGuardsMovesByTransaction() async throws {
        let database = self.database!
        let repo = Repo(connector: { _, _ in
            let (client, server) = InProcessTransport.pair()
            database.accept(GuardlessTransport(server))
            return client
        }, reconnect: .never)
        let output = BufferOutput()
        let shell = Shell(repo: repo, output: output)
        let set = await shell.run(#"set /n {"a": {"x": 1}, "keep": true}"#)
        XCTAssertEqual(set, .ok)
        let moved = await shell.run("mv /n/a /n/b")
        XCTAssertEqual(moved, .ok, output.stderr)
        XCTAssertEqual(database.value(at: .root), node(#"{"n": {"b": {"x": 1}, "keep": true}}"#))
        let refused = await shell.run("mv /n /m")
        XCTAssertEqual(refused, .failed)
        XCTAssertEqual(output.stderr, "error: this server has no guarded update (hosted Firebase and its emulator do not), and the move would be a transaction at /, which reads the whole database: move below a shared parent, or use get and set\n")
        XCTAssertEqual(database.value(at: .root), node(#"{"n": {"b": {"x": 1}, "keep": true}}"#))
        await repo.close()
    }

    private static func waitFor(_ condition: @escaping @Sendable () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertTrue(condition(), "timed out")
    }
}
