import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBClient

/// The client core against a real engine over the in-process transport.
final class RepoTests: XCTestCase {
    var database: Database!
    var repo: Repo!

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-repo-" + UUID().uuidString)
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        repo = Repo(transport: client)
    }

    override func tearDown() {
        repo.close()
        database.close()
    }

    func get(_ path: String) throws -> Node {
        let done = expectation(description: "get")
        var result: Result<Node, DatabaseError>!
        repo.get(Path(path)) { result = $0; done.fulfill() }
        wait(for: [done], timeout: 10)
        return try result.get()
    }

    func write(_ start: (@escaping (Result<Void, DatabaseError>) -> Void) -> Void) -> Result<Void, DatabaseError> {
        let done = expectation(description: "write")
        var result: Result<Void, DatabaseError>!
        start { result = $0; done.fulfill() }
        wait(for: [done], timeout: 10)
        return result
    }

    func testWritesAreAcknowledgedAndReadBack() throws {
        XCTAssertNoThrow(try write { repo.set(Path("a/b"), Node(1), completion: $0) }.get())
        XCTAssertNoThrow(try write { repo.update(Path("a"), [Update(Path("c/d"), Node("x")), Update(Path("b"), .empty)], completion: $0) }.get())
        XCTAssertEqual(JSONWriter.string(try get("/")), #"{"a":{"c":{"d":"x"}}}"#)
        XCTAssertNoThrow(try write { repo.setPriority(Path("a/c"), .number(3), completion: $0) }.get())
        XCTAssertEqual(try get("a/c").priority, .number(3))
        XCTAssertEqual(repo.pendingWriteCount, 0)
    }

    func testPushKeysAreChronological() throws {
        var keys: [String] = []
        for i in 0..<50 { keys.append(repo.push(Path("list"), Node(Double(i)))) }
        XCTAssertEqual(repo.waitForPendingWrites(timeout: 10), 0)
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertEqual(try get("list").children.keys.map(\.name), keys)
    }

    func testServerRejectionReachesTheCaller() {
        // The shell validates paths itself; the engine checks them again for other clients.
        let result = write { repo.set(Path(keys: ["a.b"]), Node(1), completion: $0) }
        guard case .failure(let error) = result else { return XCTFail("accepted an invalid key") }
        XCTAssertEqual(error.code, "INVALID_PATH")
        XCTAssertTrue(error.message.hasPrefix(#"invalid key "a.b""#), error.message)
        XCTAssertEqual(repo.pendingWriteCount, 0)
    }

    func testCompareAndSet() throws {
        XCTAssertNoThrow(try write { repo.set(Path("n"), Node(1), completion: $0) }.get())
        let stale = Node(2).hashString  // not the hash of what is there
        let done = expectation(description: "cas")
        var response: Response?
        database.accept(InProcessTransport.pair().server)  // a second connection does not disturb the first
        let (client, server) = InProcessTransport.pair()
        database.accept(server)
        client.start(onMessage: { message in
            if case .response(_, let r) = message { response = r; done.fulfill() }
        }, onClose: {})
        client.send(.request(id: 1, .put(path: Path("n"), data: Node(5), hash: stale)))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(response?.status, "datastale")
        XCTAssertEqual(try get("n"), Node(1))
    }

    func testInfoIsLocal() throws {
        XCTAssertEqual(try get("/.info/connected"), Node(true))
        guard case .leaf(.number) = try get("/.info/serverTimeOffset").content else { return XCTFail() }
    }
}
