import Foundation
import Synchronization
import XCTest
import RTDBData
import RTDBProtocol
import RTDBTestSupport
@testable import RTDBEngine

/// The engine on a disk that fills up (a small tmpfs of its own): a write the store cannot
/// make durable is refused, never seen (it comes out of the tree, and listens hear it go) and
/// never stored later; every write acknowledged is; once there is room, writes work again.
final class DiskFullTests: XCTestCase {
    var mount = ""

    override func setUpWithError() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a small filesystem needs root (CI runs as root)") }
        mount = NSTemporaryDirectory() + "rtdb-full-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        XCTAssertEqual(try run("/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount), 0)
    }

    override func tearDownWithError() throws {
        guard !mount.isEmpty else { return }
        _ = try run("/bin/umount", "-l", mount)
        try? FileManager.default.removeItem(atPath: mount)
    }

    private func run(_ tool: String, _ arguments: String...) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    func testARefusedWriteIsTakenBackAndTheNextOneWorksOnceThereIsRoom() throws {
        // Room to give back later.
        let filler = mount + "/filler"
        XCTAssertTrue(FileManager.default.createFile(atPath: filler, contents: Data(count: 200 << 10)))
        let folder = mount + "/data"
        var database: Database? = try Database(folder: folder)
        let client = SessionTests.Client(try XCTUnwrap(database))
        client.request(1, .listen(path: Path("notes"), query: nil, tag: nil, hash: ""))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        let text = Node(String(repeating: "x", count: 64 << 10))
        // Each write also turns a leaf into an object and empties an object with a priority:
        // taken back, both are as they were (a value and a priority no set path held).
        let shapes = try JSONReader.parse("{" + (0..<40).map { #""s\#($0)":"leaf","p\#($0)":{".priority":3,"k":true}"# }.joined(separator: ",") + "}")
        client.request(2, .merge(path: .root, data: shapes.children.map { UpdateEntry(Path($0.key.name), $0.value) }))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        var acknowledged: [Int] = []
        var refused: Int?
        for i in 0..<40 {
            client.request(10 + i, .merge(path: .root, data: [UpdateEntry(Path("notes/n\(i)"), text), UpdateEntry(Path("s\(i)/q"), Node(1)),
                                                               UpdateEntry(Path("p\(i)/k"), .empty)]))
            let answer = try XCTUnwrap(client.waitFor(response: 10 + i))
            if answer.isOK { acknowledged.append(i); continue }
            XCTAssertEqual(answer.status, .writeFailed)
            XCTAssertTrue(answer.message.contains("No space left on device"), answer.message)
            refused = i
            break
        }
        let failed = try XCTUnwrap(refused, "the disk never filled")
        XCTAssertFalse(acknowledged.isEmpty)
        // Not in the tree, and the listen heard it come and go.
        XCTAssertTrue(database?.value(at: Path("notes/n\(failed)")).isEmpty ?? false)
        XCTAssertEqual(database?.value(at: Path("s\(failed)")), Node("leaf"))
        XCTAssertEqual(database.map { JSONWriter.string($0.value(at: Path("p\(failed)")), options: .init(export: true)) }, #"{".priority":3,"k":true}"#)
        client.lock.lock()
        let pushes = client.received.compactMap { message -> String? in
            guard case .push(.data(Path("notes/n\(failed)"), let data, nil)) = message else { return nil }
            return data == text ? "written" : data.isEmpty ? "taken back" : "other"
        }
        client.lock.unlock()
        XCTAssertEqual(pushes, ["written", "taken back"])

        // Room again: the next write works, in the same session.
        try FileManager.default.removeItem(atPath: filler)
        client.request(100, .put(path: Path("notes/after"), data: Node("room"), hash: nil))
        XCTAssertEqual(client.waitFor(response: 100), .ok)

        client.transport.close()
        database?.close()
        database = nil
        let reopened = try Database(folder: folder)
        defer { reopened.close() }
        for i in acknowledged {
            XCTAssertEqual(reopened.value(at: Path("notes/n\(i)")), text, "n\(i)")
            XCTAssertEqual(JSONWriter.string(reopened.value(at: Path("s\(i)"))), #"{"q":1}"#)
            XCTAssertTrue(reopened.value(at: Path("p\(i)")).isEmpty)
        }
        XCTAssertEqual(reopened.value(at: Path("s\(failed)")), Node("leaf"))
        XCTAssertEqual(JSONWriter.string(reopened.value(at: Path("p\(failed)")), options: .init(export: true)), #"{".priority":3,"k":true}"#)
        XCTAssertTrue(reopened.value(at: Path("notes/n\(failed)")).isEmpty)
        XCTAssertEqual(reopened.value(at: Path("notes/after")), Node("room"))
    }

    /// A writer hears that its write failed only once the write is out of the tree: a read it
    /// sends then finds it undone, even when the read joins a turn of its session's that was
    /// queued on the database's queue before the store reported the failure.
    func testAReadSentAfterTheFailureFindsTheWriteUndone() throws {
        let folder = mount + "/data"
        let database = try Database(folder: folder)
        defer { database.close() }
        let client = SessionTests.Client(database)
        client.request(1, .put(path: Path("seed"), data: Node(1), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        // Every free byte taken: the next append to the log fails.
        var stats = statvfs()
        XCTAssertEqual(statvfs(mount, &stats), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: mount + "/filler", contents: Data(count: Int(stats.f_bavail) * Int(stats.f_frsize))))
        let start = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0)
        let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
        // The write's turn between two holds: the store is handed the write behind the second
        // (the turn queues the hand-off), which has begun once the turn has run.
        database.queue.async { start.wait() }
        client.request(2, .put(path: Path("a"), data: Node(String(repeating: "x", count: 64 << 10)), hash: nil))
        database.queue.async { held.signal(); first.wait() }
        start.signal()
        held.wait()
        // Behind the store's hand-off: a second hold, then a turn for the next request.
        database.queue.async { second.wait() }
        client.request(3, .put(path: Path("b"), data: Node(2), hash: nil))
        first.signal()  // the store is handed the write, and fails it
        // Heard while that turn is still queued, a read would join it: it is heard only after.
        if let early = client.waitFor(response: 2, attempts: 250) {
            XCTAssertEqual(early.status, .writeFailed)
            client.request(4, .get(path: Path("a"), query: nil))
            second.signal()
        } else {
            second.signal()
            XCTAssertEqual(client.waitFor(response: 2)?.status, .writeFailed)
            client.request(4, .get(path: Path("a"), query: nil))
        }
        let read = try XCTUnwrap(client.waitFor(response: 4))
        XCTAssertEqual(WireCodec.encode(.response(id: 4, read)), #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":null}}}"#)
    }
    /// A restore refused with the write before it (the disk full) is taken back as any write
    /// is: its answer says so, the tree and a listen are as before it; once there is room, it
    /// works, and a snapshot saved meanwhile fails rather than hold a refused write.
    func testARefusedRestoreIsTakenBack() throws {
        let folder = mount + "/data"
        let database = try Database(folder: folder)
        defer { database.close() }
        let client = SessionTests.Client(database)
        client.request(1, .listen(path: .root, query: nil, tag: nil, hash: ""))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        client.request(2, .put(path: Path("a"), data: Node(1), hash: nil))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        let saved = expectation(description: "saved")
        database.saveSnapshot("s") { outcome in
            if case .failure(let error) = outcome { XCTFail("\(error)") }
            saved.fulfill()
        }
        wait(for: [saved], timeout: 30)
        client.request(3, .put(path: Path("a"), data: Node(2), hash: nil))
        XCTAssertEqual(client.waitFor(response: 3), .ok)
        var stats = statvfs()
        XCTAssertEqual(statvfs(mount, &stats), 0)
        let filler = mount + "/filler"
        XCTAssertTrue(FileManager.default.createFile(atPath: filler, contents: Data(count: Int(stats.f_bavail) * Int(stats.f_frsize))))

        // In this order on the database's queue, held until all three are on it: the big
        // write fails its round, and the restore and the save behind it go with it.
        let answers = Mutex<[String]>([])
        let done = DispatchGroup()
        done.enter(); done.enter(); done.enter()
        let queued = DispatchSemaphore(value: 0)
        database.queue.async { queued.wait() }
        database.write(Path("big"), Node(String(repeating: "x", count: 64 << 10))) { response in
            answers.withLock { $0.append("write: \(response.status)") }; done.leave()
        }
        database.restoreSnapshot("s") { response in answers.withLock { $0.append("restore: \(response.status)") }; done.leave() }
        database.saveSnapshot("t") { outcome in
            if case .failure(let error) = outcome { answers.withLock { $0.append("save: \(error)".prefix(64).description) } }
            done.leave()
        }
        queued.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(answers.withLock { $0.sorted() }, ["restore: write_failed", "save: writes the snapshot held could not be made durable (cannot",
                                                          "write: write_failed"])
        XCTAssertEqual(JSONWriter.string(database.value(at: .root)), #"{"a":2}"#)
        XCTAssertEqual(try database.snapshots().map(\.name), ["s"])

        try FileManager.default.removeItem(atPath: filler)
        let again = expectation(description: "restored")
        database.restoreSnapshot("s") { response in
            XCTAssertTrue(response.isOK, response.message)
            again.fulfill()
        }
        wait(for: [again], timeout: 30)
        XCTAssertEqual(JSONWriter.string(database.value(at: .root)), #"{"a":1}"#)
        // The listen saw the first restore come and go (the tree before it sent again), then
        // the second one.
        client.lock.lock()
        let values = client.received.compactMap { message -> String? in
            guard case .push(.data(let path, let data, nil)) = message, path == .root || path == Path("a") else { return nil }
            return "\(path) \(JSONWriter.string(data))"
        }
        client.lock.unlock()
        XCTAssertEqual(values, ["/ null", "/a 1", "/a 2", "/ {\"a\":1}", "/ {\"a\":2}", "/ {\"a\":1}"])
        // Saves wait for durability as writes do, counted alike after the refusal.
        let later = expectation(description: "saved")
        database.saveSnapshot("u") { outcome in
            if case .failure(let error) = outcome { XCTFail("\(error)") }
            later.fulfill()
        }
        wait(for: [later], timeout: 30)
    }
}
