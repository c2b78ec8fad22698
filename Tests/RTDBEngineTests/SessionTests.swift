import Foundation
import Synchronization
import XCTest
import RTDBData
import RTDBProtocol
import RTDBRules
import RTDBTestSupport
@testable import RTDBEngine

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

        /// `maxMessageBytes`: the server sends data only in messages of at most that size.
        init(_ database: Database, maxMessageBytes: Int? = nil, identity: Identity = .admin) {
            let (client, server) = InProcessTransport.pair()
            transport = client
            database.accept(maxMessageBytes.map { MessageLimitedTransport(server, maxBytes: $0) } ?? server, identity: identity)
            client.start(onMessage: { [unowned self] m in lock.lock(); received.append(m); lock.unlock() }, onClose: {})
        }

        func request(_ id: Int, _ request: Request) { transport.send(.request(id: id, request)) }

        /// The answer to request `id`, waiting up to `attempts` times 2 ms for it.
        func waitFor(response id: Int, attempts: Int = 1000) -> Response? {
            for _ in 0..<attempts {
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

    /// A server end that records the shared encodings it is asked to send, and passes on
    /// every message.
    final class SharingRecorder: Transport, @unchecked Sendable {
        let inner: Transport
        let lock = NSLock()
        var shared: [SharedEncoding] = []
        init(_ inner: Transport) { self.inner = inner }
        func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
            inner.start(onMessage: onMessage, onClose: onClose)
        }
        func send(_ message: Message) { inner.send(message) }
        func send(sharing encoding: SharedEncoding) {
            lock.withLock { shared.append(encoding) }
            inner.send(encoding.message)
        }
        func close() { inner.close() }
    }

    /// A guarded merge is written only if every guarded value still hashes as the client
    /// read it; one stale guard writes nothing. The rules are asked first, so a refusal says
    /// nothing of the data. The handshake says the server checks guards.
    func testGuardedMerges() throws {
        func node(_ json: String) -> Node { (try? JSONReader.parse(json)) ?? .empty }
        database.replaceRules(try SecurityRules(parsing: #"{"rules": {"a": {".read": true}, "b": {".read": true}, "open": {".write": true}}}"#))
        let client = Client(database)
        client.request(1, .put(path: Path("a"), data: node(#"{"x": 1}"#), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1)?.status, .ok)
        client.lock.lock()
        let hello = client.received.first
        client.lock.unlock()
        guard case .handshake(let handshake)? = hello else { return XCTFail("no handshake: \(String(describing: hello))") }
        XCTAssertTrue(handshake.guardedMerge)
        let read = database.value(at: Path("a")).hashString
        let move: [UpdateEntry] = [UpdateEntry(Path("b"), node(#"{"x": 1}"#)), UpdateEntry(Path("a"), .empty)]
        // b is not empty any more than a is what was read: nothing is written.
        client.request(2, .merge(path: .root, data: move, guards: [UpdateGuard(Path("a"), hash: read), UpdateGuard(Path("b"), hash: "stale")]))
        XCTAssertEqual(client.waitFor(response: 2), .error(.dataStale, "the data at /b changed since it was read"))
        XCTAssertEqual(database.value(at: .root), node(#"{"a": {"x": 1}}"#))
        client.request(3, .merge(path: .root, data: move, guards: [UpdateGuard(Path("a"), hash: read), UpdateGuard(Path("b"), hash: "")]))
        XCTAssertEqual(client.waitFor(response: 3)?.status, .ok)
        XCTAssertEqual(database.value(at: .root), node(#"{"b": {"x": 1}}"#))
        // Refused by the rules, stale or not.
        let user = Client(database, identity: .user(uid: "u", claims: .object([]), expires: nil))
        user.request(1, .merge(path: .root, data: [UpdateEntry(Path("b/x"), Node(2))], guards: [UpdateGuard(Path("b"), hash: "stale")]))
        XCTAssertEqual(user.waitFor(response: 1)?.status, .permissionDenied)
        user.request(2, .merge(path: .root, data: [UpdateEntry(Path("open/x"), Node(2))], guards: [UpdateGuard(Path("b"), hash: "stale")]))
        XCTAssertEqual(user.waitFor(response: 2)?.status, .dataStale)
        // A guard would tell whether a value it may not read is the one guessed.
        database.write(Path("secret"), Node(true)) { _ in }
        user.request(3, .merge(path: .root, data: [UpdateEntry(Path("open/x"), Node(3))], guards: [UpdateGuard(Path("secret"), hash: Node(true).hashString)]))
        XCTAssertEqual(user.waitFor(response: 3)?.status, .permissionDenied)
        XCTAssertEqual(database.value(at: Path("open")), .empty)
        // Each guard costs a hash of its value: a few, each path once.
        let many = (0...UpdateGuard.maximumCount).map { UpdateGuard(Path("k\($0)"), hash: "") }
        client.request(5, .merge(path: .root, data: [UpdateEntry(Path("b/y"), Node(1))], guards: many))
        XCTAssertEqual(client.waitFor(response: 5), .error(.invalidRequest, "a merge takes at most 16 guards, each path once"))
        client.request(6, .merge(path: .root, data: [UpdateEntry(Path("b/y"), Node(1))], guards: [UpdateGuard(Path("b"), hash: ""), UpdateGuard(Path("b"), hash: "")]))
        XCTAssertEqual(client.waitFor(response: 6)?.status, .invalidRequest)
    }

    /// Listens that are sent the same push share its bytes: a fan-out encodes it once. A
    /// query's listen (tagged) is sent its own.
    func testListensSentTheSamePushShareOneEncoding() throws {
        var recorders: [SharingRecorder] = []
        var clients: [InProcessTransport] = []
        for _ in 0..<4 {
            let (client, server) = InProcessTransport.pair()
            let recorder = SharingRecorder(server)
            database.accept(recorder)
            client.start(onMessage: { _ in }, onClose: {})
            recorders.append(recorder)
            clients.append(client)
        }
        let listens: [Request] = [
            .listen(path: Path("room"), query: nil, tag: nil, hash: ""),
            .listen(path: Path("room"), query: nil, tag: nil, hash: ""),
            .listen(path: .root, query: nil, tag: nil, hash: ""),
            .listen(path: Path("room"), query: QueryParams().limitToLast(5), tag: 7, hash: ""),
        ]
        for (client, listen) in zip(clients, listens) { client.send(.request(id: 1, listen)) }
        let writer = Client(database)
        writer.request(1, .put(path: Path("room/x"), data: Node(1), hash: nil))
        XCTAssertEqual(writer.waitFor(response: 1), .ok)
        let shared = recorders.map { recorder in recorder.lock.withLock { recorder.shared } }
        XCTAssertEqual(shared.map(\.count), [1, 1, 1, 0])
        let push = Message.push(.data(path: Path("room/x"), data: Node(1), tag: nil))
        XCTAssertTrue(shared[0][0] === shared[1][0] && shared[1][0] === shared[2][0])
        XCTAssertEqual(shared[0][0].message, push)
        XCTAssertEqual(shared[0][0].bytes, WireCodec.encodeBytes(push))
        for client in clients { client.close() }
    }

    /// A clock the test sets, in seconds.
    final class SetClock: Sendable {
        let seconds: Mutex<Double>
        init(_ seconds: Double) { self.seconds = Mutex(seconds) }
    }

    /// A request handled after its session's credential expired runs as no one, even when
    /// the queue reaches it before the expiry's timer: the credential is revoked first.
    func testARequestHandledAfterTheCredentialExpiredRunsAsNoOne() throws {
        let clock = SetClock(1_000_000)
        database.close()
        database = try Database(folder: temporaryFolder(), clock: { clock.seconds.withLock { $0 } * 1000 })
        database.replaceRules(try SecurityRules(parsing: #"{"rules": {".read": true, ".write": "auth != null"}}"#))
        // A signed token (the signature is not checked) that expires 100 s from now, by the
        // database's clock; its timer waits that long in real time.
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"sub":"ada","exp":1000100}"#.utf8))
        let client = Client(database, identity: .anonymous)
        client.request(1, .auth(credential: header + "." + claims + ".c2ln", google: false))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        client.request(2, .put(path: Path("x"), data: Node(1), hash: nil))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        clock.seconds.withLock { $0 = 1_000_200 }
        client.request(3, .put(path: Path("x"), data: Node(2), hash: nil))
        XCTAssertEqual(client.waitFor(response: 3)?.status, .permissionDenied)
        let revoked = client.lock.withLock { client.received.contains(.push(.authRevoked(status: .expiredToken, reason: "the credential has expired"))) }
        XCTAssertTrue(revoked)
        XCTAssertEqual(database.value(at: Path("x")), Node(1))
        client.transport.close()
    }

    func testOnDisconnectRunsInOrderWhenTheConnectionEnds() throws {
        let client = Client(database)
        client.request(1, .onDisconnectPut(path: Path("presence/ada"), data: Node("offline")))
        client.request(2, .onDisconnectMerge(path: Path("stats"), data: [UpdateEntry(Path("a/b"), Node(1)), UpdateEntry(Path("c"), Node(.serverValue(.timestamp)))]))
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

    /// A restored snapshot reaches a listener as a write of `/` would: its location's data,
    /// whole, after the writes it undoes.
    func testARestoreIsPushedToListeners() {
        let client = Client(database)
        client.request(1, .put(path: Path("a"), data: try! JSONReader.parse(#"{"b": 1, "c": 2}"#), hash: nil))
        _ = client.waitFor(response: 1)
        let saved = expectation(description: "saved")
        database.saveSnapshot("s") { _ in saved.fulfill() }
        wait(for: [saved], timeout: 10)
        client.request(2, .put(path: Path("a/b"), data: Node(5), hash: nil))
        _ = client.waitFor(response: 2)
        client.request(3, .listen(path: Path("a"), query: nil, tag: nil, hash: ""))
        _ = client.waitFor(response: 3)
        let restored = expectation(description: "restored")
        database.restoreSnapshot("s") { response in
            XCTAssertTrue(response.isOK, response.message)
            restored.fulfill()
        }
        wait(for: [restored], timeout: 10)
        client.request(4, .get(path: Path("a"), query: nil))
        _ = client.waitFor(response: 4)
        client.lock.lock()
        let pushes = client.received.compactMap { m -> Push? in if case .push(let p) = m { return p }; return nil }
        client.lock.unlock()
        XCTAssertEqual(pushes, [.data(path: Path("a"), data: try! JSONReader.parse(#"{"b":5,"c":2}"#), tag: nil),
                                .data(path: Path("a"), data: try! JSONReader.parse(#"{"b":1,"c":2}"#), tag: nil)])
    }

    /// A listen whose data is more than the client takes in one message is refused as a read
    /// that large is, and not kept: sent, the client would drop the connection over it and
    /// listen again, for ever.
    func testAListenWhoseDataDoesNotFitInOneMessageIsRefusedAsTooBig() throws {
        let client = Client(database, maxMessageBytes: 1000)
        client.request(1, .put(path: Path("big/text"), data: Node(String(repeating: "z", count: 2000)), hash: nil))
        client.request(2, .put(path: Path("small"), data: Node("s"), hash: nil))
        XCTAssertEqual(client.waitFor(response: 2)?.status, "ok")
        client.request(3, .listen(path: Path("big"), query: nil, tag: nil, hash: ""))
        client.request(4, .listen(path: Path("small"), query: nil, tag: nil, hash: ""))
        // Not listening at /big: a write there reaches no one, and a listen nearer the
        // limit is no concern of this one.
        client.request(5, .put(path: Path("big/more"), data: Node(1), hash: nil))
        XCTAssertEqual(client.waitFor(response: 5)?.status, "ok")
        client.request(6, .put(path: Path("small"), data: Node("t"), hash: nil))
        XCTAssertEqual(client.waitFor(response: 6)?.status, "ok")
        client.lock.lock()
        let after = Array(client.received.drop { if case .response(2, _) = $0 { return false }; return true }.dropFirst())
        client.lock.unlock()
        XCTAssertEqual(after, [
            .response(id: 3, .error(.tooBig, "The data requested exceeds the maximum size that can be accessed with a single request; listen to or read its children instead")),
            .push(.data(path: Path("small"), data: Node("s"), tag: nil)),
            .response(id: 4, .ok),
            .response(id: 5, .ok),
            .push(.data(path: Path("small"), data: Node("t"), tag: nil)),
            .response(id: 6, .ok),
        ])
        // A refused query leaves no index in use behind it.
        client.request(7, .listen(path: Path("big"), query: QueryParams().ordered(by: .child(Path("n"))).limitToLast(1), tag: 1, hash: ""))
        XCTAssertEqual(client.waitFor(response: 7)?.status, "too_big")
        XCTAssertEqual(database.runAndWait { $0.indexListens }, [:])
        // Smaller now, it can be listened to.
        client.request(8, .put(path: Path("big/text"), data: .empty, hash: nil))
        client.request(9, .listen(path: Path("big"), query: nil, tag: nil, hash: ""))
        XCTAssertEqual(client.waitFor(response: 9), .ok)
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

    /// A child rewritten in a watched window with canonically equivalent text (equal to
    /// Swift's `==`, other bytes) goes out with its new bytes.
    func testQueryUpdateCarriesTheBytesOfAnEquivalentRewrite() throws {
        let client = Client(database)
        client.request(1, .put(path: Path("list"), data: try JSONReader.parse(#"{"a": "\u00e9", "b": "x"}"#), hash: nil))
        _ = client.waitFor(response: 1)
        client.request(2, .listen(path: Path("list"), query: QueryParams().limitToLast(2), tag: 7, hash: ""))
        _ = client.waitFor(response: 2)
        client.request(3, .put(path: Path("list/a"), data: Node("e\u{301}"), hash: nil))
        _ = client.waitFor(response: 3)
        client.lock.lock()
        let sent = client.received.compactMap { message -> Node? in
            if case .push(.data(Path("list/a"), let data, 7)) = message { return data }
            return nil
        }
        client.lock.unlock()
        XCTAssertEqual(sent.map { JSONWriter.bytes($0) }, [Array(#""e\#u{301}""#.utf8)])
    }

    /// Checks what a watched query's client receives after its listen's ok: the pushes of
    /// each write, in order (`expected`: a write's request id and what it sends), and each
    /// write's acknowledgement only after its data (a client shown the ack first would take
    /// its write back, then show it again).
    private func assertPushes(after listen: Int, to client: Client, _ expected: [(write: Int, pushes: [Push])],
                              file: StaticString = #filePath, line: UInt = #line) {
        for (id, _) in expected { XCTAssertEqual(client.waitFor(response: id), .ok, file: file, line: line) }
        client.lock.lock()
        let received = client.received
        client.lock.unlock()
        let start = (received.firstIndex { $0 == .response(id: listen, .ok) } ?? received.count - 1) + 1
        var pushes: [Push] = []
        var acknowledged: [Int] = []
        for message in received[start...] {
            switch message {
            case .push(let push):
                pushes.append(push)
            case .response(let id, _):
                acknowledged.append(id)
                let owed = expected.prefix { $0.write != id }.count + 1
                XCTAssertGreaterThanOrEqual(pushes.count, expected.prefix(owed).reduce(0) { $0 + $1.pushes.count },
                                            "write \(id) acknowledged before its data", file: file, line: line)
            default: break
            }
        }
        XCTAssertEqual(acknowledged, expected.map(\.write), file: file, line: line)
        XCTAssertEqual(pushes, expected.flatMap(\.pushes), file: file, line: line)
    }

    /// Writes queued together under a watched `limitToLast(2)`: each moves the window as its
    /// own update, so the client sees {k0}, {k0,k1}, {k1,k2}, {k2,k3}, as from Firebase.
    func testEachQueuedWriteMovesAWatchedWindow() throws {
        let client = Client(database)
        client.request(1, .listen(path: Path("q"), query: QueryParams().limitToLast(2), tag: 5, hash: ""))
        _ = client.waitFor(response: 1)
        database.queue.suspend()  // the writes arrive together
        for i in 0..<4 { client.request(10 + i, .put(path: Path("q/k\(i)"), data: Node(Double(i)), hash: nil)) }
        client.request(20, .put(path: Path("other"), data: Node(1), hash: nil))
        database.queue.resume()
        assertPushes(after: 1, to: client, [
            (10, [.data(path: Path("q/k0"), data: Node(0), tag: 5)]),
            (11, [.data(path: Path("q/k1"), data: Node(1), tag: 5)]),
            (12, [.merge(path: Path("q"), data: [UpdateEntry(Path("k0"), .empty), UpdateEntry(Path("k2"), Node(2))], tag: 5)]),
            (13, [.merge(path: Path("q"), data: [UpdateEntry(Path("k1"), .empty), UpdateEntry(Path("k3"), Node(3))], tag: 5)]),
            (20, []),
        ])
    }

    /// A window with bounds and no limit: a written child enters or leaves it by its own
    /// value; written children outside it send nothing; one written inside is sent whole.
    func testWritesMoveChildrenInAndOutOfABoundedWindow() throws {
        let client = Client(database)
        client.request(1, .put(path: Path("list"), data: try JSONReader.parse(#"{"a":{"n":5},"b":{"n":15}}"#), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        let query = QueryParams().ordered(by: .child(Path("n"))).startAt(Node(10)).endAt(Node(20))
        client.request(2, .listen(path: Path("list"), query: query, tag: 2, hash: ""))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        database.queue.suspend()
        client.request(3, .put(path: Path("list/a/n"), data: Node(12), hash: nil))
        client.request(4, .put(path: Path("list/b/n"), data: Node(25), hash: nil))
        client.request(5, .merge(path: Path("list"), data: [UpdateEntry(Path("a/n"), Node(30)), UpdateEntry(Path("c"), try JSONReader.parse(#"{"n":11}"#))]))
        client.request(6, .put(path: Path("list/d/x"), data: Node(1), hash: nil))
        client.request(7, .put(path: Path("list/c/title"), data: Node("t"), hash: nil))
        client.request(8, .merge(path: Path(""), data: [UpdateEntry(Path("list/e/n"), Node(20)), UpdateEntry(Path("elsewhere"), Node(1))]))
        database.queue.resume()
        assertPushes(after: 2, to: client, [
            (3, [.data(path: Path("list/a"), data: try JSONReader.parse(#"{"n":12}"#), tag: 2)]),
            (4, [.data(path: Path("list/b"), data: .empty, tag: 2)]),
            (5, [.merge(path: Path("list"), data: [UpdateEntry(Path("a"), .empty), UpdateEntry(Path("c"), try JSONReader.parse(#"{"n":11}"#))], tag: 2)]),
            (6, []),
            (7, [.data(path: Path("list/c"), data: try JSONReader.parse(#"{"n":11,"title":"t"}"#), tag: 2)]),
            (8, [.data(path: Path("list/e"), data: try JSONReader.parse(#"{"n":20}"#), tag: 2)]),
        ])
    }

    /// A query cut to a depth (`dp`, rtdb's own): its window and each child its updates name
    /// are sent cut there, objects as their number of children; a write deep below a child
    /// sends that child again; a cut listen without bounds or a limit is refused.
    func testACutListenSendsChildrenCutAndAgainWhenChangedBelow() throws {
        // An object cut: its count as its one child (a key no data can have).
        func counted(_ n: Int) -> Node { Node(children: ChildMap(sorted: [(Node.cutCountKey, Node(.number(Double(n))))])) }
        let client = Client(database)
        client.request(1, .put(path: Path("t"), data: try JSONReader.parse(#"{"a":{"x":{"y":1},"z":2},"b":3,"c":{"d":4}}"#), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        var plain = QueryParams()
        plain.depth = 1
        client.request(2, .listen(path: Path("t"), query: plain, tag: 5, hash: ""))
        XCTAssertEqual(client.waitFor(response: 2), .error(.invalidRequest, Database.uncutListen))
        var query = QueryParams().ordered(by: .key).limitToFirst(2)
        query.depth = 1
        client.request(3, .listen(path: Path("t"), query: query, tag: 4, hash: ""))
        XCTAssertEqual(client.waitFor(response: 3), .ok)
        database.queue.suspend()
        client.request(4, .put(path: Path("t/a/x/y"), data: Node(2), hash: nil))
        client.request(5, .put(path: Path("t/a/w"), data: Node(0), hash: nil))
        client.request(6, .put(path: Path("t/0"), data: try JSONReader.parse(#"{"k":1}"#), hash: nil))
        client.request(7, .put(path: Path("t/c/d"), data: Node(5), hash: nil))
        database.queue.resume()
        assertPushes(after: 3, to: client, [
            (4, [.data(path: Path("t/a"), data: counted(2), tag: 4)]),
            (5, [.data(path: Path("t/a"), data: counted(3), tag: 4)]),
            (6, [.merge(path: Path("t"), data: [UpdateEntry(Path("b"), .empty), UpdateEntry(Path("0"), counted(1))], tag: 4)]),
            (7, []),
        ])
        client.lock.lock()
        let first = client.received.compactMap { message -> Node? in
            if case .push(.data(Path("t"), let data, 4)) = message { return data }
            return nil
        }.first
        client.lock.unlock()
        XCTAssertEqual(first.map { JSONWriter.string($0) }, #"{"a":{".count":2},"b":3}"#)
        // A read is cut as asked, window or not: it answers once.
        client.request(8, .get(path: Path("t"), query: plain))
        XCTAssertEqual(client.waitFor(response: 8).map { JSONWriter.string($0.data) }, #"{"0":{".count":1},"a":{".count":3},"b":3,"c":{".count":1}}"#)
    }

    /// `orderByChild` under a limit: a write that moves a child into the window pushes the
    /// last one out, one that moves a child out lets the next one in (sent whole: the
    /// client never had it), and a write above the list sends the whole window.
    func testWritesMoveChildrenInAndOutOfAnOrderedLimitedWindow() throws {
        let client = Client(database)
        client.request(1, .put(path: Path("scores"), data: try JSONReader.parse(#"{"a":{"s":1},"b":{"s":2},"c":{"s":3},"d":{"s":4}}"#), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        let query = QueryParams().ordered(by: .child(Path("s"))).limitToLast(2)
        client.request(2, .listen(path: Path("scores"), query: query, tag: 9, hash: ""))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        database.queue.suspend()
        client.request(3, .put(path: Path("scores/a/s"), data: Node(10), hash: nil))  // in; c out
        client.request(4, .put(path: Path("scores/d/s"), data: Node(0), hash: nil))   // out; c in
        client.request(5, .put(path: Path("scores/b/s"), data: Node(2.5), hash: nil)) // below the window
        client.request(6, .put(path: Path("scores/a/name"), data: Node("x"), hash: nil)) // in, stays
        client.request(7, .put(path: Path("scores"), data: try JSONReader.parse(#"{"z":{"s":1}}"#), hash: nil))
        client.request(8, .put(path: Path("scores"), data: try JSONReader.parse(#"{"z":{"s":1}}"#), hash: nil))
        database.queue.resume()
        assertPushes(after: 2, to: client, [
            (3, [.merge(path: Path("scores"), data: [UpdateEntry(Path("c"), .empty), UpdateEntry(Path("a"), try JSONReader.parse(#"{"s":10}"#))], tag: 9)]),
            (4, [.merge(path: Path("scores"), data: [UpdateEntry(Path("d"), .empty), UpdateEntry(Path("c"), try JSONReader.parse(#"{"s":3}"#))], tag: 9)]),
            (5, []),
            (6, [.data(path: Path("scores/a"), data: try JSONReader.parse(#"{"name":"x","s":10}"#), tag: 9)]),
            (7, [.data(path: Path("scores"), data: try JSONReader.parse(#"{"z":{"s":1}}"#), tag: 9)]),
            (8, []),
        ])
    }

    /// A listen the data lets read (`.read` reads /members) is checked again after a write
    /// that touches what its rule reads, and only then: a write elsewhere costs it nothing.
    func testOnlyWritesToWhatAReadRuleReadsCheckItsListensAgain() throws {
        database.replaceRules(try SecurityRules(parsing: #"{"rules": {"rooms": {"$room": {".read": "root.child('members').child($room).child(auth.uid).exists()"}}}}"#))
        let owner = Client(database)
        owner.request(1, .put(path: .root, data: try JSONReader.parse(#"{"members": {"r1": {"ada": true}}, "rooms": {"r1": {"m": "hi"}}}"#), hash: nil))
        XCTAssertEqual(owner.waitFor(response: 1), .ok)
        let ada = Client(database)
        ada.request(1, .auth(credential: Identity.unsignedToken(uid: "ada", now: 1e9), google: false))
        XCTAssertEqual(ada.waitFor(response: 1), .ok)
        ada.request(2, .listen(path: Path("rooms/r1"), query: nil, tag: nil, hash: ""))
        XCTAssertEqual(ada.waitFor(response: 2), .ok)
        owner.request(2, .put(path: Path("elsewhere"), data: Node(1), hash: nil))
        owner.request(3, .put(path: Path("members/r2/bob"), data: Node(true), hash: nil))
        owner.request(4, .put(path: Path("rooms/r1/m2"), data: Node("more"), hash: nil))
        XCTAssertEqual(owner.waitFor(response: 4), .ok)
        XCTAssertEqual(database.runAndWait { $0.listensRechecked }, 0)
        owner.request(5, .put(path: Path("members/r1/ada"), data: .empty, hash: nil))
        XCTAssertEqual(owner.waitFor(response: 5), .ok)
        XCTAssertEqual(database.runAndWait { $0.listensRechecked }, 1)
        ada.lock.lock()
        let revoked = ada.received.contains(.push(.listenRevoked(path: Path("rooms/r1"), query: nil)))
        ada.lock.unlock()
        XCTAssertTrue(revoked)
    }

    /// `limitToFirst`: the window is cut on the other side.
    func testWritesMoveChildrenInAndOutOfAWindowLimitedFromTheStart() throws {
        let client = Client(database)
        client.request(1, .put(path: Path("scores"), data: try JSONReader.parse(#"{"a":{"s":1},"b":{"s":2},"c":{"s":3},"d":{"s":4}}"#), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1), .ok)
        client.request(2, .listen(path: Path("scores"), query: QueryParams().ordered(by: .child(Path("s"))).limitToFirst(2), tag: 4, hash: ""))
        XCTAssertEqual(client.waitFor(response: 2), .ok)
        database.queue.suspend()
        client.request(3, .put(path: Path("scores/d/s"), data: Node(0), hash: nil))  // in first; b out
        client.request(4, .put(path: Path("scores/c/s"), data: Node(5), hash: nil))  // behind the window
        client.request(5, .put(path: Path("scores/a/s"), data: Node(9), hash: nil))  // out; b back in
        database.queue.resume()
        assertPushes(after: 2, to: client, [
            (3, [.merge(path: Path("scores"), data: [UpdateEntry(Path("b"), .empty), UpdateEntry(Path("d"), try JSONReader.parse(#"{"s":0}"#))], tag: 4)]),
            (4, []),
            (5, [.merge(path: Path("scores"), data: [UpdateEntry(Path("a"), .empty), UpdateEntry(Path("b"), try JSONReader.parse(#"{"s":2}"#))], tag: 4)]),
        ])
    }

    func testOnDisconnectWireForms() throws {
        let messages: [Message] = [
            .request(id: 1, .onDisconnectPut(path: Path("p"), data: Node("x"))),
            .request(id: 2, .onDisconnectMerge(path: Path("p"), data: [UpdateEntry(Path("a/b"), Node(1))])),
            .request(id: 3, .onDisconnectCancel(path: Path("p"))),
            .request(id: 4, .auth(credential: "secret", google: false)),
            .request(id: 5, .unauth),
            .request(id: 6, .auth(credential: "owner", google: true, acting: .object([("uid", .string("ada"))]))),
            .request(id: 7, .auth(credential: "owner", google: true, acting: .null)),
        ]
        XCTAssertEqual(WireCodec.encode(messages[2]), #"{"t":"d","d":{"r":3,"a":"oc","b":{"p":"/p","d":null}}}"#)
        XCTAssertEqual(WireCodec.encode(messages[5]), #"{"t":"d","d":{"r":6,"a":"gauth","b":{"cred":"owner","authvar":{"uid":"ada"}}}}"#)
        XCTAssertEqual(WireCodec.encode(messages[6]), #"{"t":"d","d":{"r":7,"a":"gauth","b":{"cred":"owner","noauth":true}}}"#)
        for message in messages { XCTAssertEqual(try WireCodec.decode(WireCodec.encode(message)), message) }
    }

    /// `g` answers what the official clients expect: `null` for nothing (not `""`), the
    /// query's window for a query, and a value for the empty string.
    func testGetAnswersNullAndHonoursItsQuery() throws {
        let client = Client(database)
        client.request(1, .get(path: Path("missing"), query: nil))
        let missing = try XCTUnwrap(client.waitFor(response: 1))
        XCTAssertEqual(WireCodec.encode(.response(id: 1, missing)), #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":null}}}"#)
        client.request(2, .put(path: Path("list"), data: try JSONReader.parse(#"{"a":{"x":3},"b":{"x":1},"c":{"x":2},"e":""}"#), hash: nil))
        _ = client.waitFor(response: 2)
        client.request(3, .get(path: Path("list"), query: QueryParams().ordered(by: .child(Path("x"))).limitToFirst(2)))
        let window = try XCTUnwrap(client.waitFor(response: 3))
        XCTAssertEqual(WireCodec.encode(.response(id: 3, window)), #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{"b":{"x":1},"e":""}}}}"#)
        client.request(4, .get(path: Path("list/e"), query: nil))
        XCTAssertEqual(WireCodec.encode(.response(id: 4, try XCTUnwrap(client.waitFor(response: 4)))), #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":""}}}"#)
    }

    /// An increment past the largest double is refused: nothing is stored, logged or sent,
    /// and the database opens again with every earlier write.
    func testIncrementThatOverflowsIsRefused() throws {
        let folder = database.folder
        let client = Client(database)
        client.request(1, .put(path: Path("n"), data: Node(1.7e308), hash: nil))
        XCTAssertEqual(client.waitFor(response: 1)?.status, "ok")
        client.request(2, .put(path: Path("n"), data: Node(.serverValue(.increment(1.7e308))), hash: nil))
        let refused = try XCTUnwrap(client.waitFor(response: 2))
        XCTAssertEqual(refused.status, "invalid_data")
        XCTAssertEqual(refused.message, #"invalid value at "/n": the increment overflows: the result is beyond ±1.8e308, which no JSON number can hold"#)
        client.request(3, .merge(path: .root, data: [UpdateEntry(Path("m"), Node(1)), UpdateEntry(Path("n"), Node(.serverValue(.increment(-1e308))))]))
        XCTAssertEqual(client.waitFor(response: 3)?.status, "ok")
        client.request(4, .merge(path: .root, data: [UpdateEntry(Path("m"), Node(2)), UpdateEntry(Path("n"), Node(.serverValue(.increment(.infinity))))]))
        XCTAssertEqual(client.waitFor(response: 4)?.status, "invalid_data")
        XCTAssertEqual(database.value(at: Path("m")), Node(1), "a refused update changes nothing")
        client.request(5, .put(path: Path("after"), data: Node(true), hash: nil))
        XCTAssertEqual(client.waitFor(response: 5)?.status, "ok")
        database.close()
        database = try Database(folder: folder)
        XCTAssertEqual(database.value(at: Path("n")), Node(1.7e308 - 1e308))
        XCTAssertEqual(database.value(at: Path("after")), Node(true))
    }

    /// Values are checked by the engine, not only by the wire codec: a write that reaches it
    /// in process (embedded mode, no JSON on the way) gets the same rules.
    func testValuesAreCheckedByTheEngineWhateverTheFront() throws {
        let client = Client(database)
        let badKey = Node.empty.setting(Path(keys: ["ok", "a.b"]), to: Node(1))
        let deep = Node.empty.setting(Path(keys: (1...32).map { "k\($0)" }), to: Node(true))
        let cases: [(Request, String)] = [
            (.put(path: Path("x"), data: badKey, hash: nil),
             ##"invalid key "a.b" in "/x/ok/a.b": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##),
            (.put(path: Path("x"), data: deep, hash: nil),
             #"path "/x/k1/k2/k3/k4/k5/k6/k7/k8/k9/k10/k11/k12/k13/k14/k15/k16/k17/k18/k19/k20/k21..." is 33 levels deep; the limit is 32"#),
            (.put(path: Path("x"), data: Node(.nan), hash: nil),
             #"invalid value at "/x": numbers must be finite (no NaN or infinity)"#),
            (.put(path: Path("x"), data: Node(.string("v"), priority: .bool(true)), hash: nil),
             #"invalid priority at "/x": a priority must be a string or a number, not a boolean"#),
            (.merge(path: Path("x"), data: [UpdateEntry(Path("fine"), Node(1)), UpdateEntry(Path("y"), badKey)]),
             ##"invalid key "a.b" in "/x/y/ok/a.b": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##),
            (.onDisconnectPut(path: Path("x"), data: badKey),
             ##"invalid key "a.b" in "/x/ok/a.b": keys must not contain ".", "$", "#", "[", "]" or "/" (found ".")"##),
        ]
        for (i, (request, message)) in cases.enumerated() {
            client.request(i + 1, request)
            let refused = try XCTUnwrap(client.waitFor(response: i + 1), "request \(i + 1)")
            XCTAssertEqual(refused.status, "invalid_data", "request \(i + 1)")
            XCTAssertEqual(refused.message, message, "request \(i + 1)")
        }
        client.transport.close()
        XCTAssertTrue(database.value(at: .root).isEmpty, "nothing refused was written, now or at disconnect")
    }

    /// setPriority's wire form: a put at PATH/.priority, a string, a number or null.
    func testPriorityWrites() throws {
        let client = Client(database)
        client.request(1, .put(path: Path("a"), data: Node(1), hash: nil))
        client.request(2, .put(path: Path("a/.priority"), data: Node(5), hash: nil))
        XCTAssertEqual(client.waitFor(response: 2)?.status, "ok")
        XCTAssertEqual(JSONWriter.string(database.value(at: Path("a")), options: .init(export: true)), #"{".value":1,".priority":5}"#)
        client.request(3, .put(path: Path("a/.priority"), data: Node(true), hash: nil))
        XCTAssertEqual(client.waitFor(response: 3)?.status, "invalid_data")
    }

    /// A REST PUT's answer: the value as the write left it, server values resolved, not the
    /// value of a read made once it is durable (a write queued behind it showed through).
    /// A refusal says which rule decided, unless refusals are kept to the log (a server
    /// reachable from other machines): a trace may show data the rules read.
    func testRefusalsAreExplainedUnlessKeptToTheLog() throws {
        let rules = try SecurityRules(parsing: #"{"rules": {"secret": {".read": "root.child('pin').val() == auth.token.pin"}}}"#)
        let pin = Node(1234)
        for toClients in [true, false] {
            database.close()
            let logged = Mutex<[String]>([])
            database = try Database(folder: temporaryFolder(), explanations: RuleExplanations(toClients: toClients, log: { line in
                logged.withLock { $0.append(line) }
            }))
            database.replaceRules(rules)
            database.write(Path("pin"), pin) { _ in }
            let client = Client(database, identity: .user(uid: "eve", claims: .object([("pin", .number(1))]), expires: nil))
            client.request(1, .get(path: Path("secret"), query: nil))
            let expected = toClients
                ? "Permission denied: no .read rule allows this read: /secret/.read: root.child('pin').val() == auth.token.pin → 1234 == 1 → false"
                : "Permission denied"
            XCTAssertEqual(client.waitFor(response: 1), .error(.permissionDenied, expected))
            // The log has the whole of it either way.
            XCTAssertEqual(logged.withLock { $0 }, [
                "rules: denied read of /secret as uid eve: /secret/.read: root.child('pin').val() == auth.token.pin → 1234 == 1 → false",
            ])
            client.transport.close()
        }
    }

    func testAWriteAnswersWithWhatItWroteNotWhatFollowed() throws {
        database.close()
        database = try Database(folder: temporaryFolder(), clock: { 1_700_000_000_000 })
        let answered = expectation(description: "answered")
        final class Answer: @unchecked Sendable { var value: Response? }  // set once, read after the wait
        let answer = Answer()
        database.write(Path("a"), try JSONReader.parse(#"{"at": {".sv": "timestamp"}, "n": 1}"#)) {
            answer.value = $0
            answered.fulfill()
        }
        database.submit(.put(path: Path("a/n"), data: Node(2), hash: nil)) { _ in }
        wait(for: [answered], timeout: 10)
        XCTAssertEqual(answer.value.map { JSONWriter.string($0.data, options: .init()) }, #"{"at":1700000000000,"n":1}"#)
        XCTAssertEqual(database.value(at: Path("a/n")), Node(2))
    }
}
