import Foundation
import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBShell

/// A monitor's lines, for a person and for programs.
final class OperationFormatterTests: XCTestCase {
    let write = OperationRecord(kind: .realtimeWrite, path: Path("users/ada"), timestamp: 1_795_000_000_250, micros: 180, bytes: 27,
                                client: .init(id: "c4Xk2QabcdefGHIJ", address: "127.0.0.1:51234", user: "ada"), allowed: true)

    /// The text after the time (the time is local).
    func tail(_ line: String) -> String { String(line.dropFirst("12:00:01.250".count)) }

    func testLinesForAPerson() {
        let plain = OperationFormatter(json: false, color: false)
        XCTAssertEqual(tail(plain.line(write)), "  c4Xk2Q 127.0.0.1:51234 ada  realtime-write /users/ada  in 27 B  180 µs  allowed")
        var query = QueryParams()
        query.index = .child(Path("age"))
        query.limit = 2
        let read = OperationRecord(kind: .restRead, path: Path("users"), query: query, timestamp: 0, micros: 1500, bytes: 2048,
                                   client: .init(id: "rest", address: "[::1]:4000", user: nil), allowed: false, unindexed: true)
        XCTAssertEqual(tail(plain.line(read)), #"  rest [::1]:4000 no-one  rest-read /users {"i":"age","l":2,"vf":"r"}  out 2.0 kB  1500 µs  DENIED  unindexed"#)
        let broadcast = OperationRecord(kind: .broadcast, path: Path("users/ada"), timestamp: 0, micros: 40, bytes: 54, client: nil, clientsUpdated: 2)
        XCTAssertEqual(tail(plain.line(broadcast)), "  -  listener-broadcast /users/ada  out 54 B to 2 clients  40 µs")
        let connect = OperationRecord(kind: .connect, path: nil, timestamp: 0, micros: 0, bytes: 0,
                                      client: .init(id: "zzzzzzqq", address: "unix", owner: true, user: nil))
        XCTAssertEqual(tail(plain.line(connect)), "  zzzzzz unix owner  concurrent-connect")
        // A uid that could pass for the owner, or for no one, or that a terminal would act on,
        // is quoted; so is what a server sends that is not one plain word.
        func who(_ uid: String, address: String = "a") -> String {
            let record = OperationRecord(kind: .disconnect, path: nil, timestamp: 0, micros: 0, bytes: 0,
                                         client: .init(id: "c", address: address, user: uid))
            return String(tail(plain.line(record)).dropFirst(2).dropLast("  concurrent-disconnect".count))
        }
        XCTAssertEqual(who("ada"), "c a ada")
        XCTAssertEqual(who("owner"), #"c a "owner""#)
        XCTAssertEqual(who("no-one"), #"c a "no-one""#)
        XCTAssertEqual(who("a b"), #"c a "a b""#)
        XCTAssertEqual(who("\u{1B}]52;c;x\u{07}"), #"c a "\u001b]52;c;x\u0007""#)
        XCTAssertEqual(who("ada", address: "1.2.3.4\u{1B}[2J"), #"c "1.2.3.4\u001b[2J" ada"#)
        let hostile = OperationRecord(kind: .restRead, path: Path(keys: ["a\u{1B}[31m"]), timestamp: 0, micros: 1, bytes: 0, client: nil)
        XCTAssertTrue(plain.line(hostile).contains(#"/a\u{1b}[31m  out"#), plain.line(hostile))
        XCTAssertEqual(plain.line(write, watchID: 3).prefix(4), "[3] ")
        let colored = OperationFormatter(json: false, color: true)
        XCTAssertTrue(colored.line(read).contains("\u{1B}[31mDENIED\u{1B}[0m"))
    }

    /// The profiler's JSON, which reads back as the same operation.
    func testLinesForPrograms() throws {
        let json = OperationFormatter(json: true, color: true)
        XCTAssertEqual(json.line(write), #"{"name":"realtime-write","path":["users","ada"],"millis":0.18,"micros":180,"bytes":27,"client":{"id":"c4Xk2QabcdefGHIJ","remoteAddress":"127.0.0.1:51234","user":"ada"},"allowed":true,"timestamp":1795000000250}"#)
        XCTAssertEqual(json.line(write, watchID: 2).prefix(11), #"{"watch":2,"#)
        XCTAssertEqual(OperationRecord(json: try JSONValue.parse(json.line(write))), write)
        // Every member present or not, each written exactly, and read back as the same operation.
        var query = QueryParams()
        query.index = .child(Path("a/b"))
        query.limit = 3
        let records: [(OperationRecord, String)] = [
            (OperationRecord(kind: .broadcast, path: Path("x"), timestamp: 1.5, micros: 7, bytes: 1, client: nil, clientsUpdated: 4),
             #"{"name":"listener-broadcast","path":["x"],"millis":0.007,"micros":7,"bytes":1,"clientsUpdated":4,"timestamp":1.5}"#),
            (OperationRecord(kind: .listen, path: Path("q\"uote/ü"), query: query, timestamp: 2, micros: 0, bytes: 0,
                             client: .init(id: "i", address: "a", owner: true, user: nil), allowed: false, unindexed: true),
             #"{"name":"listener-listen","path":["q\"uote","ü"],"querySet":[{"orderBy":"a/b","index":{"path":["a","b"]},"params":{"l":3,"vf":"r","i":"a/b"}}],"millis":0,"micros":0,"bytes":0,"client":{"id":"i","remoteAddress":"a","user":null,"owner":true},"allowed":false,"unIndexed":true,"timestamp":2}"#),
            (OperationRecord(kind: .connect, path: nil, timestamp: 3, micros: 0, bytes: 0, client: nil),
             #"{"name":"concurrent-connect","millis":0,"micros":0,"bytes":0,"timestamp":3}"#),
        ]
        // Milliseconds as JavaScript writes micros / 1000.
        for (micros, millis) in [(1000, "1"), (1010, "1.01"), (1_234_567, "1234.567"), (5, "0.005"), (120_000, "120"), (-1500, "-1.5"),
                                (8_910_860_442_147_108, "8910860442147.107")] {
            let text = String(decoding: OperationRecord(kind: .connect, path: nil, timestamp: 0, micros: micros, bytes: 0, client: nil).jsonBytes, as: UTF8.self)
            XCTAssertTrue(text.contains(#""millis":\#(millis),"#), text)
        }
        for (record, text) in records {
            XCTAssertEqual(String(decoding: record.jsonBytes, as: UTF8.self), text)
            // Its members are among the columns of a monitor's csv, in their order.
            let members = try XCTUnwrap(JSONValue.parse(text).members).map(\.0)
            XCTAssertEqual(OperationRecord.members.filter(members.contains), members)
            var read = try XCTUnwrap(OperationRecord(json: try JSONValue.parse(text)))
            // A query reads back as the same query (its side, left to the default, now named).
            XCTAssertEqual(read.query?.identifier, record.query?.identifier)
            read.query = record.query
            XCTAssertEqual(read, record)
        }
        let csv = BufferOutput()
        let formatted = FormattedOutput(.csv, to: csv, columns: OperationRecord.members, width: nil, color: false)
        formatted.write(records[0].1 + "\n")
        XCTAssertEqual(csv.stdout, "name,path,querySet,millis,micros,bytes,client,allowed,unIndexed,clientsUpdated,timestamp\r\n"
                       + "listener-broadcast,\"[\"\"x\"\"]\",,0.007,7,1,,,,4,1.5\r\n")
        XCTAssertNil(OperationRecord(json: try JSONValue.parse(#"{"name": "something-else", "timestamp": 1}"#)))
        XCTAssertNil(OperationRecord(json: try JSONValue.parse(#"{"name": "rest-read", "path": [1], "timestamp": 1}"#)))
        // Hosted Firebase's shape (no micros, a client without an id) reads too.
        let hosted = try XCTUnwrap(OperationRecord(json: try JSONValue.parse(#"{"path":["public"],"millis":31,"bytes":0,"client":{"remoteAddress":"104.132.11.66:55927"},"allowed":true,"name":"rest-read","timestamp":1488555026760}"#)))
        XCTAssertEqual(hosted.micros, 31_000)
        XCTAssertEqual(hosted.path, Path("public"))
    }
    /// The README's sample lines are what the formatter prints for those operations.
    func testTheReadmeSample() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = text[try XCTUnwrap(text.range(of: "**Watching what clients do.**")).upperBound...]
        let open = try XCTUnwrap(section.range(of: "```text\n"))
        let close = try XCTUnwrap(section.range(of: "```\n", range: open.upperBound..<section.endIndex))
        let sample = section[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init)
        // Today at these local times.
        func at(_ hour: Int, _ minute: Int, _ second: Int, _ millis: Int) -> Double {
            var parts = Calendar.current.dateComponents([.year, .month, .day], from: Date())
            (parts.hour, parts.minute, parts.second) = (hour, minute, second)
            return (Calendar.current.date(from: parts)?.timeIntervalSince1970 ?? 0) * 1000 + Double(millis)
        }
        let records = [
            OperationRecord(kind: .realtimeWrite, path: Path("users/ada"), timestamp: at(12, 0, 1, 250), micros: 180, bytes: 27,
                            client: .init(id: "c4Xk2QabcdefGHIJ", address: "127.0.0.1:51234", user: "ada"), allowed: true),
            OperationRecord(kind: .broadcast, path: Path("users/ada"), timestamp: at(12, 0, 1, 251), micros: 40, bytes: 27, client: nil,
                            clientsUpdated: 2),
            OperationRecord(kind: .restRead, path: Path("users"), timestamp: at(12, 0, 2, 4), micros: 95, bytes: 2048,
                            client: .init(id: "rest", address: "127.0.0.1:51240", user: nil), allowed: false),
        ]
        let formatter = OperationFormatter(json: false, color: false)
        XCTAssertEqual(records.map { formatter.line($0) }, sample)
    }
}
