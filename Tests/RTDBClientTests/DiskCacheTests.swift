import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBEngine
import RTDBTestSupport
@testable import RTDBClient

/// The disk cache on its own (rows, completeness, the write queue) and under a Repo across
/// sessions, against a real engine.
final class DiskCacheTests: XCTestCase {
    var folder: String!

    override func setUp() {
        folder = NSTemporaryDirectory() + "rtdb-client-cache-" + UUID().uuidString
    }

    override func tearDown() {
        server?.close()
        try? FileManager.default.removeItem(atPath: folder)
        try? FileManager.default.removeItem(atPath: folder + "-server")
    }

    /// The engine a test's clients reach, when it has one (closed and removed in tearDown).
    private var server: Database?

    private func startServer() throws -> Database {
        let database = try Database(folder: folder + "-server")
        server = database
        return database
    }

    /// Each connection a new in-process pair to `database`.
    private func connector(to database: Database) -> Connector {
        { _, _ in
            let (client, server) = InProcessTransport.pair()
            database.accept(server)
            return client
        }
    }

    /// A client with the test's cache whose connection never comes up.
    private func offlineRepo() throws -> Repo {
        Repo(connector: { _, _ in NeverConnects() }, cache: try DiskCache(folder: folder))
    }

    private func json(_ text: String) throws -> Node { try JSONReader.parse(text) }

    /// A cache closed and let go leaves nothing open: its parts are freed with it, the file
    /// descriptors of its file, lock and ledger closed.
    func testAClosedCacheLeavesNoDescriptorOpen() throws {
        /// The files under the cache's folder this process has open.
        func openInFolder() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)).flatMap { $0.hasPrefix(folder) ? $0 : nil }
            }
        }
        weak var queue: CacheWriteQueue?
        do {
            let cache = try DiskCache(folder: folder)
            queue = cache.writes
            _ = cache.writes.save(.set(Path("a"), Node(1)))
            cache.close()
        }
        XCTAssertNil(queue, "the write queue outlived its cache")
        XCTAssertEqual(try openInFolder(), [])
    }

    /// Each of `paths`, read offline, fails as the cache does not hold it.
    private func assertNotAnsweredOffline(_ repo: Repo, _ paths: [String], line: UInt = #line) async {
        for path in paths {
            do {
                let value = try await repo.get(Path(path))
                XCTFail("\(path) answered offline with \(value)", line: line)
            } catch {
                XCTAssertEqual((error as? DatabaseError)?.message, DatabaseError.offline.message, path, line: line)
            }
        }
    }

    /// A number from the cache file, read on a connection of its own beside the cache's.
    private func count(_ sql: String) throws -> Int {
        Int(try SQLiteDatabase(path: folder + "/cache.sqlite").integer(sql))
    }

    /// Deeper rows override what an ancestor row says, deletes included.
    func testRowsLayerAndDeletesHideWhatIsAbove() throws {
        let cache = try DiskCache(folder: folder)
        cache.overwrite(Path("a"), try json(#"{"b": {"c": 1, "d": 2}, "e": 3}"#))
        cache.overwrite(Path("a/b/c"), Node(10))
        cache.overwrite(Path("a/e"), .empty)
        cache.overwrite(Path("x/y"), Node("z"))
        cache.commit()
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("a"))), #"{"b":{"c":10,"d":2}}"#)
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("a/b/d"))), "2")
        XCTAssertEqual(JSONWriter.string(cache.node(at: .root)), #"{"a":{"b":{"c":10,"d":2}},"x":{"y":"z"}}"#)
        // A sibling whose name sorts between a parent's row and its children's.
        cache.overwrite(Path("a!"), Node(true))
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("a"))), #"{"b":{"c":10,"d":2}}"#)
        // Replacing a location drops every row below it.
        cache.overwrite(Path("a"), Node(5))
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("a/b"))), "null")
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("a"))), "5")
    }

    /// A large value is kept a row per child: read whole or in part, it is what was written,
    /// priorities included, and it hides what an ancestor row said.
    func testALargeValueReadsBackWholeAndInParts() throws {
        let cache = try DiskCache(folder: folder)
        cache.overwrite(.root, try json(#"{"list": {"stale": 1}, "other": 2}"#))
        var notes: [String] = []
        for i in 0..<300 { notes.append(#""n\#(i)": {"text": "\#(String(repeating: "x", count: 100))", "n": \#(i)}"#) }
        let nested = #"{"deep": {"a": {"b": "\#(String(repeating: "y", count: 20_000))", "c": [1, 2]}}, "#
        let list = try json(nested + notes.joined(separator: ", ") + #", ".priority": 7}"#)
        cache.overwrite(Path("list"), list)
        cache.commit()
        XCTAssertEqual(cache.node(at: Path("list")), list)
        XCTAssertEqual(cache.node(at: Path("list")).priority, .number(7))
        // A priority keeps its node whole; without one, a row per child (and one hiding "/").
        XCTAssertEqual(try count("SELECT count(*) FROM server_data"), 2)
        cache.overwrite(Path("list"), list.withPriority(nil))
        cache.commit()
        XCTAssertEqual(try count("SELECT count(*) FROM server_data"), 1 + 1 + 300 + 2)
        XCTAssertEqual(cache.node(at: Path("list")), list.withPriority(nil))
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("list/n42/n"))), "42")
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("list/deep/a/c"))), "[1,2]")
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("list/stale"))), "null")
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("other"))), "2")
        // Later changes to one child and to the whole still layer as before.
        cache.overwrite(Path("list/n42/n"), Node("changed"))
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("list/n42"))), #"{"n":"changed","text":"\#(String(repeating: "x", count: 100))"}"#)
        // Emptied child by child, the list is gone; a new child is all there is.
        for i in 0..<300 { cache.overwrite(Path("list/n\(i)"), .empty) }
        cache.overwrite(Path("list/deep"), .empty)
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("list"))), "null")
        cache.overwrite(Path("list/new"), Node(true))
        XCTAssertEqual(JSONWriter.string(cache.node(at: Path("list"))), #"{"new":true}"#)
        cache.overwrite(Path("list"), Node(1))
        XCTAssertEqual(JSONWriter.string(cache.node(at: .root)), #"{"list":1,"other":2}"#)
    }

    /// Complete here or above; a filtered query from what a larger one held; else only known children.
    func testCompletenessFollowsWhatTheServerSaid() throws {
        let cache = try DiskCache(folder: folder)
        let notes = Path("notes")
        cache.overwrite(notes.child("n1"), Node(1))
        cache.overwrite(notes.child("n2"), Node(2))
        cache.overwrite(notes.child("n3"), Node(3))
        let lastTwo = QuerySpec(path: notes, params: QueryParams().ordered(by: .value).limitToLast(2))
        cache.setComplete(lastTwo, keys: ["n2", "n3"])
        let lastOne = QuerySpec(path: notes, params: QueryParams().ordered(by: .value).limitToLast(1))
        let firstOne = QuerySpec(path: notes, params: QueryParams().ordered(by: .value).limitToFirst(1))
        let lastThree = QuerySpec(path: notes, params: QueryParams().ordered(by: .value).limitToLast(3))
        XCTAssertEqual(cache.serverCache(for: lastOne).map { "\(JSONWriter.string($0.node)) \($0.complete)" }, #"{"n2":2,"n3":3} true"#)
        XCTAssertEqual(cache.serverCache(for: lastThree).map { "\(JSONWriter.string($0.node)) \($0.complete)" }, #"{"n2":2,"n3":3} false"#)
        XCTAssertEqual(cache.serverCache(for: firstOne)?.complete, false)
        XCTAssertEqual(cache.serverCache(for: QuerySpec(path: notes))?.complete, false)
        XCTAssertNil(cache.serverCache(for: QuerySpec(path: Path("other"))))
        cache.setComplete(QuerySpec(path: .root), keys: nil)
        XCTAssertEqual(cache.serverCache(for: QuerySpec(path: notes.child("n1")))?.complete, true)
        XCTAssertEqual(cache.serverCache(for: firstOne).map { "\(JSONWriter.string($0.node)) \($0.complete)" }, #"{"n1":1,"n2":2,"n3":3} true"#)
    }

    func testTheWriteQueueKeepsItsOrderAndValuesAcrossAReopen() throws {
        var cache: DiskCache? = try DiskCache(folder: folder)
        let writes: [Write] = [
            .set(Path("a"), try json(#"{".value": 1, ".priority": "p"}"#)),
            .update(Path("b"), [UpdateEntry(Path("c/d"), Node(true)), UpdateEntry(Path("e"), try json(#"{".sv": "timestamp"}"#))]),
            .set(Path("f/.priority"), Node(3)),
        ]
        for write in writes { _ = cache?.writes.save(write) }
        XCTAssertThrowsError(try DiskCache(folder: folder)) { error in
            guard case DiskCacheError.inUse(_, let pid) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(pid, "\(getpid())")
        }
        cache?.close()
        cache = nil
        let reopened = try DiskCache(folder: folder)
        let loaded = reopened.writes.load()
        XCTAssertEqual(loaded.writes.map(\.1), writes)
        XCTAssertEqual(loaded.unreadable, 0)
        reopened.writes.remove(loaded.writes[1].0)
        XCTAssertEqual(reopened.writes.load().writes.map(\.1), [writes[0], writes[2]])
    }

    /// A session never gives a queued write a number it gave before: the next write after
    /// one acknowledged in the same transaction took its number, and when that transaction
    /// was lost to a full disk, the acknowledged write's row came back under the new write's
    /// number, was taken for the lost one, and was sent again by the next session.
    func testAWriteNeverTakesTheNumberOfOneRemovedInTheSameSession() throws {
        let cache = try DiskCache(folder: folder)
        let first = try XCTUnwrap(cache.writes.save(.set(Path("a"), Node(1))))
        XCTAssertTrue(cache.commit())
        cache.writes.remove(first)
        let second = try XCTUnwrap(cache.writes.save(.set(Path("b"), Node(2))))
        XCTAssertNotEqual(second, first)
        XCTAssertTrue(cache.commit())
        XCTAssertEqual(cache.writes.load().writes.map(\.row), [second])
        cache.close()
        // A new session numbers after what its queue holds.
        let reopened = try DiskCache(folder: folder)
        XCTAssertEqual(reopened.writes.save(.set(Path("c"), Node(3))), second + 1)
        reopened.close()
    }

    /// Whether a queued write's data is cached once acknowledged is kept with it; a file
    /// whose queue has no such column (made before it existed) gains it on opening, its
    /// writes cached as they were then.
    func testTheQueueKeepsWhetherAWriteIsCachedAndOlderFilesGainIt() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let older = try SQLiteDatabase(path: folder + "/cache.sqlite")
        try older.execute("""
            CREATE TABLE writes (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, path TEXT NOT NULL, value BLOB NOT NULL);
            PRAGMA user_version = 2;
            """)
        let before = Write.set(Path("old"), Node(1))
        try older.run("INSERT INTO writes (kind, path, value) VALUES (?, ?, ?)",
                      [.integer(before.kindCode), .text(before.path.description), .blob(before.encodedValue)])
        older.close()
        var cache: DiskCache? = try DiskCache(folder: folder)
        let imported = Write.update(Path("data"), [UpdateEntry(Path("k"), Node(2))])
        _ = cache?.writes.save(imported, cached: false)
        // A guarded update (mv) keeps its guards, relative to its path.
        let moved = Write.update(.root, [UpdateEntry(Path("b"), Node(1)), UpdateEntry(Path("a"), .empty)],
                                 guards: [UpdateGuard(Path("a"), hash: Node(1).hashString), UpdateGuard(Path("b"), hash: "")])
        _ = cache?.writes.save(moved)
        cache?.close()
        cache = nil
        let reopened = try DiskCache(folder: folder)
        let loaded = reopened.writes.load().writes
        XCTAssertEqual(loaded.map(\.write), [before, imported, moved])
        XCTAssertEqual(loaded.map(\.cached), [true, false, true])
        XCTAssertEqual(String(decoding: moved.encodedValue, as: UTF8.self), #"{"d":{"b":1,"a":null},"h":{"a":"\#(Node(1).hashString)","b":""}}"#)
    }

    /// An import's write queued by a session that could not send it is still not cached when
    /// a later session sends it.
    func testARestoredUncachedWriteStaysUncached() async throws {
        let database = try startServer()
        let offline = try offlineRepo()
        try await offline.set(Path("data"), try json(#"{"k": 1}"#), cached: false)
        await offline.close()
        let online = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        assertEqual(await online.takeRestoredWrites().count, 1)
        assertEqual(await online.waitForPendingWrites(idle: 10), 0)
        assertEqual(database.value(at: Path("data/k")), Node(1))
        await online.close()
        XCTAssertEqual(try count("SELECT count(*) FROM server_data"), 0)
    }

    /// A Repo that cannot reach its server restores the queue and answers from the cache; a
    /// later one that can sends the queue in order and empties it.
    func testASessionOfflineWorksFromTheCacheAndTheNextSendsItsWrites() async throws {
        let database = try startServer()
        func online() throws -> Repo { Repo(connector: connector(to: database), cache: try DiskCache(folder: folder)) }
        let first = try online()
        try await first.set(Path("notes/a"), Node("from before")).acknowledged()
        assertEqual(try await first.get(Path("notes")), try json(#"{"a": "from before"}"#))
        await first.close()

        let offline = try offlineRepo()
        assertEqual(try await offline.get(Path("notes")), try json(#"{"a": "from before"}"#))
        try await offline.set(Path("notes/b"), Node(1))
        try await offline.update(Path("notes"), [UpdateEntry(Path("b"), Node(2))])
        assertEqual(try await offline.get(Path("notes")), try json(#"{"a": "from before", "b": 2}"#))
        assertEqual(await offline.pendingUserWrites.count, 2)
        await offline.close()

        let second = try online()
        assertEqual(await second.takeRestoredWrites().count, 2)
        assertEqual(await second.waitForPendingWrites(idle: 10), 0)
        assertEqual(database.value(at: Path("notes")), try json(#"{"a": "from before", "b": 2}"#))
        assertEqual(await second.pendingUserWrites, [])
        await second.close()
        let third = try offlineRepo()
        assertEqual(await third.takeRestoredWrites().count, 0)
        await third.close()
    }

    /// An acknowledged write is the server's data: an offline read of a location cached
    /// complete before it shows the write, not what was read before, and a location only
    /// written answers offline too.
    func testAnAcknowledgedWriteUpdatesTheCachedData() async throws {
        let database = try startServer()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        try await repo.set(Path("a"), try json(#"{"x": 1, "y": 1}"#)).acknowledged()
        assertEqual(try await repo.get(Path("a")), try json(#"{"x": 1, "y": 1}"#))
        try await repo.set(Path("a/x"), Node(2)).acknowledged()
        try await repo.update(Path("a"), [UpdateEntry(Path("y"), .empty)]).acknowledged()
        // Never read: what was written is all there is at each location written.
        try await repo.set(Path("b"), Node("set")).acknowledged()
        try await repo.update(Path("c"), [UpdateEntry(Path("d"), Node("merged"))]).acknowledged()
        await repo.close()
        let offline = try offlineRepo()
        assertEqual(try await offline.get(Path("a")), try json(#"{"x": 2}"#))
        assertEqual(try await offline.get(Path("b")), Node("set"))
        assertEqual(try await offline.get(Path("c/d")), Node("merged"))
        await offline.close()
    }

    /// A write not to be cached (an import's) waits in the queue until acknowledged, then
    /// leaves nothing in the cache and takes with it what was cached at the location written,
    /// so no offline read answers with what it replaced; the rest of the cache stays.
    func testAnUncachedWriteForgetsTheLocationItWrote() async throws {
        let database = try startServer()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        try await repo.set(Path("a"), try json(#"{"x": 1, "y": 1}"#)).acknowledged()
        try await repo.set(Path("keep"), Node(1)).acknowledged()
        try await repo.update(Path("a"), [UpdateEntry(Path("x"), Node(2)), UpdateEntry(Path("z"), Node(3))], cached: false).acknowledged()
        try await repo.set(Path("b"), Node("set"), cached: false).acknowledged()
        await repo.close()
        XCTAssertEqual(try count("SELECT count(*) FROM writes"), 0)
        let offline = try offlineRepo()
        await offline.setOfflineReadTimeout(0.1)
        assertEqual(try await offline.get(Path("keep")), Node(1))
        await assertNotAnsweredOffline(offline, ["a", "a/x", "a/y", "b"])
        await offline.close()
    }

    /// How a query uses the disk cache: a read while online (`keep`) answers the server's
    /// data, not what the cache holds complete from an earlier read, and keeps it; one that
    /// bypasses the cache (an export's page) leaves it as it was, and a registration joining
    /// it takes it as it is.
    func testAQueryUsesTheDiskCacheAsAsked() async throws {
        let database = try startServer()
        let writer = Repo(connector: connector(to: database))
        try await writer.set(Path("list"), try json(#"{"a": 1, "b": 2, "c": 3}"#)).acknowledged()
        var repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        let query = QuerySpec(path: Path("list"), params: QueryParams().ordered(by: .key).limitToFirst(2))
        func read(_ repo: Repo, _ use: DiskCacheUse) async throws -> (Node, EventRegistration) {
            let answer = OneShot<Node>()
            let registration = EventRegistration(types: [.value]) { answer.resolve(.success($0.node)) }
            await repo.listen(query, registration, diskCache: use)
            return (try await answer.value(), registration)
        }
        /// Rows, tracked queries, complete ones, their keys.
        func rows() async throws -> [Int] {
            _ = await repo.commitCacheNow()
            return [try count("SELECT count(*) FROM server_data"), try count("SELECT count(*) FROM tracked_queries"),
                    try count("SELECT count(*) FROM tracked_queries WHERE complete = 1"), try count("SELECT count(*) FROM tracked_keys")]
        }
        func offlineRead() async throws -> Node {
            await repo.close()
            let offline = try offlineRepo()
            let (value, _) = try await read(offline, .startFromAndKeep)
            await offline.close()
            repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
            return value
        }

        let (kept, first) = try await read(repo, .startFromAndKeep)
        assertEqual(kept, try json(#"{"a": 1, "b": 2}"#))
        await repo.unlisten(query, first)
        let afterFirstRead = try await rows()
        XCTAssertEqual(afterFirstRead, [2, 1, 1, 2])

        try await writer.set(Path("list/a"), Node(10)).acknowledged()
        let (page, bypassing) = try await read(repo, .bypass)
        assertEqual(page, try json(#"{"a": 10, "b": 2}"#))
        let (joined, joining) = try await read(repo, .startFromAndKeep)
        assertEqual(joined, page)
        try await writer.set(Path("list/b"), Node(20)).acknowledged()
        await repo.unlisten(query, bypassing)
        await repo.unlisten(query, joining)
        let afterBypass = try await rows()
        XCTAssertEqual(afterBypass, [2, 1, 1, 2])
        assertEqual(try await offlineRead(), kept)

        let (fresh, reading) = try await read(repo, .keep)
        assertEqual(fresh, try json(#"{"a": 10, "b": 20}"#))
        await repo.unlisten(query, reading)
        assertEqual(try await offlineRead(), fresh)
        await repo.close()
        await writer.close()
    }

    /// Reads that each stay under the limit but together go past it: what they left is
    /// evicted once they end (while a read listens, its data is in use and stays). A cache
    /// found over its limit when opened (here: opened with a smaller one) shrinks at once.
    func testTheCacheGoesBackUnderItsLimitOnceReadsEndAndWhenOpened() async throws {
        let database = try startServer()
        let writer = Repo(connector: connector(to: database))
        let children = (0..<40).map { "\"k\(10 + $0)\": \"\(String(repeating: "v", count: 100))\"" }
        try await writer.set(Path("list"), try json("{" + children.joined(separator: ", ") + "}")).acknowledged()
        await writer.close()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder, limit: 2000))
        for start in stride(from: 10, to: 50, by: 10) {
            let query = QuerySpec(path: Path("list"), params: QueryParams().ordered(by: .key).startAt(Node("k\(start)")).limitToFirst(10))
            let answer = OneShot<Node>()
            let registration = EventRegistration(types: [.value]) { answer.resolve(.success($0.node)) }
            await repo.listen(query, registration, diskCache: .keep)
            let page = try await answer.value()
            XCTAssertEqual(page.childCount, 10)
            await repo.unlisten(query, registration)
        }
        _ = await repo.commitCacheNow()
        let summary = await repo.cacheSummary
        XCTAssertLessThanOrEqual(try XCTUnwrap(summary).dataBytes, 2000)
        await repo.close()

        let cache = try DiskCache(folder: folder)
        cache.touch(QuerySpec(path: Path("big")))
        cache.overwrite(Path("big"), Node(String(repeating: "b", count: 5000)))
        cache.commit()
        XCTAssertGreaterThan(cache.dataSize, 5000)
        cache.close()
        let reopened = Repo(connector: { _, _ in NeverConnects() }, cache: try DiskCache(folder: folder, limit: 2000))
        let reopenedSummary = await reopened.cacheSummary
        XCTAssertLessThanOrEqual(try XCTUnwrap(reopenedSummary).dataBytes, 2000)
        await reopened.close()
    }

    /// A query's answer says nothing of the children outside it: a location the cache held
    /// whole is no longer known whole after one (a child may have gone), and the query is
    /// answered offline as the server answered it.
    func testAQueryAnswerLeavesItsLocationNoLongerKnownWhole() async throws {
        let database = try startServer()
        let writer = Repo(connector: connector(to: database))
        try await writer.set(Path("list"), try json(#"{"a": 1, "b": 2, "c": 3}"#)).acknowledged()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        assertEqual(try await repo.get(Path("list")), try json(#"{"a": 1, "b": 2, "c": 3}"#))
        try await writer.update(Path("list"), [UpdateEntry(Path("a"), .empty), UpdateEntry(Path("d"), Node(4))]).acknowledged()
        let query = QuerySpec(path: Path("list"), params: QueryParams().ordered(by: .key).limitToFirst(2))
        assertEqual(try await repo.get(query), try json(#"{"b": 2, "c": 3}"#))
        await repo.close()
        await writer.close()

        let offline = try offlineRepo()
        await offline.setOfflineReadTimeout(0.1)
        assertEqual(try await offline.get(query), try json(#"{"b": 2, "c": 3}"#))
        do {
            let value = try await offline.get(Path("list"))
            XCTFail("answered offline with \(value)")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.message, DatabaseError.offline.message)
        }
        await offline.close()
    }

    /// A listen removed before the server answered it: the late answer marks nothing
    /// complete in the cache (an export reading that page again would have taken the
    /// cache's empty page for the server's, and stopped short).
    func testALateAnswerToARemovedListenMarksNothingComplete() throws {
        let cache = try DiskCache(folder: folder)
        let provider = AnswersLater()
        let tree = SyncTree(listenProvider: provider)
        tree.diskCache = cache
        let query = QuerySpec(path: Path("list"), params: QueryParams().ordered(by: .key).limitToFirst(2))
        for use in [DiskCacheUse.startFromAndKeep, .bypass] {
            let registration = EventRegistration(types: [.value]) { _ in }
            _ = tree.addRegistration(registration, for: query, diskCache: use)
            tree.removeRegistration(registration, for: query)
            XCTAssertEqual(provider.completions.popLast()?(.ok).count, 0)
            cache.commit()
            XCTAssertEqual(try count("SELECT count(*) FROM tracked_queries WHERE complete = 1"), 0, "\(use)")
        }
        cache.close()
    }

    /// An uncached write over a kept-synced location is kept as any write is: the cache
    /// promises to keep that location's data, and forgetting the place written whole would
    /// have taken it along.
    func testAnUncachedWriteKeepsWhatIsKeptSyncedBelowIt() async throws {
        let database = try startServer()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        try await repo.keepSynced(Path("a/k"), true)
        try await repo.set(Path("a"), try json(#"{"k": {"v": 1}, "other": 2}"#), cached: false).acknowledged()
        await repo.close()
        let offline = try offlineRepo()
        await offline.setOfflineReadTimeout(0.1)
        assertEqual(try await offline.get(Path("a/k")), try json(#"{"v": 1}"#))
        await offline.close()
    }

    /// A write under a query's listen (a filtered one, which the server answers only with
    /// the children in its window) is cached as any write, or forgotten when not to be
    /// cached: left alone as if the listen kept it, an offline read of a child outside the
    /// window answered what the write replaced.
    func testAWriteUnderAFilteredListenIsCachedAsAnyWrite() async throws {
        let database = try startServer()
        for (value, cached) in [(10, true), (20, false)] {
            let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
            try await repo.set(Path("list"), try json(#"{"a": 1, "b": 2, "c": 3}"#)).acknowledged()
            _ = try await repo.get(Path("list"))
            let answered = OneShot<Void>()
            await repo.listen(QuerySpec(path: Path("list"), params: QueryParams().limitToLast(1)),
                              EventRegistration(types: [.value]) { _ in answered.succeed() })
            try await answered.value()
            try await repo.set(Path("list/a"), Node(Double(value)), cached: cached).acknowledged()
            await repo.close()
            let offline = try offlineRepo()
            await offline.setOfflineReadTimeout(0.1)
            do {
                assertEqual(try await offline.get(Path("list/a")), Node(Double(value)))
            } catch let error as DatabaseError where !cached {
                XCTAssertEqual(error.message, DatabaseError.offline.message)
            }
            await offline.close()
        }
    }

    /// Flow control waits for answers; offline none come, so a script's writes queue past
    /// the limit instead of waiting for ever.
    func testWritesQueueOfflinePastTheFlowControlLimit() async throws {
        let repo = try offlineRepo()
        repo.setMaxPendingWrites(2)
        try await withTimeout(10) {
            for i in 0..<5 { try await repo.set(Path("queued/k\(i)"), Node(Double(i))) }
        }
        assertEqual(await repo.pendingUserWrites.count, 5)
        await repo.close()
    }

    /// A server value's outcome is the server's: the acknowledged estimate is not cached, and
    /// what was cached there (even under a complete location) is no longer trusted.
    func testAnAcknowledgedServerValueIsNotCachedAsEstimated() async throws {
        let database = try startServer()
        let other = Repo(connector: connector(to: database))
        try await other.set(Path("c"), Node(100)).acknowledged()
        await other.close()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        _ = try await repo.get(Path("d"))
        try await repo.set(Path("c"), Node(.serverValue(.increment(5)))).acknowledged()
        try await repo.set(Path("d"), Node(1)).acknowledged()
        await repo.close()
        assertEqual(database.value(at: Path("c")), Node(105))
        let offline = try offlineRepo()
        assertEqual(try await offline.get(Path("d")), Node(1))
        do {
            _ = try await offline.get(Path("c"))
            XCTFail("an estimate was kept as the server's value")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.message, DatabaseError.offline.message)
        }
        await offline.close()
    }

    /// A write with a server value over a kept-synced location: the estimate is forgotten,
    /// and what is kept synced below stays (the server sent it before its acknowledgement).
    func testAServerValueWriteKeepsWhatIsKeptSyncedBelowIt() async throws {
        let database = try startServer()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        try await repo.set(Path("a"), try json(#"{"k": {"v": 0}, "t": 1, "u": 2}"#)).acknowledged()
        try await repo.keepSynced(Path("a/k"), true)
        try await repo.set(Path("a"), Node(children: ChildMap(unsorted: [
            (ChildKey("k"), try json(#"{"v": 1}"#)), (ChildKey("t"), Node(.serverValue(.increment(5)))),
        ]))).acknowledged()
        await repo.close()
        assertEqual(database.value(at: Path("a/t")), Node(6))
        let offline = try offlineRepo()
        await offline.setOfflineReadTimeout(0.1)
        assertEqual(try await offline.get(Path("a/k")), try json(#"{"v": 1}"#))
        await assertNotAnsweredOffline(offline, ["a", "a/t", "a/u"])
        await offline.close()
    }

    /// Forgetting a place but for a location below it keeps that location's data even when
    /// it lay in a row above it (one of those forgotten).
    func testForgettingButForALocationKeepsItsDataFromARowAbove() throws {
        let cache = try DiskCache(folder: folder)
        cache.overwrite(Path("a/b"), try json(#"{"k": {"v": 1}, "x": 2}"#))
        cache.setComplete(QuerySpec(path: Path("a/b/k")), keys: nil)
        cache.forget(Path("a"), except: [Path("a/b/k")])
        let kept = try XCTUnwrap(cache.serverCache(for: QuerySpec(path: Path("a/b/k"))))
        assertEqual(kept.node, try json(#"{"v": 1}"#))
        XCTAssertTrue(kept.complete)
        XCTAssertNil(cache.serverCache(for: QuerySpec(path: Path("a/b/x"))))
        cache.close()
    }

    /// Every acknowledged location is a tracked query: they are bounded as the data is.
    func testTrackedQueriesAreBounded() async throws {
        let database = try startServer()
        let repo = Repo(connector: connector(to: database), cache: try DiskCache(folder: folder))
        for i in 0..<1200 { try await repo.set(Path("log/k\(i)"), Node(Double(i))).acknowledged() }
        // Under a complete location, a write adds none.
        _ = try await repo.get(Path("all"))
        for i in 0..<50 { try await repo.set(Path("all/k\(i)"), Node(Double(i))).acknowledged() }
        await repo.close()
        let queries = try count("SELECT count(*) FROM tracked_queries")
        XCTAssert(queries > 0 && queries <= CachePolicy.maxQueries, "\(queries) tracked queries")
        XCTAssertEqual(try count("SELECT count(*) FROM tracked_queries WHERE path LIKE '/all/_%'"), 0)
        let offline = try offlineRepo()
        assertEqual(try await offline.get(Path("log/k1199")), Node(1199))
        assertEqual(try await offline.get(Path("all/k49")), Node(49))
        await offline.close()
    }

    func testPurgeDropsTheQueueAndTakesTheChangesBack() async throws {
        let repo = try offlineRepo()
        let write = try await repo.set(Path("a"), Node(1))
        assertEqual(try await repo.get(Path("a")), Node(1))
        assertEqual(await repo.purgeOutstandingWrites(), 1)
        do {
            try await write.acknowledged()
            XCTFail("a purged write was acknowledged")
        } catch let error as DatabaseError {
            XCTAssertEqual(error.code, "WRITE_CANCELED")
        }
        assertEqual(await repo.pendingUserWrites, [])
        await repo.close()
        let next = try offlineRepo()
        assertEqual(await next.takeRestoredWrites().count, 0)
        await next.close()
    }
}

/// Keeps each listen's completion for the test to call when it chooses.
private final class AnswersLater: ListenProvider {
    var completions: [(ResponseStatus) -> [Event]] = []

    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (ResponseStatus) -> [Event]) -> [Event] {
        completions.append(complete)
        return []
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {}
}
