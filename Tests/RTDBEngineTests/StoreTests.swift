import Foundation
import XCTest
@testable import RTDBData
@testable import RTDBEngine
import RTDBProtocol

func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "rtdb-test-" + UUID().uuidString
    return path
}

final class StoreTests: XCTestCase {
    /// Appends `record` as a database does: `root` is the tree with it applied.
    func append(_ store: Store, _ record: LogRecord, root: Node) {
        let done = expectation(description: "durable")
        store.append([(record, { @Sendable error in
            XCTAssertNil(error)
            done.fulfill()
        })]) { (root, QueryIndexes()) }
        wait(for: [done], timeout: 10)
    }

    func testRecordRoundTrip() throws {
        let record = LogRecord(sets: [(Path("a/b"), try JSONReader.parse(#"{"x": {".value": 1, ".priority": "p"}, "y": [1, 2]}"#)),
                                      (Path(""), .empty)])
        var bytes: [UInt8] = []
        record.encode(into: &bytes)
        bytes.withUnsafeBytes { raw in
            guard case .record(let decoded, let next) = LogRecord.decode(raw, at: 0) else { return XCTFail("not decoded") }
            XCTAssertEqual(decoded, record)
            XCTAssertEqual(next, bytes.count)
        }
        // Every truncation and every flipped byte is detected, never misread.
        for cut in 0..<bytes.count {
            Array(bytes[0..<cut]).withUnsafeBytes { raw in
                if case .record = LogRecord.decode(raw, at: 0) { XCTFail("truncated at \(cut) decoded") }
            }
        }
        for i in 0..<bytes.count {
            var damaged = bytes
            damaged[i] ^= 0x40
            damaged.withUnsafeBytes { raw in
                if case .record(let r, _) = LogRecord.decode(raw, at: 0), r != record { XCTFail("flip at \(i) misread") }
            }
        }
    }

    /// A record holding a big document's text is written in pieces: the same bytes as
    /// encoded whole, and through the store, the same value when read back.
    func testARecordOfABigDocumentIsWrittenInPieces() throws {
        let list = Array(("[" + (0..<300_000).map(String.init).joined(separator: ",") + "]").utf8)
        let objects = Array(("{" + (0..<20).map { "\"k\($0)\": {\"n\": \($0)}" }.joined(separator: ", ") + "}").utf8)
        var options = JSONReader.Options()
        options.documentsFrom = 0
        let record = LogRecord(sets: [(Path("list"), try JSONReader.parse(data: list)),
                                      (Path("objects"), try JSONReader.parse(data: objects, options: options)),
                                      (Path("leaf"), Node("x"))],
                               origin: WriteOrigin(client: "c1", floor: 3), request: 7)
        XCTAssertTrue(record.isLarge)
        XCTAssertFalse(LogRecord(sets: [(Path("objects"), try JSONReader.parse(data: objects, options: options))]).isLarge)
        var whole: [UInt8] = []
        record.encode(into: &whole)
        var pieces: [UInt8] = []
        var count = 0
        let written = try record.write { piece in
            pieces.append(contentsOf: piece)
            count += 1
        }
        XCTAssertEqual(pieces, whole)
        XCTAssertEqual(written, whole.count)
        XCTAssertGreaterThan(count, 10, "never whole")
        // The list went as its text (plain, shorter than the export form's object).
        XCTAssertLessThan(whole.count, list.count + 1000)

        let folder = temporaryFolder()
        let store = try Store(folder: folder)
        store.checkpointOnClose = false
        var root = Node.empty
        root.merge(record.sets)
        append(store, LogRecord(sets: [(Path("before"), Node(1))]), root: root)
        append(store, record, root: root)
        append(store, LogRecord(sets: [(Path("after"), Node(2))]), root: root)
        store.close()
        var expected = root
        expected.merge([(Path("before"), Node(1)), (Path("after"), Node(2))])
        let reopened = try Store(folder: folder)
        XCTAssertEqual(reopened.recoveredRoot, expected)
        reopened.close()
    }

    func testReopenRecoversWrites() throws {
        for keepingTheLog in [false, true] {
            let (folder, root) = try makeLog(100, keepingTheLog: keepingTheLog)
            let store = try Store(folder: folder)
            XCTAssertEqual(store.recoveredRoot, root)
            store.close()
        }
    }

    func testTornTailIsCutAndLaterWritesAppend() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.checkpointOnClose = false  // the log stays, as a killed process leaves it
        let record = LogRecord(sets: [(Path("a"), Node(1))])
        append(store, record, root: record.apply(to: .empty))
        store.close(root: record.apply(to: .empty), indexes: QueryIndexes())
        // A crash in the middle of the next record: half its bytes reached the file.
        let wal = folder + "/" + Store.walName(1)
        var partial: [UInt8] = []
        LogRecord(sets: [(Path("b"), Node(2))]).encode(into: &partial)
        let handle = FileHandle(forWritingAtPath: wal)!
        handle.seekToEndOfFile()
        handle.write(Data(partial.prefix(partial.count / 2)))
        handle.closeFile()

        store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":1}"#)
        let next = LogRecord(sets: [(Path("c"), Node(3))])
        let after = next.apply(to: store.recoveredRoot)
        append(store, next, root: after)
        store.close(root: after, indexes: QueryIndexes())
        store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":1,"c":3}"#)
        store.close()
    }

    func testCheckpointStoresTheTreeAndDropsOldLogs() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.checkpointThreshold = 2000
        var root = Node.empty
        for i in 0..<400 {
            let record = LogRecord(sets: [(Path("list/k\(i)"), Node(String(repeating: "x", count: 20)))])
            root = record.apply(to: root)
            append(store, record, root: root)
        }
        store.close(root: root, indexes: QueryIndexes())
        let names = try FileIO.listDirectory(folder)
        XCTAssertTrue(names.contains("HEAD") && names.contains(Store.nodesName(1)), "\(names)")
        XCTAssertLessThanOrEqual(names.filter { $0.hasPrefix("wal-") }.count, 2, "\(names)")
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        XCTAssertEqual(store.recoveredRoot.child("list").childCount, 400)
        store.close()
    }

    /// The entries of an index, as (key, ordering value) text.
    func entries(_ index: QueryIndex?) -> [String] {
        index.map { $0.entries.map { "\($0.key.name)=\(JSONWriter.string($0.value))" } } ?? []
    }

    /// Writes keep coming while checkpoints run: each checkpoint's tree and query index, with
    /// the records appended since applied again (in the background, then the rest on the
    /// owner's queue as the database does), are the owner's, and what the next checkpoint
    /// stores from; the index the last one stored opens with the folder.
    func testRebasedTreeHoldsEveryWriteMadeDuringCheckpoints() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.checkpointThreshold = 1000
        let owner = DispatchQueue(label: "owner")  // the database's queue
        nonisolated(unsafe) var root = Node.empty
        let key = QueryIndexes.key(Path("list"), .value)
        nonisolated(unsafe) var indexes = QueryIndexes()
        indexes[key] = QueryIndex(path: Path("list"), index: .value, node: .empty)
        nonisolated(unsafe) var rebases = 0
        nonisolated(unsafe) var storedIndexes = 0
        store.callbacks.onCheckpoint = { [unowned store] replayed, replayedIndexes, through, marker in
            // Records appended between the replay and the owner's turn are `rebase`'s to apply.
            Thread.sleep(forTimeInterval: 0.01)
            owner.sync {
                if replayedIndexes[key]?.isStored == true { storedIndexes += 1 }
                (root, indexes) = store.rebase(replayed, indexes: replayedIndexes, through: through, marker: marker, live: indexes)
                rebases += 1
            }
        }
        var expected = Node.empty
        // One at a time, each durable before the next (a sync per record), so that writes
        // go on through every checkpoint.
        for i in 0..<400 {
            let record = LogRecord(sets: [(Path("list/k\(i % 70)"), Node(String(repeating: "z", count: i % 37 + 1)))])
            expected = record.apply(to: expected)
            let durable = DispatchSemaphore(value: 0)
            owner.sync {
                Store.apply(record, to: &root, &indexes)
                store.append([(record, { @Sendable error in
                    XCTAssertNil(error)
                    durable.signal()
                })]) { (root, indexes) }
            }
            XCTAssertEqual(durable.wait(timeout: .now() + 10), .success)
        }
        let closing = owner.sync {
            store.beginClose()
            return (root, indexes)
        }
        store.finishClose(root: closing.0, indexes: closing.1)
        let built = QueryIndex(path: Path("list"), index: .value, node: expected.child("list"))
        XCTAssertEqual(built.count, 70)
        owner.sync {
            XCTAssertGreaterThan(rebases, 0)
            XCTAssertGreaterThan(storedIndexes, 0)
            XCTAssertEqual(JSONWriter.string(root), JSONWriter.string(expected))
            XCTAssertEqual(entries(indexes[key]), entries(built))
        }
        store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), JSONWriter.string(expected))
        XCTAssertEqual(store.recoveredIndexes[key]?.isStored, true)
        XCTAssertEqual(entries(store.recoveredIndexes[key]), entries(built))
        store.close()
    }

    /// A store left idle checkpoints its log by itself: the database rebases on the stored
    /// tree (its memory no longer holds the writes), and the next open replays nothing.
    /// A failed write's refusal, which a network client reads, names no file.
    func testWhatAClientIsToldOfAStoreErrorHasNoPaths() {
        let errors: [StoreError] = [.io(operation: "write", path: "/srv/data/db/wal-12", errno: ENOSPC),
                                    .corrupt(file: "/srv/data/db/HEAD", offset: 3, reason: "checksum mismatch"),
                                    .unsalvageable(file: "/srv/data/db/HEAD", offset: 3, reason: "checksum mismatch"),
                                    .folderInUse(folder: "/srv/data/db", pid: "12"), .failed("the database is closed")]
        XCTAssertEqual(errors.map(\.clientDescription), [
            "cannot write the database's files: No space left on device", "the database's files are damaged",
            "the database's files are damaged", "the data folder is in use by another rtdb process", "the database is closed",
        ])
    }

    func testIdleStoreCheckpointsItsLog() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.idleCheckpointDelay = 0.2
        store.idleCheckpointMinimum = 0
        store.checkpointOnClose = false  // so the checkpoint below can only be the idle one
        let stored = expectation(description: "checkpointed with every write")
        nonisolated(unsafe) var rebased: Node?
        nonisolated(unsafe) var root = Node.empty
        // The database's part: asked for its tree, it offers it.
        store.callbacks.onSnapshotWanted = { [unowned store] in store.offer(root: root, indexes: QueryIndexes()) }
        store.callbacks.onCheckpoint = { [unowned store] replayed, indexes, through, marker in
            let result = store.rebase(replayed, indexes: indexes, through: through, marker: marker, live: QueryIndexes())
            if marker == 3 {
                rebased = result.root
                stored.fulfill()
            }
        }
        for i in 0..<3 {
            let record = LogRecord(sets: [(Path("k\(i)"), Node(String(repeating: "v", count: 100)))])
            root = record.apply(to: root)
            append(store, record, root: root)
        }
        wait(for: [stored], timeout: 30)
        store.close(root: root, indexes: QueryIndexes())
        XCTAssertEqual(rebased.map { JSONWriter.string($0) }, JSONWriter.string(root))
        let names = try FileIO.listDirectory(folder)
        XCTAssertTrue(names.contains("HEAD"), "\(names)")
        XCTAssertFalse(names.contains(Store.walName(1)), "the log it covered is removed: \(names)")
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        store.close()
    }

    /// A checkpoint offered while a round is still in its loop, and a record appended before
    /// that loop ends: the record goes to the log the checkpoint would cover, so the
    /// checkpoint waits for a tree that holds it; a crash after loses nothing.
    func testARecordAppendedBehindAnOfferedCheckpointIsKept() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.checkpointOnClose = false  // the logs as a killed process leaves them
        nonisolated(unsafe) var root = Node.empty
        let first = LogRecord(sets: [(Path("a"), Node(1))]), second = LogRecord(sets: [(Path("b"), Node(2))])
        let both = expectation(description: "both durable")
        both.expectedFulfillmentCount = 2
        nonisolated(unsafe) var offered = false
        store.callbacks.onSnapshotWanted = { [unowned store] in store.offer(root: root, indexes: QueryIndexes()) }
        store.callbacks.onCheckpoint = { [unowned store] replayed, indexes, through, marker in
            _ = store.rebase(replayed, indexes: indexes, through: through, marker: marker, live: QueryIndexes())
        }
        // In the first round's loop, after its write: the tree as of it is offered, then the
        // second record is appended, which that same loop writes next.
        store.callbacks.onDurable = { [unowned store] through in
            guard through == 1, !offered else { return }
            offered = true
            store.requestSnapshot()
            root = second.apply(to: root)
            store.append([(second, { @Sendable error in XCTAssertNil(error); both.fulfill() })]) { (root, QueryIndexes()) }
        }
        root = first.apply(to: root)
        store.append([(first, { @Sendable error in XCTAssertNil(error); both.fulfill() })]) { (root, QueryIndexes()) }
        wait(for: [both], timeout: 10)
        store.close(root: root, indexes: QueryIndexes())
        store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":1,"b":2}"#)
        store.close()
    }

    func testSecondOwnerIsRefused() throws {
        let folder = temporaryFolder()
        let store = try Store(folder: folder)
        XCTAssertThrowsError(try Store(folder: folder)) { error in
            guard case StoreError.folderInUse(let f, let pid) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(f, folder)
            XCTAssertEqual(pid, String(getpid()))
            XCTAssertTrue("\(error)".contains("is in use by another rtdb process (pid \(getpid()))"))
        }
        store.close()
        XCTAssertNoThrow(try Store(folder: folder).close())
    }

    func testUnwritableFolderIsAClearError() {
        XCTAssertThrowsError(try Store(folder: "/proc/rtdb-cannot-be-here")) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot create the folder /proc/rtdb-cannot-be-here"), "\(error)")
        }
    }

    /// Writes `count` one-key records and closes: a log to damage.
    /// A folder with `count` writes (`k0`: 0, …); with `keepingTheLog` it is closed as a killed
    /// process leaves it (no checkpoint), otherwise checkpointed into the node file.
    func makeLog(_ count: Int, keepingTheLog: Bool = true) throws -> (String, Node) {
        let folder = temporaryFolder()
        let store = try Store(folder: folder)
        store.checkpointOnClose = !keepingTheLog
        var root = Node.empty
        for i in 0..<count {
            let record = LogRecord(sets: [(Path("k\(i)"), Node(Double(i)))])
            root = record.apply(to: root)
            append(store, record, root: root)
        }
        store.close(root: root, indexes: QueryIndexes())
        return (folder, root)
    }

    /// One flipped byte early in a log, good records after it: that is damage, not a torn
    /// tail. The open stops, names the file and the offset, and changes no file.
    func testDamageBeforeGoodRecordsStopsTheOpenAndTouchesNothing() throws {
        let (folder, _) = try makeLog(100)
        let wal = folder + "/" + Store.walName(1)
        var bytes = try FileIO.readFile(wal)
        bytes[LogRecord.headerSize + 6] ^= 0x01  // inside the first record's payload
        try Data(bytes).write(to: URL(fileURLWithPath: wal))
        XCTAssertThrowsError(try Store(folder: folder)) { error in
            guard case StoreError.corrupt(let file, let offset, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(file, wal)
            XCTAssertEqual(offset, 0)
            XCTAssertTrue(reason.hasPrefix("checksum mismatch, and readable records follow at byte "), reason)
            XCTAssertTrue("\(error)".contains("--recover"))
        }
        XCTAssertEqual(try FileIO.readFile(wal), bytes, "the log is untouched")
        XCTAssertEqual(try FileIO.listDirectory(folder).sorted(), ["LOCK", Store.walName(1)].sorted())

        // Salvage keeps the 99 records that can be read and sets the damaged file aside.
        let report = RecoveryReport()
        let salvaged = try Store(folder: folder, salvage: report)
        XCTAssertEqual(salvaged.recoveredRoot.childCount, 99)
        XCTAssertTrue(salvaged.recoveredRoot.child("k0").isEmpty)
        XCTAssertEqual(salvaged.recoveredRoot.child("k99"), Node(99))
        XCTAssertEqual(report.records, 99)
        XCTAssertEqual(report.skipped.count, 1, "\(report.skipped)")
        let aside = try XCTUnwrap(report.movedTo)
        XCTAssertEqual(try FileIO.readFile(aside + "/" + Store.walName(1)), bytes)
        salvaged.close()
        let reopened = try Store(folder: folder)
        XCTAssertEqual(reopened.recoveredRoot.childCount, 99)
        reopened.close()
    }

    /// Zeros or garbage after the last whole record (a write cut short) are cut, as before.
    func testGarbageAtTheEndIsATornTail() throws {
        let (folder, root) = try makeLog(10)
        let wal = folder + "/" + Store.walName(1)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: wal))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0, count: 5000))
        handle.write(Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }))
        handle.closeFile()
        let store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        store.close()
    }

    /// A snapshot that an earlier version wrote with a non-finite number (`inf`) cannot be
    /// opened; salvage leaves that number out and keeps the rest.
    func testSnapshotWithInfinityIsSalvaged() throws {
        let folder = temporaryFolder()
        try FileIO.makeDirectories(folder)
        try Data(#"{"a":1,"b":inf,"c":{"d":-inf,"e":nan,"f":"x"}}"#.utf8).write(to: URL(fileURLWithPath: folder + "/" + Store.snapshotName(1)))
        XCTAssertThrowsError(try Store(folder: folder))
        let report = RecoveryReport()
        let store = try Store(folder: folder, salvage: report)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":1,"c":{"f":"x"}}"#)
        store.close()
        let reopened = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(reopened.recoveredRoot), #"{"a":1,"c":{"f":"x"}}"#)
        reopened.close()
    }

    /// A whole record that cannot be read (an older version's `inf`) is damage even at the
    /// very end of the newest log: never cut silently. Salvage leaves it out and keeps the
    /// damaged file whole beside the others.
    func testUnreadableLastRecordIsDamageNotATornTail() throws {
        let (folder, root) = try makeLog(3)
        let wal = folder + "/" + Store.walName(1)
        var payload: [UInt8] = []
        LittleEndian.append(UInt32(1), to: &payload)
        LittleEndian.append(UInt32(1), to: &payload)
        payload.append(UInt8(ascii: "n"))
        LittleEndian.append(UInt32(3), to: &payload)
        payload.append(contentsOf: Array("inf".utf8))
        var record: [UInt8] = []
        LittleEndian.append(UInt32(payload.count), to: &record)
        payload.withUnsafeBytes { LittleEndian.append(CRC32.checksum($0), to: &record) }
        let original = try FileIO.readFile(wal)
        try Data(original + record + payload).write(to: URL(fileURLWithPath: wal))
        XCTAssertThrowsError(try Store(folder: folder)) { error in
            XCTAssertTrue("\(error)".contains("damaged at byte \(original.count): a whole record that cannot be read"), "\(error)")
        }
        let report = RecoveryReport()
        let store = try Store(folder: folder, salvage: report)
        XCTAssertEqual(store.recoveredRoot, root)
        XCTAssertEqual(try FileIO.readFile(try XCTUnwrap(report.movedTo) + "/" + Store.walName(1)), original + record + payload)
        store.close()
    }

    /// A damaged head stops the open, changing nothing, and says that --recover rebuilds it
    /// from its copy; --recover does, with nothing lost; the folder then opens as before.
    func testDamagedHeadIsRebuiltFromItsCopy() throws {
        let (folder, root) = try makeLog(30, keepingTheLog: false)
        let headPath = folder + "/HEAD"
        var damaged = try FileIO.readFile(headPath)
        damaged[20] ^= 0x01
        try Store.writeFile(headPath, damaged)
        XCTAssertThrowsError(try Store(folder: folder)) { error in
            guard case StoreError.corrupt(let file, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(file, headPath)
            XCTAssertTrue("\(error)".contains("checksum mismatch (its copy, HEAD.copy, reads, and --recover rebuilds the head from it). Nothing was changed"), "\(error)")
        }
        XCTAssertEqual(try FileIO.readFile(headPath), damaged)

        let report = RecoveryReport()
        let salvaged = try Store(folder: folder, salvage: report)
        XCTAssertEqual(salvaged.recoveredRoot, root)
        salvaged.close()
        XCTAssertTrue(report.skipped.isEmpty, "\(report.skipped)")
        XCTAssertEqual(report.summary.components(separatedBy: "\n").last, "0 log records kept; nothing left out")
        XCTAssertTrue(report.summary.hasPrefix("\(headPath) (damaged at byte "), report.summary)
        XCTAssertTrue(report.summary.contains(": checksum mismatch) was rebuilt from its copy, HEAD.copy\n"), report.summary)
        XCTAssertEqual(try FileIO.readFile(headPath), try FileIO.readFile(folder + "/" + Store.headCopyName))
        let store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        store.close()
    }

    /// A head and its copy both damaged (or the head gone and its copy damaged): nothing can
    /// rebuild the tree's root, so neither an open nor --recover offers to.
    func testHeadAndCopyBothDamagedIsNotOfferedRecovery() throws {
        let (folder, _) = try makeLog(5, keepingTheLog: false)
        let headPath = folder + "/HEAD", copyPath = folder + "/" + Store.headCopyName
        var copy = try FileIO.readFile(copyPath)
        copy[0] ^= 0x01
        try Store.writeFile(copyPath, copy)
        for removingTheHead in [false, true] {
            if removingTheHead {
                unlink(headPath)
            } else {
                var head = try FileIO.readFile(headPath)
                head[30] ^= 0x01
                try Store.writeFile(headPath, head)
            }
            for salvage in [nil, RecoveryReport()] {
                XCTAssertThrowsError(try Store(folder: folder, salvage: salvage)) { error in
                    guard case StoreError.unsalvageable(let file, _, let reason) = error else { return XCTFail("\(error)") }
                    XCTAssertEqual(file, headPath)
                    XCTAssertEqual(reason, removingTheHead ? "the file is missing; its copy cannot stand in for it: \(copyPath) is damaged at byte 0: not an rtdb head file"
                                                                  : "checksum mismatch; its copy cannot stand in for it: \(copyPath) is damaged at byte 0: not an rtdb head file")
                    XCTAssertTrue("\(error)".hasSuffix("Nothing was changed; --recover cannot rebuild this folder: restore it from a backup"), "\(error)")
                }
            }
        }
        XCTAssertEqual(try FileIO.readFile(copyPath), copy)
    }

    /// A head and its copy both gone while the node file is there (and the first log, which
    /// would hold everything, is not): the open refuses, rather than open an empty database
    /// and delete the node file as a leftover.
    func testNodeFileWithoutAnyHeadIsNotOpenedAsEmpty() throws {
        let (folder, _) = try makeLog(5, keepingTheLog: false)
        unlink(folder + "/HEAD")
        unlink(folder + "/" + Store.headCopyName)
        let before = try FileIO.listDirectory(folder).sorted()
        XCTAssertTrue(before.contains(Store.nodesName(1)) && !before.contains(Store.walName(1)), "\(before)")
        for salvage in [nil, RecoveryReport()] {
            XCTAssertThrowsError(try Store(folder: folder, salvage: salvage)) { error in
                XCTAssertEqual("\(error)", "\(folder)/HEAD is damaged at byte 0: the file is missing, and so is its copy (HEAD.copy); without them the node file cannot be read. Nothing was changed; --recover cannot rebuild this folder: restore it from a backup")
            }
        }
        XCTAssertEqual(try FileIO.listDirectory(folder).sorted(), before)
    }

    /// A head a newer rtdb wrote is not damage: the open says so, whatever the copy holds.
    func testHeadOfANewerVersionIsNotCalledDamaged() throws {
        let (folder, _) = try makeLog(5, keepingTheLog: false)
        var head = try FileIO.readFile(folder + "/HEAD")
        head[8] = 99
        let end = head.count - 4
        let crc = CRC32.checksum(Array(head[..<end]))
        for i in 0..<4 { head[end + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        try Store.writeFile(folder + "/HEAD", head)
        try Store.writeFile(folder + "/" + Store.headCopyName, head)
        XCTAssertThrowsError(try Store(folder: folder)) { error in
            guard case StoreError.corrupt(_, 8, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(reason, "format version 99, which this rtdb does not know (it reads versions 2 to 4); a newer rtdb wrote it")
        }
    }

    /// A folder checkpointed before heads had copies, or by a process that died between
    /// writing the head and its copy, has its copy written (again) at the next open.
    func testMissingOrStaleHeadCopyIsWrittenAtOpen() throws {
        let (folder, root) = try makeLog(5, keepingTheLog: false)
        let copyPath = folder + "/" + Store.headCopyName
        let head = try FileIO.readFile(folder + "/HEAD")
        for stale in [nil, Array(head.dropLast())] {
            if let stale { try Store.writeFile(copyPath, stale) } else { unlink(copyPath) }
            let store = try Store(folder: folder)
            XCTAssertEqual(store.recoveredRoot, root)
            XCTAssertEqual(try FileIO.readFile(copyPath), head)
            store.close()
        }
    }

    /// A folder of the first format (a JSON snapshot and the logs after it) is converted on
    /// open: the same data, now in a node file named by a head, with the old files gone.
    func testFirstFormatFolderIsConvertedOnOpen() throws {
        let folder = temporaryFolder()
        try FileIO.makeDirectories(folder)
        try Data(#"{"a":{"b":1,"c":[1,2]},"d":"x"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/" + Store.snapshotName(3)))
        var log: [UInt8] = []
        LogRecord(sets: [(Path("a/b"), Node(2))]).encode(into: &log)
        LogRecord(sets: [(Path("e"), Node(true)), (Path("d"), .empty)]).encode(into: &log)
        try Data(log).write(to: URL(fileURLWithPath: folder + "/" + Store.walName(4)))
        let expected = #"{"a":{"b":2,"c":[1,2]},"e":true}"#
        var store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), expected)
        XCTAssertEqual(try FileIO.listDirectory(folder).sorted(), ["HEAD", Store.headCopyName, "LOCK", Store.nodesName(1), Store.walName(5)])
        let record = LogRecord(sets: [(Path("f"), Node(1))])
        let after = record.apply(to: store.recoveredRoot)
        append(store, record, root: after)
        store.close(root: after, indexes: QueryIndexes())
        store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":{"b":2,"c":[1,2]},"e":true,"f":1}"#)
        store.close()
    }

    /// Checkpoints append to the node file until it has grown to twice its size at its last
    /// full copy (plus the slack); then the next one copies the live tree to a new file.
    func testGrownNodeFileIsCopiedToANewOne() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.checkpointThreshold = 1000
        store.compactionSlack = 20_000
        var root = Node.empty
        for round in 0..<300 {
            let record = LogRecord(sets: [(Path("list/k\(round % 40)"), Node(String(repeating: "y", count: round % 50)))])
            root = record.apply(to: root)
            append(store, record, root: root)
        }
        store.close(root: root, indexes: QueryIndexes())
        let names = try FileIO.listDirectory(folder)
        let nodes = names.compactMap { Store.sequence($0, prefix: "nodes-", suffix: ".rtdb") }
        XCTAssertEqual(nodes.count, 1, "\(names)")
        XCTAssertGreaterThan(nodes[0], 1, "a full copy happened: \(names)")
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        store.close()
    }

    /// A damaged branch in the node file reads as a stand-in (the open does not read it);
    /// `--recover` walks the whole tree, leaves the damaged branch out, keeps the rest and
    /// sets the old files aside.
    func testDamagedNodeFileIsSalvaged() throws {
        let (folder, root) = try makeLog(50, keepingTheLog: false)
        let path = folder + "/" + Store.nodesName(1)
        var bytes = try FileIO.readFile(path)
        bytes[NodeFile.headerSize + 12] ^= 0x01  // the first record (a leaf's branch)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot.child("k0"), .empty)
        XCTAssertEqual(store.recoveredRoot.child("k1"), Node(1))
        XCTAssertTrue(JSONWriter.string(store.recoveredRoot).contains(#"".damaged-16":"unreadable""#))
        store.close()
        let report = RecoveryReport()
        store = try Store(folder: folder, salvage: report)
        XCTAssertEqual(report.skipped.count, 1, "\(report.skipped)")
        XCTAssertTrue(report.skipped[0].contains("damaged at byte 16: checksum mismatch"), report.skipped[0])
        XCTAssertEqual(try FileIO.readFile(try XCTUnwrap(report.movedTo) + "/" + Store.nodesName(1)), bytes)
        XCTAssertEqual(store.recoveredRoot.childCount, 49)
        store.close()
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root.setting(Path("k0"), to: .empty))
        store.close()
    }
}
