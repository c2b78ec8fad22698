import Foundation
import XCTest
@testable import RTDBData
@testable import RTDBEngine
import RTDBProtocol
import Synchronization

/// Snapshots of a database: saved as files of their own, restored as one write of `/` that
/// the log holds as the snapshot's number, surviving a reopen with or without a checkpoint;
/// a removed snapshot's file goes once no log restores it.
final class SnapshotTests: XCTestCase {
    func write(_ database: Database, _ path: String, _ json: String) throws {
        let done = expectation(description: "written")
        let value = try JSONReader.parse(json)
        database.write(Path(path), value) { response in
            XCTAssertTrue(response.isOK, response.message)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
    }

    func save(_ database: Database, _ name: String) throws -> SnapshotInfo {
        let done = expectation(description: "saved")
        let result = Mutex<Result<SnapshotInfo, StoreError>?>(nil)
        database.saveSnapshot(name) { outcome in
            result.withLock { $0 = outcome }
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        return try XCTUnwrap(result.withLock { $0 }).get()
    }

    func restore(_ database: Database, _ name: String) -> Response {
        let done = expectation(description: "restored")
        let answer = Mutex<Response?>(nil)
        database.restoreSnapshot(name) { response in
            answer.withLock { $0 = response }
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        return answer.withLock { $0 } ?? .error(.writeFailed, "no answer")
    }

    func json(_ database: Database) -> String { JSONWriter.string(database.value(at: .root)) }

    func testSaveRestoreListAndRemove() throws {
        let folder = temporaryFolder()
        let database = try Database(folder: folder)
        try write(database, "/", #"{"users": {"ada": {"n": 1}, "bob": {"n": 2}}}"#)
        let saved = try save(database, "seed")
        XCTAssertEqual(saved.name, "seed")
        XCTAssertGreaterThan(saved.bytes, 0)
        try write(database, "/users/ada/n", "5")
        try write(database, "/users/cy", #"{"n": 3}"#)
        XCTAssertTrue(restore(database, "seed").isOK)
        XCTAssertEqual(json(database), #"{"users":{"ada":{"n":1},"bob":{"n":2}}}"#)
        // Writes go on from the restored tree.
        try write(database, "/users/bob/n", "7")
        XCTAssertEqual(json(database), #"{"users":{"ada":{"n":1},"bob":{"n":7}}}"#)
        XCTAssertEqual(try database.snapshots().map(\.name), ["seed"])
        XCTAssertEqual(restore(database, "nope").message, "there is no snapshot named nope")
        XCTAssertTrue(try database.removeSnapshot("seed"))
        XCTAssertFalse(try database.removeSnapshot("seed"))
        XCTAssertEqual(try database.snapshots(), [])
        database.close()
    }

    /// A restore in the log (no checkpoint since) reopens as the snapshot's tree with the
    /// writes after it. A snapshot removed while a log restores it keeps its file until a
    /// checkpoint covers that log (a crash before it leaves the file to the next open, which
    /// removes it at its first checkpoint); the tree is whole throughout.
    func testARestoreOutlivesAReopenAndACheckpoint() throws {
        let folder = temporaryFolder()
        var database: Database? = try Database(folder: folder)
        try write(database!, "/", #"{"a": 1, "list": {"x": {"v": 1}}}"#)
        _ = try save(database!, "s")
        try write(database!, "/a", "2")
        XCTAssertTrue(restore(database!, "s").isOK)
        try write(database!, "/b", "3")
        database!.store.checkpointOnClose = false  // the log stays, as a killed process leaves it
        database!.close()
        database = nil

        database = try Database(folder: folder)
        XCTAssertEqual(json(database!), #"{"a":1,"b":3,"list":{"x":{"v":1}}}"#)
        database!.store.idleCheckpointDelay = nil
        database!.store.checkpointOnClose = false
        database!.close()
        database = nil
        // Removed, as if the process were killed before the checkpoint that would free it.
        var catalog = try SnapshotCatalog.read(in: folder)
        catalog.entries = [:]
        try catalog.write(in: folder)

        database = try Database(folder: folder)
        XCTAssertEqual(snapshotFiles(folder), ["0000000001.rtdb"], "the log still restores it")
        XCTAssertEqual(json(database!), #"{"a":1,"b":3,"list":{"x":{"v":1}}}"#)
        database!.store.checkpointSoon()
        let deadline = Date().addingTimeInterval(30)
        while !snapshotFiles(folder).isEmpty && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(snapshotFiles(folder), [], "gone at the first checkpoint")
        XCTAssertEqual(json(database!), #"{"a":1,"b":3,"list":{"x":{"v":1}}}"#)
        database!.close()
        database = try Database(folder: folder)
        XCTAssertEqual(json(database!), #"{"a":1,"b":3,"list":{"x":{"v":1}}}"#)
        database!.close()
    }

    func testARestoreRecordRoundTrips() {
        let record = LogRecord(sets: [(.root, Node(1))], origin: WriteOrigin(client: "c", floor: 1), request: 4, restoring: 12)
        var bytes: [UInt8] = []
        record.encode(into: &bytes)
        XCTAssertEqual(bytes.count, LogRecord.headerSize + 4 + 8 + 4 + 1 + 16, "the number, not the tree")
        bytes.withUnsafeBytes { raw in
            guard case .record(let decoded, _) = LogRecord.decode(raw, at: 0) else { return XCTFail("not decoded") }
            XCTAssertEqual(decoded.restoring, 12)
            XCTAssertTrue(decoded.sets.isEmpty)
            XCTAssertEqual(decoded.origin, record.origin)
            XCTAssertEqual(decoded.request, 4)
        }
    }

    func testNamesAreChecked() {
        let database = try! Database(folder: temporaryFolder())
        let done = expectation(description: "refused")
        database.saveSnapshot("../x") { outcome in
            if case .failure(let error) = outcome { XCTAssertEqual("\(error)", #"invalid snapshot name "../x": use 1 to 64 letters, digits, "-" and "_""#) }
            else { XCTFail("saved") }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        database.close()
    }

    /// Saves started together get numbers of their own, and `close` waits for them: all are
    /// named, each restores its tree, after a reopen too; nothing is saved once closing began.
    func testSavesUnderWayFinishBeforeClose() throws {
        let folder = temporaryFolder()
        var database: Database? = try Database(folder: folder)
        try write(database!, "/", #"{"n": 1}"#)
        let outcomes = Mutex<[String: Result<SnapshotInfo, StoreError>]>([:])
        for name in ["a", "b", "c"] {
            database!.saveSnapshot(name) { outcome in outcomes.withLock { $0[name] = outcome } }
        }
        database!.close()
        XCTAssertEqual(outcomes.withLock { $0.keys.sorted() }, ["a", "b", "c"])
        for (name, outcome) in outcomes.withLock({ $0 }) { XCTAssertNoThrow(try outcome.get(), name) }
        let late = expectation(description: "refused")
        database!.saveSnapshot("late") { outcome in
            if case .failure(let error) = outcome { XCTAssertEqual("\(error)", "the database is closing") } else { XCTFail("saved after close") }
            late.fulfill()
        }
        wait(for: [late], timeout: 10)
        database = nil
        database = try Database(folder: folder)
        XCTAssertEqual(try database!.snapshots().map(\.name), ["a", "b", "c"])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/snapshots").filter { $0.hasSuffix(".rtdb") }
        XCTAssertEqual(files.count, 3, "one file each")
        try write(database!, "/n", "2")
        for name in ["a", "b", "c"] {
            XCTAssertTrue(restore(database!, name).isOK)
            XCTAssertEqual(json(database!), #"{"n":1}"#, name)
        }
        database!.close()
    }

    /// A catalog naming a number past ten digits is damage, said as such, not a trap.
    func testACatalogWithAnImpossibleNumberIsRefused() throws {
        let folder = temporaryFolder()
        let database = try Database(folder: folder)
        try FileManager.default.createDirectory(atPath: folder + "/snapshots", withIntermediateDirectories: true)
        try #"{"x": {"id": 1e15, "saved": 0, "bytes": 1}}"#.write(toFile: folder + "/snapshots/NAMES", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try database.snapshots()) { error in
            XCTAssertTrue("\(error)".contains(#"the entry of "x" is not {"id", "saved", "bytes"}"#), "\(error)")
        }
        database.close()
    }
    func snapshotFiles(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/snapshots")) ?? []).filter { $0.hasSuffix(".rtdb") }.sorted()
    }

    /// A file no name holds goes at once when no restore needs it (removed, or its name saved
    /// again); one a restore in the log still needs goes at the checkpoint its removal asks for.
    func testUnnamedFilesGoOnceNoRestoreNeedsThem() throws {
        let folder = temporaryFolder()
        let database = try Database(folder: folder)
        try write(database, "/", #"{"n": 1}"#)
        _ = try save(database, "a")
        _ = try save(database, "b")
        XCTAssertEqual(snapshotFiles(folder), ["0000000001.rtdb", "0000000002.rtdb"])
        XCTAssertTrue(try database.removeSnapshot("a"))
        XCTAssertEqual(snapshotFiles(folder), ["0000000002.rtdb"])
        _ = try save(database, "b")
        XCTAssertEqual(snapshotFiles(folder), ["0000000003.rtdb"], "the name saved again frees its old file")

        XCTAssertTrue(restore(database, "b").isOK)
        database.store.idleCheckpointDelay = nil  // only the checkpoint the removal asks for
        XCTAssertTrue(try database.removeSnapshot("b"))
        // The log's restore reads it until a checkpoint, which the removal asked for.
        let deadline = Date().addingTimeInterval(30)
        while !snapshotFiles(folder).isEmpty && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(snapshotFiles(folder), [])
        try write(database, "/m", "3")
        database.close()
        let reopened = try Database(folder: folder)
        XCTAssertEqual(json(reopened), #"{"m":3,"n":1}"#)
        reopened.close()
    }

    /// A restore among writes while checkpoints run in the background: the tree each
    /// checkpoint rebases onto holds it, and so does a reopen from the log, the snapshot
    /// removed meanwhile.
    func testARestoreAmongCheckpoints() throws {
        let folder = temporaryFolder()
        var database: Database? = try Database(folder: folder)
        try write(database!, "/", #"{"base": true}"#)
        _ = try save(database!, "s")
        database!.store.checkpointThreshold = 200
        let answers = Mutex<[Response]>([])
        let done = DispatchGroup()
        for i in 0..<300 {
            done.enter()
            if i == 150 {
                database!.restoreSnapshot("s") { response in answers.withLock { $0.append(response) }; done.leave() }
            } else {
                database!.write(Path("w/k\(i % 20)"), Node(Double(i))) { response in answers.withLock { $0.append(response) }; done.leave() }
            }
        }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(answers.withLock { $0.filter { !$0.isOK }.count }, 0)
        let expected = "{\"base\":true,\"w\":{" + (0..<20).map { k -> String in
            let last = (151..<300).last { $0 % 20 == k }!
            return "\"k\(k)\":\(last)"
        }.sorted().joined(separator: ",") + "}}"
        XCTAssertEqual(json(database!), expected)
        // Removed while checkpoints may still be covering the restore: its file stays for as
        // long as a log would read it.
        XCTAssertTrue(try database!.removeSnapshot("s"))
        database!.store.checkpointOnClose = false
        database!.close()
        database = try Database(folder: folder)
        XCTAssertEqual(json(database!), expected)
        database!.close()
    }

    /// A restore in a log whose snapshot file is gone stops the open, saying which; `--recover`
    /// leaves that restore out and keeps the writes around it.
    func testARestoreWhoseFileIsGoneIsSalvaged() throws {
        let folder = temporaryFolder()
        var database: Database? = try Database(folder: folder)
        try write(database!, "/", #"{"a": 1}"#)
        _ = try save(database!, "s")
        try write(database!, "/b", "2")
        XCTAssertTrue(restore(database!, "s").isOK)
        try write(database!, "/c", "3")
        database!.store.checkpointOnClose = false
        database!.close()
        database = nil
        unlink(SnapshotFile.path(in: folder, id: 1))
        XCTAssertThrowsError(try Database(folder: folder)) { error in
            XCTAssertTrue("\(error)".contains("it restores snapshot 1, which cannot be opened"), "\(error)")
        }
        let report = RecoveryReport()
        let store = try Store(folder: folder, salvage: report)
        XCTAssertEqual(report.skipped.count, 1, "\(report.skipped)")
        XCTAssertTrue(report.skipped.first?.contains("the restore at byte") ?? false, "\(report.skipped)")
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":1,"b":2,"c":3}"#)
        store.close()
    }
    /// Two saves of one name under way together: the later one's tree is kept, whichever
    /// file is written first, and the other file goes.
    func testTheLaterOfTwoSavesOfOneNameWins() throws {
        let folder = temporaryFolder()
        let database = try Database(folder: folder)
        // The first tree large, so its file takes longer to write than the second's.
        try write(database, "/", "{" + (0..<20_000).map { #""k\#($0)": \#($0)"# }.joined(separator: ",") + "}")
        let both = DispatchGroup()
        both.enter(); both.enter()
        database.saveSnapshot("s") { _ in both.leave() }
        database.write(.root, Node("small")) { _ in }
        database.saveSnapshot("s") { _ in both.leave() }
        XCTAssertEqual(both.wait(timeout: .now() + 60), .success)
        try write(database, "/", #""other""#)
        XCTAssertTrue(restore(database, "s").isOK)
        XCTAssertTrue(database.value(at: .root) == Node("small"), "the earlier save's tree was kept")
        XCTAssertEqual(snapshotFiles(folder), ["0000000002.rtdb"])
        database.close()
    }
}
