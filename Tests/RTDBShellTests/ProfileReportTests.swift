import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBShell

/// The profiler's report from a known capture: its tables' rows, paths collapsed past 25
/// siblings, and raw captures read back.
final class ProfileReportTests: XCTestCase {
    func record(_ kind: OperationRecord.Kind, _ path: String?, micros: Int = 1000, bytes: Int = 0, allowed: Bool? = true,
                unindexed: Bool = false, query: QueryParams? = nil, at: Double = 1_000_000) -> OperationRecord {
        OperationRecord(kind: kind, path: path.map { Path($0) }, query: query, timestamp: at, micros: micros, bytes: bytes,
                        client: .init(id: "c", address: "a", user: nil), allowed: allowed, unindexed: unindexed,
                        clientsUpdated: kind == .broadcast ? 2 : nil)
    }

    var capture: [OperationRecord] {
        var byAge = QueryParams()
        byAge.index = .child(Path("age"))
        var records = [record(.connect, nil, micros: 0, at: 1_000_000)]
        // 30 users written: their paths collapse into /users/$wildcard.
        for i in 0..<30 { records.append(record(.realtimeWrite, "users/u\(i)", micros: 2000, bytes: 10)) }
        records.append(record(.restWrite, "secret", micros: 500, bytes: 4, allowed: false))
        records.append(record(.listen, "users", micros: 3000, bytes: 300, unindexed: true, query: byAge))
        records.append(record(.listen, "users", micros: 1000, bytes: 300, unindexed: true, query: byAge))
        records.append(record(.realtimeRead, "config", micros: 250, bytes: 1500))
        records.append(record(.broadcast, "users/u1", micros: 100, bytes: 20, allowed: nil))
        records.append(record(.unlisten, "users", micros: 50, allowed: nil))
        records.append(record(.disconnect, nil, micros: 0, at: 1_002_500))
        return records
    }

    func report(collapse: Bool = true) -> ProfileReport {
        var report = ProfileReport(collapse: collapse)
        for record in capture { report.add(record) }
        return report
    }

    func testTheTables() {
        let tables = report().tables
        XCTAssertEqual(tables.map(\.title), ["Read Speed", "Write Speed", "Broadcast Speed", "Connect Speed", "Disconnect Speed",
                                             "Unlisten Speed", "Downloaded Bytes", "Uploaded Bytes", "Unindexed Queries"])
        XCTAssertEqual(tables[0].rows, [["/users", "2", "2 ms", "0 ms", "0"], ["/config", "1", "0.25 ms", "0 ms", "0"]])
        XCTAssertEqual(tables[1].rows, [["/users/$wildcard", "30", "2 ms", "0 ms", "0"], ["/secret", "1", "0.50 ms", "0 ms", "1"]])
        XCTAssertEqual(tables[2].rows, [["/users/u1", "1", "0.10 ms", "0 ms"]])
        XCTAssertEqual(tables[3].rows, [["1", "0 ms", "0 ms"]])
        XCTAssertEqual(tables[4].rows, [["1", "0 ms", "0 ms"]])
        XCTAssertEqual(tables[5].rows, [["/users", "1", "0.05 ms", "0 ms"]])
        XCTAssertEqual(tables[6].rows, [["/config", "1.50 kB", "1", "1.50 kB"], ["/users", "600 B", "2", "300 B"], ["/users/u1", "20 B", "1", "20 B"]])
        XCTAssertEqual(tables[7].rows, [["/users/$wildcard", "300 B", "30", "10 B"], ["/secret", "4 B", "1", "4 B"]])
        XCTAssertEqual(tables[8].rows, [["/users", "age", "2"]])
        XCTAssertEqual(report().totalMillis, 2500)
    }

    func testWithoutCollapsingAndAsText() {
        let uncollapsed = report(collapse: false).tables[1].rows
        XCTAssertEqual(uncollapsed.count, 31)
        XCTAssertEqual(uncollapsed.last, ["/secret", "1", "0.50 ms", "0 ms", "1"])
        let text = report().text()
        XCTAssertTrue(text.hasSuffix("""
            Unindexed Queries
            Path    Index  Count
            ------  -----  -----
            /users  age    2


            """), text)
        XCTAssertTrue(text.contains("""
            Broadcast Speed
            Path       Count  Average Execution Speed  Average Pending Time
            ---------  -----  -----------------------  --------------------
            /users/u1  1      0.10 ms                  0 ms

            """), text)
        XCTAssertTrue(text.hasPrefix("Report operations collected from 1970-01-01T00:16:40.000Z over 2,500 ms.\nSpeed Report\n"), text)
        let json = report().json
        XCTAssertEqual(json["totalTime"], .number(2500))
        XCTAssertEqual(json["unindexedQueries"]?["data"], .array([.array([.string("/users"), .string("age"), .string("2")])]))
        XCTAssertEqual(json["readSpeed"]?["legend"]?.array?.count, 5)
        XCTAssertTrue(ProfileReport().text().hasPrefix("Report of no operations: none was collected.\nSpeed Report\n"))
    }

    /// Numbers and sizes as the profiler writes them.
    func testNumbersAndSizes() {
        XCTAssertEqual(ProfileReport.number(1234567.891), "1,234,567.89")
        XCTAssertEqual(ProfileReport.number(3), "3")
        XCTAssertEqual(ProfileReport.number(0.5), "0.50")
        XCTAssertEqual(ProfileReport.bytes(999), "999 B")
        XCTAssertEqual(ProfileReport.bytes(6_334_876), "6.33 MB")
        XCTAssertEqual(ProfileReport.number(.infinity), "0")
    }

    /// A raw capture (one JSON object a line) or a saved stream (`data:` lines) reads back;
    /// other lines are counted, not fatal.
    func testRawCapturesReadBack() throws {
        let lines = capture.prefix(3).map { String(decoding: $0.jsonBytes, as: UTF8.self) }
        let (records, skipped) = ProfileReport.operations(inRaw: lines.joined(separator: "\n") + "\nnot json\n{\"name\":\"x\"}\n")
        XCTAssertEqual(records, Array(capture.prefix(3)))
        XCTAssertEqual(skipped, 2)
        let stream = "event: log\ndata: \(lines[1])\n\nevent: keep-alive\ndata: null\n\nevent: dropped\ndata: 3 operations were dropped\n\n"
        let read = ProfileReport.operations(inRaw: stream)
        XCTAssertEqual(read.records, [capture[1]])
        XCTAssertEqual(read.skipped, 2)
    }
}
