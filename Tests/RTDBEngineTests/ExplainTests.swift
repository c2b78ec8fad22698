import Foundation
import XCTest
@testable import RTDBData
@testable import RTDBEngine
import RTDBProtocol
import RTDBRules
import Synchronization

/// `Database.explain`: the index that answered (built, kept, stored with the data, none for
/// key order or a whole location), the children it read, the listens that keep it, the
/// rules' verdict, and the `.indexOn` to add at the rules location the data's path has.
final class ExplainTests: XCTestCase {
    let rules = #"{"rules": {"users": {".read": true, ".write": true, ".indexOn": ["name"]}, "rooms": {"$room": {"messages": {".read": "auth != null"}}}}}"#

    func explain(_ database: Database, _ path: String, _ query: QueryParams?, as identity: Identity = .admin) -> Result<QueryExplanation, Database.Refused>? {
        let done = expectation(description: "explained")
        let result = Mutex<Result<QueryExplanation, Database.Refused>?>(nil)
        database.explain(Path(path), query: query, as: identity) { outcome in
            result.withLock { $0 = outcome }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        return result.withLock { $0 }
    }

    /// The explanation, its time made 0 (it differs from run to run).
    func explained(_ database: Database, _ path: String, _ query: QueryParams?) throws -> QueryExplanation {
        let e = try XCTUnwrap(explain(database, path, query)).get()
        return QueryExplanation(path: e.path, rules: e.rules, index: e.index, use: e.use, declared: e.declared, unindexed: e.unindexed,
                                children: e.children, ordered: e.ordered, returned: e.returned, micros: 0, listens: e.listens, indexOn: e.indexOn)
    }

    func write(_ database: Database, _ path: String, _ json: String) throws {
        let done = expectation(description: "written")
        database.write(Path(path), try JSONReader.parse(json)) { response in
            XCTAssertTrue(response.isOK, response.message)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
    }

    func users(_ count: Int) -> String {
        "{" + (0..<count).map { #""u\#($0)": {"age": \#(count - $0), "name": "n\#($0)"}"# }.joined(separator: ", ") + "}"
    }

    func testEachWayAQueryIsAnswered() throws {
        let database = try Database(folder: temporaryFolder())
        defer { database.close() }
        database.replaceRules(try SecurityRules(parsing: rules))
        try write(database, "/users", users(100))
        let byAge = QueryParams().ordered(by: .child(Path("age"))).limitToFirst(3)
        let missing = ["name", "age"]

        XCTAssertEqual(try explained(database, "/users", byAge),
                       QueryExplanation(path: "/users", rules: "/users", index: "age", use: .built, declared: false, unindexed: true, children: 100,
                                        ordered: 100, returned: 3, micros: 0, listens: 0, indexOn: missing))
        XCTAssertEqual(try explained(database, "/users", byAge.startAt(Node(50.0))),
                       QueryExplanation(path: "/users", rules: "/users", index: "age", use: .kept, declared: false, unindexed: true, children: 100,
                                        ordered: 0, returned: 3, micros: 0, listens: 0, indexOn: missing))
        // Declared: nothing to add, nothing warned of.
        XCTAssertEqual(try explained(database, "/users", QueryParams().ordered(by: .child(Path("name"))).limitToLast(2)),
                       QueryExplanation(path: "/users", rules: "/users", index: "name", use: .built, declared: true, unindexed: false, children: 100,
                                        ordered: 100, returned: 2, micros: 0, listens: 0, indexOn: nil))
        // Keys in key order: u5, u50 to u59, u6, u60…
        XCTAssertEqual(try explained(database, "/users", QueryParams().ordered(by: .key).startAt(Node("u5"))),
                       QueryExplanation(path: "/users", rules: "/users", index: ".key", use: .keyOrder, declared: false, unindexed: false, children: 100,
                                        ordered: 0, returned: 55, micros: 0, listens: 0, indexOn: nil))
        XCTAssertEqual(try explained(database, "/users", QueryParams().ordered(by: .priority).limitToFirst(1)),
                       QueryExplanation(path: "/users", rules: "/users", index: ".priority", use: .built, declared: false, unindexed: false, children: 100,
                                        ordered: 100, returned: 1, micros: 0, listens: 0, indexOn: nil))
        // No query, and an order with no limit or range: the whole location.
        XCTAssertEqual(try explained(database, "/users", nil),
                       QueryExplanation(path: "/users", rules: "/users", index: nil, use: .whole, declared: false, unindexed: false, children: 100,
                                        ordered: 0, returned: 100, micros: 0, listens: 0, indexOn: nil))
        XCTAssertEqual(try explained(database, "/users", QueryParams().ordered(by: .child(Path("name")))),
                       QueryExplanation(path: "/users", rules: "/users", index: "name", use: .whole, declared: true, unindexed: false, children: 100,
                                        ordered: 0, returned: 100, micros: 0, listens: 0, indexOn: nil))
        XCTAssertEqual(try explained(database, "/users", QueryParams().ordered(by: .value)),
                       QueryExplanation(path: "/users", rules: "/users", index: ".value", use: .whole, declared: false, unindexed: false, children: 100,
                                        ordered: 0, returned: 100, micros: 0, listens: 0, indexOn: nil))
        // Through a wildcard, where the rules go on below.
        XCTAssertEqual(try explained(database, "/rooms/lobby/messages", QueryParams().ordered(by: .value).limitToLast(5)),
                       QueryExplanation(path: "/rooms/lobby/messages", rules: "/rooms/$room/messages", index: ".value", use: .built,
                                        declared: false, unindexed: true, children: 0, ordered: 0, returned: 0, micros: 0, listens: 0,
                                        indexOn: [".value"]))
        // Where the rules stop: the data's own keys.
        let logs = try explained(database, "/logs/2026", QueryParams().ordered(by: .child(Path("at/ms"))).limitToLast(5))
        XCTAssertEqual([logs.rules] + (logs.indexOn ?? []), ["/logs/2026", "at/ms"])

        // A write replacing the list: built again.
        try write(database, "/users", users(10))
        XCTAssertEqual(try explained(database, "/users", byAge).use, .built)
        XCTAssertEqual(try explained(database, "/users", byAge).ordered, 0)
    }

    /// An index a listen uses says so; after the listen, it is kept all the same.
    func testTheListensThatKeepAnIndex() throws {
        let database = try Database(folder: temporaryFolder())
        defer { database.close() }
        try write(database, "/users", users(20))
        let byAge = QueryParams().ordered(by: .child(Path("age"))).limitToLast(2)
        let client = SessionTests.Client(database)
        client.request(1, .listen(path: Path("users"), query: byAge, tag: 1, hash: ""))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        let used = try explained(database, "/users", byAge.limitToFirst(4))
        XCTAssertEqual(used.use, .kept)
        XCTAssertEqual(used.listens, 1)
        // No rules given: nothing is warned of, and the advice is for a server's rules.
        XCTAssertFalse(used.unindexed)
        XCTAssertEqual(used.indexOn, ["age"])
        client.request(2, .unlisten(path: Path("users"), query: byAge, tag: 1))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        XCTAssertEqual(try explained(database, "/users", byAge).listens, 0)
        client.transport.close()
    }

    /// An index stored with the data at close is read from the node file when reopened.
    func testAnIndexStoredWithTheData() throws {
        let folder = temporaryFolder()
        let byAge = QueryParams().ordered(by: .child(Path("age"))).limitToFirst(2)
        do {
            let database = try Database(folder: folder)
            try write(database, "/users", users(50))
            XCTAssertEqual(try explained(database, "/users", byAge).use, .built)
            database.close()
        }
        var database = try Database(folder: folder)
        XCTAssertEqual(try explained(database, "/users", byAge).use, .stored)
        XCTAssertEqual(try explained(database, "/users", byAge).ordered, 0)
        database.close()

        // Its top record damaged (a flipped byte): found while answering, built again.
        let head = try FolderHead.decode(FileIO.readFile(folder + "/HEAD"), path: "HEAD")
        let link = try XCTUnwrap(head.indexes.first)
        let nodes = folder + "/" + Store.nodesName(head.nodesID)
        var bytes = try FileIO.readFile(nodes)
        bytes[link.offset + 12] ^= 0xFF
        try Store.writeFile(nodes, bytes)
        database = try Database(folder: folder)
        defer { database.close() }
        let rebuilt = try explained(database, "/users", byAge)
        XCTAssertEqual([rebuilt.use.rawValue, "\(rebuilt.ordered)", "\(rebuilt.returned)"], ["built", "50", "2"])
        XCTAssertEqual(try explained(database, "/users", byAge).use, .kept)
    }

    /// The rules decide as for a read; a bad path is refused as a read's is.
    func testRefusedAsTheReadWouldBe() throws {
        let database = try Database(folder: temporaryFolder())
        defer { database.close() }
        database.replaceRules(try SecurityRules(parsing: rules))
        let query = QueryParams().ordered(by: .child(Path("x"))).limitToFirst(1)
        for path in ["/secret", "/rooms/a/messages"] {
            guard case .failure(let refused)? = explain(database, path, query, as: .anonymous) else { return XCTFail(path) }
            XCTAssertEqual(refused.response.status, .permissionDenied, path)
        }
        guard case .failure(let refused)? = explain(database, "/a/.priority/b", nil) else { return XCTFail("a bad path") }
        XCTAssertEqual(refused.response.status, .invalidPath)
    }
}
