import Foundation
import XCTest
@testable import RTDBData
@testable import RTDBServer

func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "rtdb-test-" + UUID().uuidString
    return path
}

final class StoreTests: XCTestCase {
    func append(_ store: Store, _ record: LogRecord, root: Node) {
        let done = expectation(description: "durable")
        store.append(record, root: root) { error in
            XCTAssertNil(error)
            done.fulfill()
        }
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

    func testReopenRecoversWrites() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        var root = Node.empty
        for i in 0..<100 {
            let record = LogRecord(sets: [(Path("k\(i)"), Node(Double(i)))])
            root = record.apply(to: root)
            append(store, record, root: root)
        }
        store.close()
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        store.close()
    }

    func testTornTailIsCutAndLaterWritesAppend() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        let record = LogRecord(sets: [(Path("a"), Node(1))])
        append(store, record, root: record.apply(to: .empty))
        store.close()
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
        append(store, next, root: next.apply(to: store.recoveredRoot))
        store.close()
        store = try Store(folder: folder)
        XCTAssertEqual(JSONWriter.string(store.recoveredRoot), #"{"a":1,"c":3}"#)
        store.close()
    }

    func testCompactionWritesSnapshotAndDropsOldLogs() throws {
        let folder = temporaryFolder()
        var store = try Store(folder: folder)
        store.compactionThreshold = 2000
        var root = Node.empty
        for i in 0..<400 {
            let record = LogRecord(sets: [(Path("list/k\(i)"), Node(String(repeating: "x", count: 20)))])
            root = record.apply(to: root)
            append(store, record, root: root)
        }
        store.close()
        let names = try FileIO.listDirectory(folder)
        XCTAssertTrue(names.contains { $0.hasPrefix("snapshot-") }, "\(names)")
        XCTAssertLessThanOrEqual(names.filter { $0.hasPrefix("wal-") }.count, 2, "\(names)")
        store = try Store(folder: folder)
        XCTAssertEqual(store.recoveredRoot, root)
        XCTAssertEqual(store.recoveredRoot.child("list").childCount, 400)
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
}
