import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBClient

/// The client core against a real engine over the in-process transport.
final class RepoTests: XCTestCase {
    var database: Database!
    var repo: Repo!

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-repo-" + UUID().uuidString)
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        repo = Repo(transport: client)
    }

    override func tearDown() async throws {
        await repo.close()
        database.close()
    }

    func get(_ path: String) async throws -> Node {
        try await repo.get(Path(path))
    }

    /// Waits for a write's answer.
    func write(_ start: () async throws -> PendingWrite) async -> Result<Void, DatabaseError> {
        do {
            try await start().acknowledged()
            return .success(())
        } catch {
            return .failure(error as! DatabaseError)
        }
    }

    func testWritesAreAcknowledgedAndReadBack() async throws {
        try await write { try await repo.set(Path("a/b"), Node(1)) }.get()
        try await write { try await repo.update(Path("a"), [UpdateEntry(Path("c/d"), Node("x")), UpdateEntry(Path("b"), .empty)]) }.get()
        assertEqual(JSONWriter.string(try await get("/")), #"{"a":{"c":{"d":"x"}}}"#)
        try await write { try await repo.setPriority(Path("a/c"), .number(3)) }.get()
        assertEqual(try await get("a/c").priority, .number(3))
        XCTAssertEqual(repo.pendingWriteCount, 0)
    }

    func testPushKeysAreChronological() async throws {
        var keys: [String] = []
        for i in 0..<50 { keys.append(try await repo.push(Path("list"), Node(Double(i))).key!) }
        assertEqual(await repo.waitForPendingWrites(idle: 10), 0)
        XCTAssertEqual(keys, keys.sorted())
        assertEqual(try await get("list").children.keys.map(\.name), keys)
    }

    func testServerRejectionReachesTheCaller() async {
        // The shell validates paths itself; the engine checks them again for other clients.
        let result = await write { try await repo.set(Path(keys: ["a.b"]), Node(1)) }
        guard case .failure(let error) = result else { return XCTFail("accepted an invalid key") }
        XCTAssertEqual(error.code, "INVALID_PATH")
        XCTAssertTrue(error.message.hasPrefix(#"invalid key "a.b""#), error.message)
        XCTAssertEqual(repo.pendingWriteCount, 0)
    }

    func testCompareAndSet() async throws {
        try await write { try await repo.set(Path("n"), Node(1)) }.get()
        let stale = Node(2).hashString  // not the hash of what is there
        let response = OneShot<Response>()
        database.accept(InProcessTransport.pair().server)  // a second connection does not disturb the first
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        client.start(onMessage: { message in
            if case .response(_, let r) = message { response.resolve(.success(r)) }
        }, onClose: {})
        client.send(.request(id: 1, .put(path: Path("n"), data: Node(5), hash: stale)))
        let answer = try await withTimeout(10) { try await response.value() }
        XCTAssertEqual(answer.status, "datastale")
        assertEqual(try await get("n"), Node(1))
    }

    /// A server without `g`: one that refuses it as an invalid request, and one that never
    /// answers it. Either way `get` reads with a one-time listen, which then ends.
    /// The end of a script waits for a server that keeps answering, however long its
    /// answers take in all, and gives up on one that answers nothing.
    func testTheWaitForPendingWritesLastsWhileTheServerAnswers() async throws {
        final class Puts: @unchecked Sendable {
            let lock = NSLock()
            var count = 0
            func next() -> Int { lock.withLock { count += 1; return count } }
        }
        let puts = Puts()
        // One answer every 0.1 s: 30 writes take 3 s, twice the idle wait, but none waits
        // long for the next.
        let slow = scriptedRepo { server, id, request in
            guard case .put = request else { return server.send(.response(id: id, .ok)) }
            let n = puts.next()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1 * Double(n)) { server.send(.response(id: id, .ok)) }
        }
        for i in 0..<30 { try await slow.set(Path("k\(i)"), Node(Double(i))) }
        assertEqual(await slow.waitForPendingWrites(idle: 1.5), 0)
        await slow.close()

        let silent = scriptedRepo { server, id, request in
            if case .put = request { return }
            server.send(.response(id: id, .ok))
        }
        for i in 0..<3 { try await silent.set(Path("k\(i)"), Node(Double(i))) }
        assertEqual(await silent.waitForPendingWrites(idle: 0.3), 3)
        await silent.close()
    }

    /// A server that does not check guards (its handshake does not say so) would write a
    /// guarded update unguarded: it is not sent, it fails, and its local change is taken back.
    func testAGuardedUpdateIsNotSentToAServerThatDoesNotCheckGuards() async throws {
        let log = RequestLog()
        let repo = scriptedRepo { server, id, request in
            if case .merge(let path, _, let guards) = request { log.add("m \(path) \(guards.count)") }
            server.send(.response(id: id, .ok))
        }
        _ = try await repo.firstConnectionEstablished()
        assertEqual(await repo.serverChecksGuards, false)
        let guarded = try await repo.update(.root, [UpdateEntry(Path("b"), Node(1))], guards: [UpdateGuard(Path("b"), hash: "")])
        do {
            try await guarded.acknowledged()
            XCTFail("a guarded update was written by a server that does not check guards")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.code, "GUARDS_UNCHECKED")
        }
        try await repo.update(.root, [UpdateEntry(Path("c"), Node(1))]).acknowledged()
        XCTAssertEqual(log.all, ["m / 0"])
        assertEqual(await repo.pendingUserWrites, [])
        await repo.close()
    }

    func testGetFallsBackToAOneTimeListenOnServersWithoutG() async throws {
        for ignores in [false, true] {
            let log = RequestLog()
            let repo = scriptedRepo { server, id, request in
                switch request {
                case .get:
                    log.add("g")
                    if !ignores { server.send(.response(id: id, .error(.invalidRequest, "unknown action g"))) }
                case .listen(let path, _, _, _):
                    log.add("l \(path)")
                    server.send(.push(.data(path: path, data: Node("old school"), tag: nil)))
                    server.send(.response(id: id, .ok))
                case .unlisten(let path, _, _):
                    log.add("n \(path)")
                    server.send(.response(id: id, .ok))
                default:
                    server.send(.response(id: id, .ok))
                }
            }
            await repo.setGetFallbackDelay(0.2)
            _ = try await repo.firstConnectionEstablished()
            assertEqual(try await repo.get(Path("a/b")), Node("old school"))
            await assertEventually { log.all == ["g", "l /a/b", "n /a/b"] }
            await repo.close()
        }
    }

    /// A query read is a `g` carrying the query as the official clients send it, an order
    /// alone included (rules may read it); a location's read carries none.
    func testAQueryReadSendsItsQueryWithG() async throws {
        let log = RequestLog()
        let repo = scriptedRepo { server, id, request in
            if case .get = request { log.add(String(decoding: WireCodec.encodeBytes(.request(id: id, request)), as: UTF8.self)) }
            server.send(.response(id: id, .value(Node("answer"))))
        }
        _ = try await repo.firstConnectionEstablished()
        let owner = Path("owner")
        for params in [QueryParams(), QueryParams().ordered(by: .child(owner)), QueryParams().ordered(by: .child(owner)).limitToLast(2)] {
            assertEqual(try await repo.get(QuerySpec(path: Path("list"), params: params)), Node("answer"))
        }
        let sent = log.all.map { $0.replacingOccurrences(of: #""r":\d+"#, with: #""r":N"#, options: .regularExpression) }
        XCTAssertEqual(sent, [
            #"{"t":"d","d":{"r":N,"a":"g","b":{"p":"/list","q":{}}}}"#,
            #"{"t":"d","d":{"r":N,"a":"g","b":{"p":"/list","q":{"i":"owner"}}}}"#,
            #"{"t":"d","d":{"r":N,"a":"g","b":{"p":"/list","q":{"l":2,"vf":"r","i":"owner"}}}}"#,
        ])
        await repo.close()
    }

    /// A read the server refuses as too big for one message fails with that reason; it is
    /// not read again with a listen (whose data would be as big).
    func testATooBigReadFailsWithoutFallingBackToAListen() async throws {
        final class Flag: @unchecked Sendable {
            let lock = NSLock()
            var raised = false
            func raise() { lock.withLock { raised = true } }
            var isRaised: Bool { lock.withLock { raised } }
        }
        let listened = Flag()
        let repo = scriptedRepo { server, id, request in
            switch request {
            case .get: server.send(.response(id: id, .error(.tooBig, "The data requested exceeds the maximum size")))
            case .listen(let path, _, _, _):
                // Were it read this way, the read would succeed with this.
                listened.raise()
                server.send(.push(.data(path: path, data: Node("read by a listen"), tag: nil)))
                server.send(.response(id: id, .ok))
            default: server.send(.response(id: id, .ok))
            }
        }
        await repo.setGetFallbackDelay(0.2)
        _ = try await repo.firstConnectionEstablished()
        do {
            _ = try await repo.get(Path("big"))
            XCTFail("read")
        } catch let error as DatabaseError {
            assertEqual("\(error)", "TOO_BIG: The data requested exceeds the maximum size")
        }
        try await Task.sleep(nanoseconds: 400_000_000)  // past the fallback delay
        XCTAssertFalse(listened.isRaised)
        await repo.close()
    }

    func testInfoIsLocal() async throws {
        assertEqual(try await get("/.info/connected"), Node(true))
        guard case .leaf(.number) = try await get("/.info/serverTimeOffset").content else { return XCTFail() }
    }
}

/// What a scripted server was asked, in order (appended from the server's thread).
private final class RequestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [String] = []
    func add(_ text: String) { lock.withLock { requests.append(text) } }
    var all: [String] { lock.withLock { requests } }
}
