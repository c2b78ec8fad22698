import Foundation
import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBServer

/// A realtime session at the message level: onDisconnect, auth, listens and their pushes.
final class SessionTests: XCTestCase {
    var database: Database!

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-session-" + UUID().uuidString)
    }

    override func tearDown() { database.close() }

    /// A raw client end that records what the server sends.
    final class Client: @unchecked Sendable {
        let transport: InProcessTransport
        let lock = NSLock()
        var received: [Message] = []

        init(_ database: Database) {
            let (client, server) = InProcessTransport.pair()
            transport = client
            database.accept(server)
            client.start(onMessage: { [unowned self] m in lock.lock(); received.append(m); lock.unlock() }, onClose: {})
        }

        func request(_ id: Int, _ request: Request) { transport.send(.request(id: id, request)) }

        func waitFor(response id: Int) -> Response? {
            for _ in 0..<1000 {
                lock.lock()
                let found = received.compactMap { m -> Response? in
                    if case .response(id, let r) = m { return r }
                    return nil
                }.first
                lock.unlock()
                if let found { return found }
                usleep(2_000)
            }
            return nil
        }
    }

    func testOnDisconnectRunsInOrderWhenTheConnectionEnds() throws {
        let client = Client(database)
        client.request(1, .onDisconnectPut(path: Path("presence/ada"), data: Node("offline")))
        client.request(2, .onDisconnectMerge(path: Path("stats"), data: [Update(Path("a/b"), Node(1)), Update(Path("c"), Node(.serverValue(.timestamp)))]))
        client.request(3, .onDisconnectPut(path: Path("temp/x"), data: Node(1)))
        client.request(4, .onDisconnectCancel(path: Path("temp")))
        client.request(5, .put(path: Path("presence/ada"), data: Node("online"), hash: nil))
        XCTAssertEqual(client.waitFor(response: 5)?.status, "ok")
        XCTAssertEqual(database.value(at: Path("presence/ada")), Node("online"))
        XCTAssertTrue(database.value(at: Path("stats")).isEmpty, "nothing runs before the end")
        client.transport.close()
        var value = Node.empty
        for _ in 0..<500 where value != Node("offline") {
            usleep(2_000)
            value = database.value(at: Path("presence/ada"))
        }
        XCTAssertEqual(value, Node("offline"))
        XCTAssertEqual(database.value(at: Path("stats/a/b")), Node(1))
        guard case .leaf(.number) = database.value(at: Path("stats/c")).content else { return XCTFail("timestamp not resolved") }
        XCTAssertTrue(database.value(at: Path("temp")).isEmpty, "cancelled")
    }

    func testAuthIsAcceptedAndWritesToInfoAreRefused() {
        let client = Client(database)
        client.request(1, .auth(credential: "owner", google: true))
        client.request(2, .onDisconnectPut(path: Path(".info/x"), data: Node(1)))
        XCTAssertEqual(client.waitFor(response: 1)?.status, "ok")
        XCTAssertEqual(client.waitFor(response: 2)?.status, "invalid_path")
    }

    func testListenPushesDataBeforeItsOk() {
        let client = Client(database)
        client.request(1, .put(path: Path("a/b"), data: Node(1), hash: nil))
        _ = client.waitFor(response: 1)
        client.request(2, .listen(path: Path("a"), query: nil, tag: nil, hash: ""))
        _ = client.waitFor(response: 2)
        client.lock.lock()
        let tail = client.received.suffix(2)
        client.lock.unlock()
        XCTAssertEqual(Array(tail), [.push(.data(path: Path("a"), data: try! JSONReader.parse(#"{"b":1}"#), tag: nil)), .response(id: 2, .ok)])
    }

    func testListenWithTheCurrentHashGetsNoDataAgain() {
        // A reconnecting client sends the hash of what it holds; equal data is not resent.
        let client = Client(database)
        let value = try! JSONReader.parse(#"{"b":1,"c":{"d":"x"}}"#)
        client.request(1, .put(path: Path("a"), data: value, hash: nil))
        _ = client.waitFor(response: 1)
        client.request(2, .listen(path: Path("a"), query: nil, tag: nil, hash: value.hashString))
        client.request(3, .listen(path: Path("a/c"), query: nil, tag: nil, hash: "stale"))
        _ = client.waitFor(response: 3)
        client.lock.lock()
        let tail = client.received.suffix(3)
        client.lock.unlock()
        XCTAssertEqual(Array(tail), [.response(id: 2, .ok), .push(.data(path: Path("a/c"), data: try! JSONReader.parse(#"{"d":"x"}"#), tag: nil)), .response(id: 3, .ok)])
    }

    func testOnDisconnectWireForms() throws {
        let messages: [Message] = [
            .request(id: 1, .onDisconnectPut(path: Path("p"), data: Node("x"))),
            .request(id: 2, .onDisconnectMerge(path: Path("p"), data: [Update(Path("a/b"), Node(1))])),
            .request(id: 3, .onDisconnectCancel(path: Path("p"))),
            .request(id: 4, .auth(credential: "secret", google: false)),
            .request(id: 5, .unauth),
        ]
        XCTAssertEqual(WireCodec.encode(messages[2]), #"{"t":"d","d":{"r":3,"a":"oc","b":{"p":"/p","d":null}}}"#)
        for message in messages { XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message) }
    }
}
