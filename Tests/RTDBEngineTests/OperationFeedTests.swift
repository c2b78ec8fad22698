import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBRules
import Synchronization
@testable import RTDBEngine

/// A database's operations as its monitors hear them: each realtime request once answered,
/// with its bytes, verdict and index; a write's broadcast; a connection's start and end; and
/// a monitor that falls behind loses operations, told how many, without holding anyone up.
final class OperationFeedTests: XCTestCase {
    /// Collects what a subscription hears.
    final class Heard: Sendable {
        let records = Mutex<[OperationRecord]>([])
        let dropped = Mutex(0)
    }

    func testRealtimeRequestsBroadcastsAndConnections() throws {
        let database = try Database(folder: temporaryFolder(), clock: { 1000 })
        defer { database.close() }
        database.replaceRules(try SecurityRules(parsing: #"{"rules": {"pub": {".read": true, ".write": true, ".indexOn": ["n"]}, "locked": {".read": false, ".write": false}}}"#))
        let heard = Heard()
        let subscription = database.operations.subscribe { records, dropped in
            heard.records.withLock { $0 += records }
            heard.dropped.withLock { $0 += dropped }
        }
        let listener = SessionTests.Client(database, identity: .anonymous)
        listener.request(1, .listen(path: Path("pub"), query: nil, tag: nil, hash: ""))
        XCTAssertEqual(listener.waitFor(response: 1), .ok)
        let client = SessionTests.Client(database, identity: .anonymous)
        client.request(1, .put(path: Path("pub/a"), data: try JSONReader.parse(#"{"n": 1}"#), hash: nil))
        client.request(2, .merge(path: Path("pub"), data: [UpdateEntry(Path("b/n"), Node(2.0))]))
        client.request(3, .get(path: Path("pub"), query: nil))
        // With a limit: a query that uses an index (one with neither a limit nor a range reads
        // the whole location).
        let byAge = QueryParams().ordered(by: .child(Path("age"))).limitToFirst(5)
        client.request(4, .get(path: Path("pub"), query: byAge))
        client.request(5, .put(path: Path("locked/x"), data: Node(1.0), hash: nil))
        // A compare-and-set: a transaction's write.
        client.request(6, .put(path: Path("pub/t"), data: Node(1.0), hash: Node.empty.hashString))
        for id in 1...6 { XCTAssertNotNil(client.waitFor(response: id)) }
        client.transport.close()
        let deadline = Date().addingTimeInterval(10)
        while heard.records.withLock({ $0.filter { $0.kind == .disconnect }.count }) < 1 && Date() < deadline { usleep(5_000) }
        subscription.cancel()

        let lines = heard.records.withLock { $0 }.map { record -> String in
            var text = record.kind.rawValue + " " + (record.path?.description ?? "-")
            if let query = record.query { text += " " + query.identifier }
            text += " \(record.bytes) B"
            if let allowed = record.allowed { text += allowed ? " allowed" : " denied" }
            if record.unindexed { text += " unindexed" }
            if let count = record.clientsUpdated { text += " to \(count)" }
            if let user = record.client?.user { text += " as \(user)" }
            return text
        }
        // Writes are told once durable, so after the reads that followed them.
        XCTAssertEqual(lines.sorted(), [
            "concurrent-connect - 0 B",
            "concurrent-connect - 0 B",
            "concurrent-disconnect - 0 B",
            "listener-broadcast /pub/a 7 B to 1",
            "listener-broadcast /pub/b/n 1 B to 1",
            "listener-broadcast /pub/t 1 B to 1",
            "listener-listen /pub 4 B allowed",
            #"realtime-read /pub 25 B allowed"#,
            #"realtime-read /pub {"i":"age","l":5,"vf":"l"} 25 B allowed unindexed"#,
            "realtime-transaction /pub/t 1 B allowed",
            "realtime-update /pub 13 B allowed",
            "realtime-write /locked/x 1 B denied",
            "realtime-write /pub/a 7 B allowed",
        ], "\(lines)")
        XCTAssertEqual(heard.dropped.withLock { $0 }, 0)
        XCTAssertFalse(database.operations.isWatched)
    }

    /// A monitor that does not keep up: past its capacity the operations are counted, not
    /// kept, and the count comes with the next batch.
    func testAMonitorThatFallsBehindLosesOperationsAndIsTold() {
        let feed = OperationFeed()
        let heard = Heard()
        let held = DispatchSemaphore(value: 0), first = DispatchSemaphore(value: 0)
        let calls = Mutex(0)
        let subscription = feed.subscribe(capacity: 3) { records, dropped in
            if calls.withLock({ $0 += 1; return $0 }) == 1 {
                first.signal()
                held.wait()
            }
            heard.records.withLock { $0 += records }
            heard.dropped.withLock { $0 += dropped }
        }
        func record(_ n: Int) -> OperationRecord {
            OperationRecord(kind: .restRead, path: Path("k\(n)"), timestamp: Double(n), micros: 0, bytes: n, client: nil)
        }
        feed.publish(record(0))
        first.wait()  // the monitor is busy with the first one
        for n in 1...10 { feed.publish(record(n)) }
        held.signal()
        let deadline = Date().addingTimeInterval(10)
        while heard.records.withLock({ $0.count }) < 4 && Date() < deadline { usleep(5_000) }
        XCTAssertEqual(heard.records.withLock { $0.map(\.bytes) }, [0, 1, 2, 3])
        XCTAssertEqual(heard.dropped.withLock { $0 }, 7)
        subscription.cancel()
        XCTAssertFalse(feed.isWatched)
        feed.publish(record(11))  // nobody to hand it to
    }
}
