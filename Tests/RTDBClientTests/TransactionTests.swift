import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBClient

/// A counter's update function: adds 1 (null counts as 0).
@Sendable func increment(_ node: Node) -> TransactionUpdate {
    if case .leaf(.number(let n)) = node.content { return .commit(Node(n + 1)) }
    return .commit(Node(1))
}

/// Transactions, onDisconnect, going offline by hand, keepSynced and the local estimates of
/// server values, against a real engine in process. Contention is made certain by writing
/// from a second client while the first is offline with a stale cache.
final class TransactionTests: XCTestCase {
    var database: Database!
    var repos: [Repo] = []

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-tx-" + UUID().uuidString)
    }

    override func tearDown() async throws {
        for repo in repos { await repo.close() }
        database.close()
    }

    /// A client whose every connection is a new in-process one (so it can go offline and back).
    func client() -> Repo {
        let database = self.database!
        let repo = Repo(connector: { _, _ in
            let (client, server) = InProcessTransport.pair()
            database.accept(server)
            return client
        }, reconnect: .never)
        repos.append(repo)
        return repo
    }

    /// The value events at `path`, as compact JSON, in order.
    final class Values: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String] = []
        var all: [String] { lock.withLock { seen } }
        lazy var registration = EventRegistration(types: [.value], callback: { [unowned self] event in
            lock.withLock { seen.append(JSONWriter.string(event.node)) }
        })
    }

    func watch(_ repo: Repo, _ path: String) async -> Values {
        let values = Values()
        await repo.listen(QuerySpec(path: Path(path)), values.registration)
        return values
    }


    /// Sets `path` through `repo` and waits for the acknowledgement.
    func set(_ repo: Repo, _ path: String, _ value: Node) async throws {
        try await repo.set(Path(path), value).acknowledged()
    }

    func testATransactionCommitsOnTheServersValue() async throws {
        let other = client()
        try await set(other, "counter", Node(41))
        let repo = client()
        // Nothing cached: the first attempt runs on null, the server says stale, the second
        // attempt runs on 41.
        let inputs = Inputs()
        let result = try await repo.transaction(Path("counter")) { current in
            inputs.add(current)
            return increment(current)
        }
        XCTAssertEqual(result, TransactionResult(committed: true, snapshot: Node(42), abortReason: nil, attempts: 2))
        XCTAssertEqual(inputs.all, ["null", "41"])
        assertEqual(try await other.get(Path("counter")), Node(42))
        assertEqual(await repo.pendingTransactionCount, 0)
        XCTAssertEqual(repo.pendingWriteCount, 0)
    }

    final class Inputs: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String] = []
        var all: [String] { lock.withLock { seen } }
        func add(_ node: Node) { lock.withLock { seen.append(JSONWriter.string(node)) } }
    }

    /// A client that has seen /c at 0 and went offline, after which another client set it
    /// to `serverValue`: its next transaction there is certain to be stale once.
    func offlineWithStaleCache(serverValue: Double) async throws -> (Repo, Repo, Values) {
        let repo = client()
        let other = client()
        try await set(repo, "c", Node(0))
        let values = await watch(repo, "c")
        await assertEventually { values.all == ["0"] }
        await repo.goOffline()
        await assertEventually { await !repo.isConnected }
        try await set(other, "c", Node(serverValue))
        return (repo, other, values)
    }

    func testContentionRetriesOnTheFreshValue() async throws {
        let (repo, other, values) = try await offlineWithStaleCache(serverValue: 10)
        let attempt = Task { try await repo.transaction(Path("c"), increment) }
        // Applied locally at once, on the stale cache.
        await assertEventually { values.all == ["0", "1"] }
        await repo.goOnline()
        let result = try await attempt.value
        XCTAssertEqual(result, TransactionResult(committed: true, snapshot: Node(11), abortReason: nil, attempts: 2))
        XCTAssertEqual(values.all, ["0", "1", "11"])
        assertEqual(try await other.get(Path("c")), Node(11))
    }

    func testConcurrentTransactionsFromSeveralClientsLoseNoIncrement() async throws {
        let clients = (0..<8).map { _ in client() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for repo in clients {
                group.addTask {
                    for _ in 0..<25 {
                        let result = try await repo.transaction(Path("hot"), increment)
                        XCTAssertTrue(result.committed)
                    }
                }
            }
            try await group.waitForAll()
        }
        assertEqual(try await clients[0].get(Path("hot")), Node(200))
    }

    func testTransactionsOnOnePathRunInOrder() async throws {
        let repo = client()
        try await set(repo, "list", Node(json: try JSONValue.parse(#"["a"]"#)))
        let values = await watch(repo, "list")
        await assertEventually { values.all.count == 1 }
        func appending(_ item: String) -> @Sendable (Node) -> TransactionUpdate {
            { current in .commit(current.updatingChild(ChildKey(String(current.childCount)), Node(item))) }
        }
        // Started one after the other (two `async let`s could reach the core in either order),
        // then both in flight together.
        let first = await repo.startTransaction(Path("list"), appending("b"))
        let second = await repo.startTransaction(Path("list"), appending("c"))
        let results = [try await first.value(), try await second.value()]
        XCTAssertTrue(results.allSatisfy(\.committed))
        assertEqual(JSONWriter.string(try await repo.get(Path("list"))), #"["a","b","c"]"#)
    }

    func testAbortAtOnceRaisesNothingAndReportsTheReason() async throws {
        let repo = client()
        try await set(repo, "x", Node(5))
        let values = await watch(repo, "x")
        await assertEventually { values.all == ["5"] }
        let result = try await repo.transaction(Path("x")) { _ in .abort("not today") }
        XCTAssertEqual(result, TransactionResult(committed: false, snapshot: Node(5), abortReason: "not today", attempts: 0))
        XCTAssertEqual(values.all, ["5"])
    }

    func testAnAbortOnARetryRevertsTheLocalEvents() async throws {
        let repo = client()
        let other = client()
        try await set(repo, "x", Node(0))
        let values = await watch(repo, "x")
        await assertEventually { values.all == ["0"] }
        await repo.goOffline()
        await assertEventually { await !repo.isConnected }
        try await set(other, "x", Node(5))
        let attempt = Task {
            try await repo.transaction(Path("x")) { current in
                current == Node(0) ? .commit(Node(1)) : .abort("changed")
            }
        }
        await assertEventually { values.all == ["0", "1"] }
        await repo.goOnline()
        let result = try await attempt.value
        XCTAssertEqual(result, TransactionResult(committed: false, snapshot: Node(5), abortReason: "changed", attempts: 1))
        XCTAssertEqual(values.all, ["0", "1", "5"])
    }

    func testASetAbortsTheTransactionsItOverlaps() async throws {
        let (repo, other, values) = try await offlineWithStaleCache(serverValue: 5)
        // The first is sent (queued on the connection), the second waits behind it.
        let first = Task { try await repo.transaction(Path("c"), increment) }
        await assertEventually { values.all == ["0", "1"] }
        let second = Task { try await repo.transaction(Path("c"), increment) }
        await assertEventually { values.all == ["0", "1", "2"] }
        let overriding = try await repo.set(Path("c"), Node(100))
        // The waiting one ends at once.
        do {
            _ = try await second.value
            XCTFail("the second transaction committed")
        } catch let error as DatabaseError {
            XCTAssertEqual(error, .transactionOverridden)
        }
        await repo.goOnline()
        // The sent one is stale on the server (5), so it ends too instead of retrying.
        do {
            _ = try await first.value
            XCTFail("the first transaction committed")
        } catch let error as DatabaseError {
            XCTAssertEqual(error, .transactionOverridden)
        }
        try await overriding.acknowledged()
        XCTAssertEqual(values.all, ["0", "1", "2", "100"])
        assertEqual(try await other.get(Path("c")), Node(100))
    }

    func testMaxRetryAfterTwentyFiveStaleAttempts() async throws {
        // A server that has moved on every time the client sends.
        let puts = Counter()
        let repo = scriptedRepo { server, id, request in
            switch request {
            case .listen(let path, _, _, _):
                server.send(.push(.data(path: path, data: Node(Double(puts.value)), tag: nil)))
                server.send(.response(id: id, .ok))
            case .put(let path, _, .some):
                puts.add()
                server.send(.push(.data(path: path, data: Node(Double(puts.value) * 100), tag: nil)))
                server.send(.response(id: id, .error(.dataStale, "the data changed")))
            default:
                server.send(.response(id: id, .ok))
            }
        }
        repos.append(repo)
        let values = await watch(repo, "n")
        let calls = Counter()
        do {
            _ = try await repo.transaction(Path("n")) { current in
                calls.add()
                return increment(current)
            }
            XCTFail("committed against a server that always says stale")
        } catch let error as DatabaseError {
            XCTAssertEqual(error, .transactionMaxRetry)
        }
        XCTAssertEqual(puts.value, 25)
        XCTAssertEqual(calls.value, 25)
        // The local write is gone: the view shows the server's last value.
        XCTAssertEqual(values.all.last, "2500")
    }

    /// A transaction waiting to be sent (here: pausing after a stale answer) runs again when
    /// the server's value changes, even though its own visible write hides the change from
    /// every view: each put carries the hash of exactly the value it was computed from.
    func testEveryPutCarriesTheHashOfTheValueItWasComputedFrom() async throws {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var current = Node(0)
            var puts: [(data: Node, hash: String)] = []
        }
        let script = Script()
        let repo = scriptedRepo { server, id, request in
            script.lock.lock(); defer { script.lock.unlock() }
            switch request {
            case .listen(let path, _, _, _):
                server.send(.push(.data(path: path, data: script.current, tag: nil)))
                server.send(.response(id: id, .ok))
            case .put(let path, let data, .some(let hash)):
                script.puts.append((data, hash))
                if script.puts.count == 1 {
                    // Two other writers: one before this put, one right after the answer.
                    script.current = Node(5)
                    server.send(.push(.data(path: path, data: script.current, tag: nil)))
                    server.send(.response(id: id, .error(.dataStale, "the data changed")))
                    script.current = Node(7)
                    server.send(.push(.data(path: path, data: script.current, tag: nil)))
                } else if hash == script.current.hashString {
                    script.current = data
                    server.send(.push(.data(path: path, data: data, tag: nil)))
                    server.send(.response(id: id, .ok))
                } else {
                    server.send(.response(id: id, .error(.dataStale, "the data changed")))
                }
            default:
                server.send(.response(id: id, .ok))
            }
        }
        repos.append(repo)
        let values = await watch(repo, "n")
        await assertEventually { values.all == ["0"] }
        let result = try await repo.transaction(Path("n"), increment)
        XCTAssertTrue(result.committed)
        let puts = script.lock.withLock { script.puts }
        XCTAssertGreaterThanOrEqual(puts.count, 2)
        for put in puts {
            guard case .leaf(.number(let sent)) = put.data.content else { return XCTFail("not a number: \(put.data)") }
            XCTAssertEqual(put.hash, Node(sent - 1).hashString, "\(sent) was not computed from the value whose hash it carries")
        }
        // The final value is one more than the last other writer's.
        XCTAssertEqual(result.snapshot, Node(8))
    }

    /// A transaction queued behind one that was sent reads that one's result, also when new
    /// server data elsewhere makes it run again (as the official clients: only the
    /// transactions rerun are left out of what they read).
    func testARerunKeepsReadingTheResultOfTheOneSentBeforeIt() async throws {
        let repo = scriptedRepo { server, id, request in
            switch request {
            case .listen(let path, _, _, _) where path == Path("x"):
                // New data elsewhere, as a merge at the root: it reruns what waits.
                server.send(.push(.merge(path: .root, data: [UpdateEntry(Path("x"), Node(1))], tag: nil)))
                server.send(.response(id: id, .ok))
            case .listen(let path, _, _, _):
                server.send(.push(.data(path: path, data: Node(0), tag: nil)))
                server.send(.response(id: id, .ok))
            case .put(_, _, .some):
                break  // never answered: the first stays sent
            default:
                server.send(.response(id: id, .ok))
            }
        }
        repos.append(repo)
        let values = await watch(repo, "c")
        await assertEventually { values.all == ["0"] }
        let first = await repo.startTransaction(Path("c"), increment)
        let second = await repo.startTransaction(Path("c"), increment)
        let x = await watch(repo, "x")
        await assertEventually { x.all == ["1"] }
        XCTAssertEqual(values.all, ["0", "1", "2"])
        XCTAssertNil(first.current)
        XCTAssertNil(second.current)
        // Closed while the watches' owners still live: the transactions end and revert.
        await repo.close()
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func add() { lock.withLock { count += 1 } }
    }

    func testHiddenTransactionsRaiseNoLocalEvents() async throws {
        let repo = client()
        try await set(repo, "h", Node(1))
        let values = await watch(repo, "h")
        await assertEventually { values.all == ["1"] }
        let result = try await repo.transaction(Path("h"), applyLocally: false, increment)
        XCTAssertTrue(result.committed)
        // Only the server's new value, never a local guess.
        await assertEventually { values.all == ["1", "2"] }
    }

    func testAResultWithoutPriorityKeepsTheCurrentOne() async throws {
        let repo = client()
        try await set(repo, "p", Node(.number(1), priority: .number(7)))
        _ = try await repo.get(Path("p"))
        let values = await watch(repo, "p")
        await assertEventually { values.all.count == 1 }
        _ = try await repo.transaction(Path("p"), increment)
        let stored = try await client().get(Path("p"))
        XCTAssertEqual(stored, Node(.number(2), priority: .number(7)))
    }

    // MARK: Server values

    func testServerValuesAreEstimatedLocallyThenReplaced() async throws {
        let repo = client()
        try await set(repo, "n", Node(5))
        let values = await watch(repo, "n")
        await assertEventually { values.all == ["5"] }
        await repo.goOffline()
        await assertEventually { await !repo.isConnected }
        _ = try await repo.set(Path("n"), Node(.serverValue(.increment(2))))
        // Offline, the estimate from the cached 5.
        await assertEventually { values.all == ["5", "7"] }
        await repo.goOnline()
        assertEqual(await repo.waitForPendingWrites(idle: 10), 0)
        assertEqual(try await client().get(Path("n")), Node(7))

        let before = Date().timeIntervalSince1970 * 1000
        let stamped = try await repo.transaction(Path("t")) { _ in .commit(Node(.serverValue(.timestamp))) }
        let after = Date().timeIntervalSince1970 * 1000
        guard case .leaf(.number(let estimate)) = stamped.snapshot.content else { return XCTFail("\(stamped.snapshot)") }
        XCTAssertTrue(estimate >= before.rounded(.down) && estimate <= after.rounded(.up), "\(before) \(estimate) \(after)")
    }

    func testTheEmbeddedServersClockOffsetIsZero() async throws {
        let repo = client()
        _ = try await repo.firstConnectionEstablished()
        assertEqual(try await repo.get(Path(".info/serverTimeOffset")), Node(0))
        assertEqual(await repo.serverTimeOffset, 0)
        XCTAssertEqual(PersistentConnection.clockOffset(serverTime: 1000, sent: 999.6, received: 1000.2), 0)
        XCTAssertEqual(PersistentConnection.clockOffset(serverTime: 5000, sent: 1000, received: 1010), 3995)
        XCTAssertEqual(PersistentConnection.clockOffset(serverTime: 1000, sent: 2000, received: 2010), -1005)
    }

    // MARK: onDisconnect

    func testOnDisconnectWritesRunWhenTheConnectionEnds() async throws {
        let repo = client()
        let watcher = client()
        try await set(repo, "presence/me", Node(true))
        let values = await watch(watcher, "presence")
        await assertEventually { values.all == [#"{"me":true}"#] }
        try await repo.onDisconnectSet(Path("presence/me"), .empty)
        try await repo.onDisconnectUpdate(Path("status"), [UpdateEntry(Path("me/at"), Node(.serverValue(.timestamp))), UpdateEntry(Path("me/state"), Node("away"))])
        try await repo.onDisconnectSet(Path("rooms/a/me"), Node("left"))
        try await repo.onDisconnectCancel(Path("rooms"))
        assertEqual(await repo.onDisconnectWrites.writes, [
            .set(Path("presence/me"), .empty),
            .update(Path("status"), [UpdateEntry(Path("me/at"), Node(.serverValue(.timestamp))), UpdateEntry(Path("me/state"), Node("away"))]),
        ])
        let local = await watch(repo, "status/me/state")
        await assertEventually { local.all == ["null"] }
        await repo.goOffline()
        // The watcher sees the removal; the client that went away sees its own writes at once.
        await assertEventually { values.all == [#"{"me":true}"#, "null"] }
        await assertEventually { local.all == ["null", #""away""#] }
        assertEqual(await repo.onDisconnectWrites.isEmpty, true)
        let status = try await watcher.get(Path("status/me"))
        XCTAssertEqual(status.child("state"), Node("away"))
        guard case .leaf(.number) = status.child("at").content else { return XCTFail("no timestamp: \(status)") }
        assertEqual(try await watcher.get(Path("rooms")), .empty)
    }

    // MARK: Offline by hand, keepSynced

    func testWritesMadeOfflineLandInOrder() async throws {
        let repo = client()
        _ = try await repo.firstConnectionEstablished()
        await repo.goOffline()
        await assertEventually { await !repo.isConnected }
        assertEqual(await repo.isOfflineByChoice, true)
        for i in 1...5 { _ = try await repo.set(Path("seq"), Node(Double(i))) }
        _ = try await repo.push(Path("log"), Node("one"))
        _ = try await repo.push(Path("log"), Node("two"))
        let tx = Task { try await repo.transaction(Path("seq"), increment) }
        await assertEventually { repo.pendingWriteCount == 8 }
        // Nothing reached the server while offline.
        assertEqual(try await client().get(Path("seq")), .empty)
        await repo.goOnline()
        let result = try await tx.value
        XCTAssertEqual(result.snapshot, Node(6))
        assertEqual(await repo.waitForPendingWrites(idle: 10), 0)
        let reader = client()
        assertEqual(try await reader.get(Path("seq")), Node(6))
        assertEqual(try await reader.get(Path("log")).children.map { $0.value }, [Node("one"), Node("two")])
    }

    func testKeepSyncedKeepsTheCacheFreshForOfflineReads() async throws {
        let repo = client()
        let other = client()
        try await repo.keepSynced(Path("k"), true)
        assertEqual(await repo.keptSyncedPaths, [Path("k")])
        try await set(other, "k/a", Node(1))
        // The silent listen brings the change before the answer to this client's next write
        // (one server, one connection, in order); then offline, the read answers from the cache.
        try await set(repo, "barrier", Node(true))
        await repo.goOffline()
        await assertEventually { await !repo.isConnected }
        assertEqual(try await repo.get(Path("k")), Node(json: try JSONValue.parse(#"{"a":1}"#)))
        await repo.goOnline()
        try await repo.keepSynced(Path("k"), false)
        assertEqual(await repo.keptSyncedPaths, [])
    }
}
