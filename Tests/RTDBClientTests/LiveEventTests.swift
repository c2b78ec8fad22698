import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBEngine
import RTDBRules
@testable import RTDBClient

/// Listeners on a real engine over the in-process transport: what a user of `watch` sees.
final class LiveEventTests: XCTestCase {
    var database: Database!
    var repos: [Repo] = []

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-live-" + UUID().uuidString)
    }

    override func tearDown() async throws {
        for repo in repos { await repo.close() }
        database.close()
    }

    func connect() -> Repo {
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        let repo = Repo(transport: client)
        repos.append(repo)
        return repo
    }

    /// Collects events as "type key prev data" lines.
    final class Recorder: @unchecked Sendable {
        let lock = NSLock()
        var lines: [String] = []
        lazy var registration = EventRegistration { [weak self] event in
            guard let self else { return }
            let line = "\(event.type.rawValue) \(event.key ?? "-") \(event.previousKey ?? "-") \(JSONWriter.string(event.node))"
            lock.lock(); lines.append(line); lock.unlock()
        }
        func take(_ count: Int, timeout: TimeInterval = 10) -> [String] {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                lock.lock()
                if lines.count >= count { let out = Array(lines.prefix(count)); lines.removeFirst(count); lock.unlock(); return out }
                lock.unlock()
                usleep(2_000)
            }
            lock.lock(); defer { lock.unlock() }
            return lines
        }
    }

    func wait(_ repo: Repo) async { assertEqual(await repo.waitForPendingWrites(idle: 10), 0) }

    /// A Repo dropped without `close()` while it listens: the engine keeps sending to its
    /// connection (the listen's `ok` follows the data its value event came from), which must
    /// let those messages go rather than reach a freed Repo.
    func testARepoDroppedWithoutClosingIgnoresLateMessages() async throws {
        let writer = connect()
        try await writer.set(Path("notes/a"), Node(1))
        await wait(writer)
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        var dropped: Repo? = Repo(transport: client)
        let first = OneShot<Void>()
        await dropped?.listen(QuerySpec(path: Path("notes")), EventRegistration(types: [.value]) { _ in first.succeed() })
        try await first.value()
        dropped = nil
        for i in 0..<20 { try await writer.set(Path("notes/n\(i)"), Node(Double(i))) }
        await wait(writer)
        assertEqual(try await writer.get(Path("notes/n19")), Node(19))
        XCTAssertNil(dropped)
    }

    func testAnotherClientsWritesArrive() async throws {
        let writer = connect(), watcher = connect()
        try await writer.set(Path("notes"), try! JSONReader.parse(#"{"a": 1, "b": 2}"#))
        await wait(writer)
        let recorder = Recorder()
        await watcher.listen(QuerySpec(path: Path("notes")), recorder.registration)
        XCTAssertEqual(recorder.take(3), ["child_added a - 1", "child_added b a 2", #"value - - {"a":1,"b":2}"#])
        try await writer.set(Path("notes/c"), Node(3))
        XCTAssertEqual(recorder.take(2), ["child_added c b 3", #"value - - {"a":1,"b":2,"c":3}"#])
        try await writer.update(Path("notes"), [UpdateEntry(Path("a"), .empty), UpdateEntry(Path("b"), Node(20))])
        XCTAssertEqual(recorder.take(3), ["child_removed a - 1", "child_changed b - 20", #"value - - {"b":20,"c":3}"#])
    }

    func testOwnWritesRaiseEventsAtOnceAndRejectionsRevert() async throws {
        let repo = connect()
        let recorder = Recorder()
        await repo.listen(QuerySpec(path: Path("x")), recorder.registration)
        XCTAssertEqual(recorder.take(1), ["value - - null"])
        try await repo.set(Path("x/ok"), Node(1))
        XCTAssertEqual(recorder.take(2), ["child_added ok - 1", #"value - - {"ok":1}"#])
        // The engine refuses a key with a dot: the optimistic child comes and goes.
        try await repo.set(Path(keys: ["x", "bad.key"]), Node(2))
        XCTAssertEqual(recorder.take(4), ["child_added bad.key - 2", #"value - - {"bad.key":2,"ok":1}"#,
                                          "child_removed bad.key - 2", #"value - - {"ok":1}"#])
    }

    func testLimitedQueryKeepsTheNewestFour() async throws {
        let writer = connect(), watcher = connect()
        for i in 1...6 { try await writer.set(Path("notes/n\(i)"), try! JSONReader.parse(#"{"lastModified": \#(i * 10)}"#)) }
        await wait(writer)
        let recorder = Recorder()
        let query = QueryParams().ordered(by: .child(Path("lastModified"))).limitToLast(4)
        await watcher.listen(QuerySpec(path: Path("notes"), params: query), recorder.registration)
        let initial = recorder.take(5)
        XCTAssertEqual(initial.prefix(4).map { $0.split(separator: " ")[1] }, ["n3", "n4", "n5", "n6"])
        // A newer note pushes the oldest of the window out.
        try await writer.set(Path("notes/n7"), try! JSONReader.parse(#"{"lastModified": 70}"#))
        XCTAssertEqual(recorder.take(3), ["child_removed n3 - {\"lastModified\":30}", "child_added n7 n6 {\"lastModified\":70}",
                                          #"value - - {"n4":{"lastModified":40},"n5":{"lastModified":50},"n6":{"lastModified":60},"n7":{"lastModified":70}}"#])
        // An old note edited to be newest moves to the end.
        try await writer.set(Path("notes/n4/lastModified"), Node(80))
        XCTAssertEqual(recorder.take(3).map { $0.split(separator: " ").prefix(3).joined(separator: " ") },
                       ["child_moved n4 n7", "child_changed n4 n7", "value - -"])
        // Removing one pulls the next newest back in.
        try await writer.set(Path("notes/n7"), .empty)
        XCTAssertEqual(recorder.take(3).map { $0.split(separator: " ").prefix(3).joined(separator: " ") },
                       ["child_removed n7 -", "child_added n3 -", "value - -"])
    }

    /// Writes sent back to back under a watched `limitToLast(2)`: the watcher's value events
    /// show every window they pass through, round after round (the official SDK's test
    /// "Cache doesn't remove items that have fallen out of view" waits for each).
    func testEveryWindowOfABurstOfWritesIsAValueEvent() async throws {
        let writer = connect(), watcher = connect()
        final class Windows: @unchecked Sendable {
            private let lock = NSLock()
            private var list: [String] = []
            /// Adds one; returns how many there are now.
            func add(_ window: String) -> Int { lock.withLock { list.append(window); return list.count } }
            var seen: [String] { lock.withLock { list } }
        }
        for round in 0..<200 {
            let windows = Windows()
            let first = OneShot<Void>(), fifth = OneShot<Void>()
            let registration = EventRegistration(types: [.value]) { event in
                let count = windows.add(event.node.children.keys.map(\.name).joined(separator: ","))
                if count == 1 { first.succeed() }
                if count == 5 { fifth.succeed() }
            }
            let query = QuerySpec(path: Path("q\(round)"), params: QueryParams().limitToLast(2))
            await watcher.listen(query, registration)
            try await first.value()
            for i in 0..<4 { try await writer.set(Path("q\(round)/k\(i)"), Node(Double(i))) }
            try await withTimeout(10) { try await fifth.value() }
            XCTAssertEqual(windows.seen, ["", "k0", "k0,k1", "k1,k2", "k2,k3"], "round \(round)")
            await watcher.unlisten(query, registration)
        }
    }

    func testInfoConnected() async throws {
        let repo = connect()
        let recorder = Recorder()
        await repo.listen(QuerySpec(path: Path(".info/connected")), recorder.registration)
        XCTAssertEqual(recorder.take(1), ["value - - true"])
    }

    /// A handler that writes and reads the core's state from inside an event, while the
    /// writer is held back by flow control: every echo lands, nothing waits forever.
    func testAnEventHandlerThatCallsBackIntoTheCoreDoesNotDeadlock() async throws {
        let repo = connect()
        repo.setMaxPendingWrites(2)
        let echoed = Countdown(20)
        let handler = EventRegistration(types: [.childAdded]) { event in
            Task {
                let echo = try await repo.push(Path("echo"), event.node)
                _ = await repo.isConnected
                _ = repo.pendingWriteCount
                _ = try await repo.get(Path("in"))
                try await echo.acknowledged()
                echoed.tick()
            }
        }
        await repo.listen(QuerySpec(path: Path("in")), handler)
        for i in 0..<20 { try await repo.set(Path("in/k\(i)"), Node(Double(i))) }
        try await withTimeout(10) { try await echoed.done.value() }
        let values = try await repo.get(Path("echo")).children.map { JSONWriter.string($0.value) }.sorted()
        XCTAssertEqual(values, (0..<20).map { "\($0)" }.sorted())
    }

    /// A write the rules refuse shows at once, then is taken back with events when the
    /// server's refusal comes: what a `watch` beside the writer sees.
    func testAWriteTheRulesRefuseIsShownThenTakenBack() async throws {
        database.replaceRules(try SecurityRules(parsing: #"{"rules": {"notes": {".read": true, "$note": {".write": "newData.isString()"}}}}"#))
        let repo = connect()
        // An in-process connection is the owner's until it signs in as someone.
        try await repo.authenticate(token: Identity.unsignedToken(uid: "ada", now: Date().timeIntervalSince1970), google: false)
        let recorder = Recorder()
        await repo.listen(QuerySpec(path: Path("notes")), recorder.registration)
        XCTAssertEqual(recorder.take(1), ["value - - null"])
        try await repo.set(Path("notes/a"), Node("ok"))
        let refused = try await repo.set(Path("notes/b"), Node(5))
        do {
            try await refused.acknowledged()
            XCTFail("the rules allowed a number")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.code, "PERMISSION_DENIED")
        }
        XCTAssertEqual(recorder.take(6), [
            #"child_added a - "ok""#, #"value - - {"a":"ok"}"#,
            "child_added b a 5", #"value - - {"a":"ok","b":5}"#,
            "child_removed b - 5", #"value - - {"a":"ok"}"#,
        ])
    }

}

/// Done after `count` ticks from any thread.
final class Countdown: @unchecked Sendable {
    let done = OneShot<Void>()
    private let lock = NSLock()
    private var left: Int
    init(_ count: Int) { left = count }
    func tick() {
        let finished = lock.withLock { left -= 1; return left == 0 }
        if finished { done.succeed() }
    }

}
