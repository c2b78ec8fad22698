import Foundation
import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBEngine

/// A write named by its origin is applied once, though it is sent again on a new connection
/// or to the next process to open the folder: from memory, from the log after a crash, and
/// from the head after a checkpoint.
final class ExactlyOnceTests: XCTestCase {
    let increment = Request.put(path: Path("cnt"), data: Node(.serverValue(.increment(1))), hash: nil)

    func send(_ request: Request, id: Int, origin: WriteOrigin?, to database: Database) -> Response? {
        let client = SessionTests.Client(database)
        defer { client.transport.close() }
        client.transport.send(.request(id: id, request, origin: origin))
        return client.waitFor(response: id)
    }

    func testAWriteSentAgainIsAnsweredNotAppliedAgain() throws {
        let database = try Database(folder: temporaryFolder())
        defer { database.close() }
        let origin = WriteOrigin(client: "c1", floor: 1)
        for _ in 0..<3 { XCTAssertEqual(send(increment, id: 5, origin: origin, to: database), .ok) }
        XCTAssertEqual(database.value(at: Path("cnt")), Node(1))
        // Another request of the same client, and the same request of another, are applied.
        XCTAssertEqual(send(increment, id: 6, origin: origin, to: database), .ok)
        XCTAssertEqual(send(increment, id: 5, origin: WriteOrigin(client: "c2", floor: 1), to: database), .ok)
        // Without an origin a write is always applied (the protocol of other clients).
        XCTAssertEqual(send(increment, id: 5, origin: nil, to: database), .ok)
        XCTAssertEqual(database.value(at: Path("cnt")), Node(4))
    }

    /// An origin that is out of range (only the wire's decoder checks it, not the in-process
    /// path) is no origin: the write is applied as any other, and nothing is kept of it.
    func testAnOriginOutOfRangeIsIgnored() throws {
        let database = try Database(folder: temporaryFolder())
        defer { database.close() }
        for (id, floor) in [(-1, 0), (3, 4), (1 << 62, 0)] {
            XCTAssertEqual(send(increment, id: id, origin: WriteOrigin(client: "c", floor: floor), to: database), .ok)
        }
        XCTAssertEqual(database.value(at: Path("cnt")), Node(3))
    }

    func testARefusedWriteIsCheckedAgainWhenSentAgain() throws {
        let database = try Database(folder: temporaryFolder())
        defer { database.close() }
        let origin = WriteOrigin(client: "c1", floor: 1)
        let stale = Request.put(path: Path("a"), data: Node(2), hash: "not the hash of anything")
        XCTAssertEqual(send(stale, id: 1, origin: origin, to: database)?.status, .dataStale)
        XCTAssertEqual(send(increment, id: 2, origin: origin, to: database), .ok)
        XCTAssertEqual(send(stale, id: 1, origin: origin, to: database)?.status, .dataStale, "not taken for applied")
        XCTAssertEqual(database.value(at: Path("a")), .empty)
    }

    func testTheNextOpenKnowsTheWritesInTheLog() throws {
        let folder = temporaryFolder()
        var database: Database? = try Database(folder: folder)
        database?.store.checkpointOnClose = false  // the log stays, as a killed process leaves it
        let origin = WriteOrigin(client: "c1", floor: 1)
        for id in 1...3 { XCTAssertEqual(send(increment, id: id, origin: origin, to: database!), .ok) }
        database?.close()
        database = nil
        let reopened = try Database(folder: folder)
        defer { reopened.close() }
        for id in 1...4 { XCTAssertEqual(send(increment, id: id, origin: origin, to: reopened), .ok) }
        XCTAssertEqual(reopened.value(at: Path("cnt")), Node(4))
    }

    func testACheckpointKeepsTheWritesItsLogsHeld() throws {
        let folder = temporaryFolder()
        var database: Database? = try Database(folder: folder)
        let origin = WriteOrigin(client: "c1", floor: 1)
        for id in 1...3 { XCTAssertEqual(send(increment, id: id, origin: origin, to: database!), .ok) }
        database?.close()  // checkpoints: the logs are gone, the head holds the table
        database = nil
        XCTAssertEqual(try FileIO.listDirectory(folder).filter { $0.hasPrefix("wal-") }.map { try FileIO.readFile(folder + "/" + $0).count }, [0])
        XCTAssertEqual(try FileIO.readFile(folder + "/HEAD")[8], 4)
        let reopened = try Database(folder: folder)
        defer { reopened.close() }
        for id in 1...3 { XCTAssertEqual(send(increment, id: id, origin: origin, to: reopened), .ok) }
        XCTAssertEqual(reopened.value(at: Path("cnt")), Node(3))
    }

    /// The floor lets the server forget: below it, the client never sends again.
    func testTheFloorForgetsWhatTheClientWillNotSendAgain() {
        var receipts = WriteReceipts()
        for request in 1...5 { receipts.record(WriteOrigin(client: "c", floor: 1), request: request) }
        XCTAssertEqual(receipts.clients["c"]?.applied, [1...5])
        receipts.record(WriteOrigin(client: "c", floor: 4), request: 7)
        XCTAssertEqual(receipts.clients["c"]?.applied, [4...5, 7...7])
        XCTAssertFalse(receipts.contains("c", 3))
        XCTAssertTrue(receipts.contains("c", 4))
        XCTAssertFalse(receipts.contains("c", 6))
        receipts.record(WriteOrigin(client: "c", floor: 4), request: 6)
        XCTAssertEqual(receipts.clients["c"]?.applied, [4...7])
        receipts.remove("c", 5)
        XCTAssertEqual(receipts.clients["c"]?.applied, [4...4, 6...7])
        // Everything answered: nothing is kept for the client.
        receipts.advance(to: WriteOrigin(client: "c", floor: 8))
        XCTAssertTrue(receipts.isEmpty)
    }

    func testTheLeastRecentClientsAreForgottenPastTheLimit() {
        var receipts = WriteReceipts()
        for i in 0...WriteReceipts.clientLimit { receipts.record(WriteOrigin(client: "c\(i)", floor: 0), request: 1) }
        XCTAssertEqual(receipts.clients.count, WriteReceipts.clientLimit)
        XCTAssertFalse(receipts.contains("c0", 1))
        XCTAssertTrue(receipts.contains("c1", 1))
    }

    func testTheTableReadsBackAndDamageIsRefused() throws {
        var receipts = WriteReceipts()
        receipts.record(WriteOrigin(client: "a", floor: 2), request: 2)
        receipts.record(WriteOrigin(client: "a", floor: 2), request: 9)
        receipts.record(WriteOrigin(client: "b", floor: 0), request: 1)
        let head = FolderHead(nodesID: 1, nodesLength: 64, compactedLength: 64, covered: 3, root: [1, 2], receipts: receipts)
        let bytes = head.encode()
        XCTAssertEqual(bytes[8], 4)
        XCTAssertEqual(try FolderHead.decode(bytes, path: "HEAD"), head)
        // Every cut is refused (the checksum, or the table's own lengths).
        for cut in 12..<(bytes.count - 4) {
            var short = Array(bytes[..<cut])
            LittleEndian.append(CRC32.checksum(short), to: &short)
            XCTAssertThrowsError(try FolderHead.decode(short, path: "HEAD"), "cut at \(cut)")
        }
    }

    func testALogRecordKeepsItsOriginAndAnOlderReaderSkipsIt() throws {
        let record = LogRecord(sets: [(Path("a"), Node(1))], origin: WriteOrigin(client: "client-1", floor: 3), request: 8)
        var bytes: [UInt8] = []
        record.encode(into: &bytes)
        bytes.withUnsafeBytes { raw in
            guard case .record(let decoded, _) = LogRecord.decode(raw, at: 0) else { return XCTFail("not decoded") }
            XCTAssertEqual(decoded, record)
        }
        var plain: [UInt8] = []
        LogRecord(sets: record.sets).encode(into: &plain)
        // The sets come first, as before origins were kept: what an older rtdb reads.
        XCTAssertEqual(Array(bytes[8..<plain.count]), Array(plain[8...]))
    }
}
