import Foundation
import Synchronization
import XCTest
import RTDBData
import RTDBProtocol
@testable import RTDBClient

/// The connection's states (connecting, connected, waiting, closed) and what each move does
/// to what is outstanding, against transports the test drives message by message.
final class PersistentConnectionTests: XCTestCase {
    /// One end of a connection the test plays the server of: it records what the client
    /// sends, and delivers messages or a close when told.
    final class ScriptedTransport: Transport, Sendable {
        private struct State {
            var sent: [Message] = []
            var onMessage: (@Sendable (Message) -> Void)?
            var onClose: (@Sendable () -> Void)?
            var closed = false
        }

        private let state = Mutex(State())
        let host: String?
        let lastSessionID: String?

        init(host: String?, lastSessionID: String?) {
            self.host = host
            self.lastSessionID = lastSessionID
        }

        func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
            state.withLock { $0.onMessage = onMessage; $0.onClose = onClose }
        }

        func send(_ message: Message) {
            state.withLock { $0.sent.append(message) }
        }

        /// The client closed it.
        func close() {
            let onClose: (@Sendable () -> Void)? = state.withLock { state in
                guard !state.closed else { return nil }
                state.closed = true
                return state.onClose
            }
            onClose?()
        }

        var sent: [Message] { state.withLock { $0.sent } }
        var requests: [Request] { sent.compactMap { if case .request(_, let request, _) = $0 { return request } else { return nil } } }
        var isClosed: Bool { state.withLock { $0.closed } }

        /// The server says `message`.
        func deliver(_ message: Message) {
            state.withLock { $0.onMessage }?(message)
        }

        /// The server's hello.
        func hello(session: String = "s1", host: String = "") {
            deliver(.handshake(Handshake(timestamp: Int64(Date().timeIntervalSince1970 * 1000), host: host, sessionID: session)))
        }

        /// The server answers the request of `id`.
        func answer(_ id: Int, _ response: Response = .ok) {
            deliver(.response(id: id, response))
        }

        /// The network drops the connection.
        func drop() { close() }

        /// The request numbers of what the client sent, in order.
        var requestIDs: [Int] { sent.compactMap { if case .request(let id, _, _) = $0 { return id } else { return nil } } }
    }

    /// The connection's owner, as the Repo is: an actor on the queue the connection uses.
    final actor Owner {
        nonisolated let executor = QueueExecutor(label: "test.connection")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        let connection: PersistentConnection
        /// Every transport the connector made, in order.
        final class Made: Sendable {
            let list = Mutex<[ScriptedTransport]>([])
        }
        nonisolated let made = Made()
        var connectedChanges: [Bool] = []
        var responses: [String: Response] = [:]

        init(policy: ReconnectPolicy) {
            let made = self.made
            connection = PersistentConnection(connector: { host, session in
                let transport = ScriptedTransport(host: host, lastSessionID: session)
                made.list.withLock { $0.append(transport) }
                return transport
            }, policy: policy, queue: executor.queue)
            executor.queue.sync { self.assumeIsolated { $0.setUp() } }
        }

        private func setUp() {
            connection.reach = { [weak self] work in self?.assumeIsolated { work($0.connection) } }
            connection.onConnectedChange = { [weak self] connected in self?.assumeIsolated { $0.connectedChanges.append(connected) } }
            connection.offlineReadTimeout = 0.05
            connection.start()
        }

        /// Runs `body` on the connection's queue, in the owner's isolation, and returns.
        nonisolated func now<T: Sendable>(_ body: @Sendable (isolated Owner) -> T) -> T {
            executor.queue.sync { self.assumeIsolated { body($0) } }
        }

        /// Sends `request`; its answer is kept under `name`.
        func send(_ request: Request, as name: String) {
            connection.send(request) { [weak self] response in self?.assumeIsolated { $0.responses[name] = response } }
        }

        nonisolated var transports: [ScriptedTransport] { made.list.withLock { $0 } }
        nonisolated var last: ScriptedTransport? { transports.last }
    }

    private let fast = ReconnectPolicy(minDelay: 0.01, maxDelay: 0.02)

    /// Polls `condition` on the connection's queue until it holds (a hop, a timer).
    private func eventually(_ owner: Owner, timeout: TimeInterval = 10, _ condition: @escaping @Sendable (isolated Owner) -> Bool,
                            file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if owner.now(condition) { return }
            usleep(2_000)
        }
        XCTFail("the condition never held", file: file, line: line)
    }

    /// The server greets the client on `transport`; returns once the client is connected.
    private func greet(_ owner: Owner, on transport: ScriptedTransport, session: String = "s1", file: StaticString = #filePath, line: UInt = #line) {
        transport.hello(session: session)
        eventually(owner, { $0.connection.state == .connected }, file: file, line: line)
    }

    /// A client connected on its first transport.
    private func connectedOwner(policy: ReconnectPolicy? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> (Owner, ScriptedTransport) {
        let owner = Owner(policy: policy ?? fast)
        let transport = try XCTUnwrap(owner.last, file: file, line: line)
        greet(owner, on: transport, file: file, line: line)
        return (owner, transport)
    }

    func testConnectingQueuesUntilTheHelloThenSendsListensBeforeWrites() throws {
        let owner = Owner(policy: fast)
        XCTAssertEqual(owner.now { $0.connection.state }, .connecting)
        owner.now { owner in
            owner.send(.put(path: Path("a"), data: Node(1), hash: nil), as: "write")
            owner.connection.listen(Path("l"), query: nil, tag: nil, hash: { "h" }, onComplete: { _ in })
        }
        let transport = try XCTUnwrap(owner.last)
        XCTAssertEqual(transport.sent, [], "nothing goes before the server's hello")
        greet(owner, on: transport)
        XCTAssertEqual(transport.requests, [.listen(path: Path("l"), query: nil, tag: nil, hash: "h"),
                                            .put(path: Path("a"), data: Node(1), hash: nil)])
        XCTAssertEqual(owner.now { $0.connectedChanges }, [true])
        XCTAssertEqual(owner.now { $0.connection.sessionID }, "s1")
    }

    /// A lost connection waits, then connects again (naming the last session), and sends
    /// again what was not answered; a compare-and-set already sent fails instead, as it may
    /// have been applied.
    func testALostConnectionResendsWritesAndFailsCompareAndSets() throws {
        let (owner, first) = try connectedOwner()
        owner.now { owner in
            owner.send(.put(path: Path("w"), data: Node(1), hash: nil), as: "write")
            owner.send(.put(path: Path("c"), data: Node(2), hash: "abc"), as: "cas")
            owner.send(.put(path: Path("done"), data: Node(3), hash: nil), as: "answered")
        }
        first.answer(first.requestIDs[2])
        eventually(owner) { $0.responses["answered"] != nil }
        first.drop()
        eventually(owner) { $0.responses["cas"] != nil }
        XCTAssertEqual(owner.now { $0.responses["cas"]?.status }, .disconnected)
        XCTAssertNil(owner.now { $0.responses["write"] })
        XCTAssertEqual(owner.now { $0.connectedChanges }, [true, false])
        eventually(owner) { $0.transports.count == 2 }
        let second = try XCTUnwrap(owner.last)
        XCTAssertEqual(second.lastSessionID, "s1")
        XCTAssertEqual(owner.now { $0.connection.state }, .connecting)
        greet(owner, on: second, session: "s2")
        XCTAssertEqual(second.requests, [.put(path: Path("w"), data: Node(1), hash: nil)], "only the unanswered write, once")
        second.answer(second.requestIDs[0])
        eventually(owner) { $0.responses["write"] != nil }
        XCTAssertEqual(owner.now { $0.responses["write"]?.status }, .ok)
    }

    /// Without reconnection, losing the connection closes the client: everything
    /// outstanding fails, and later requests fail at once.
    func testWithoutReconnectionALostConnectionClosesEverything() throws {
        var once = fast
        once.enabled = false
        let (owner, transport) = try connectedOwner(policy: once)
        owner.now { $0.send(.put(path: Path("w"), data: Node(1), hash: nil), as: "write") }
        transport.drop()
        eventually(owner) { $0.connection.state == .closed }
        XCTAssertEqual(owner.now { $0.responses["write"]?.status }, .disconnected)
        owner.now { $0.send(.get(path: Path("r"), query: nil), as: "late") }
        XCTAssertEqual(owner.now { $0.responses["late"]?.status }, .disconnected)
        XCTAssertEqual(owner.transports.count, 1)
    }

    /// Offline by choice: no connection, writes queue, a read fails at once as offline;
    /// `goOnline` connects at once and sends the writes.
    func testOfflineByChoiceQueuesWritesAndGoingOnlineSendsThem() throws {
        let (owner, first) = try connectedOwner()
        owner.now { owner in
            owner.connection.goOffline()
            owner.send(.put(path: Path("w"), data: Node(1), hash: nil), as: "write")
            owner.send(.get(path: Path("r"), query: nil), as: "read")
        }
        XCTAssertTrue(first.isClosed)
        XCTAssertEqual(owner.now { $0.connection.state }, .waiting)
        eventually(owner) { $0.responses["read"] != nil }
        XCTAssertEqual(owner.now { $0.responses["read"] }, .error(.disconnected, DatabaseError.offline.message))
        usleep(50_000)
        XCTAssertEqual(owner.transports.count, 1, "no attempt while offline by choice")
        owner.now { $0.connection.goOnline() }
        XCTAssertEqual(owner.transports.count, 2)
        let second = try XCTUnwrap(owner.last)
        greet(owner, on: second)
        XCTAssertEqual(second.requests, [.put(path: Path("w"), data: Node(1), hash: nil)])
    }

    /// A redirect (`reset`) connects again at once, to the host named; a shutdown closes
    /// for good and says why.
    func testARedirectConnectsToTheNewHostAndAShutdownCloses() throws {
        let owner = Owner(policy: ReconnectPolicy(minDelay: 30, maxDelay: 30))
        let first = try XCTUnwrap(owner.last)
        first.deliver(.reset(host: "elsewhere.example"))
        eventually(owner) { $0.transports.count == 2 }
        XCTAssertEqual(owner.last?.host, "elsewhere.example", "at once, not after the 30 s backoff")
        let second = try XCTUnwrap(owner.last)
        greet(owner, on: second)
        second.deliver(.shutdown(reason: "the database was disabled"))
        eventually(owner) { $0.connection.state == .closed }
        XCTAssertEqual(owner.now { $0.connection.shutdownReason }, "the database was disabled")
        XCTAssertTrue(second.isClosed)
    }

    /// What an old transport says after the client moved on is ignored.
    func testAnOldTransportsLateMessagesAreIgnored() throws {
        let (owner, first) = try connectedOwner()
        owner.now { $0.connection.goOffline() }
        first.hello(session: "stale")
        first.deliver(.shutdown(reason: "stale"))
        usleep(50_000)
        XCTAssertEqual(owner.now { $0.connection.state }, .waiting)
        XCTAssertEqual(owner.now { $0.connection.sessionID }, "s1")
        XCTAssertNil(owner.now { $0.connection.shutdownReason })
    }

    /// A client whose credential is coming holds every connection until it has it; the
    /// credential then goes first on the connection.
    func testAwaitingACredentialHoldsTheConnection() throws {
        let owner = Owner(policy: fast)
        let first = try XCTUnwrap(owner.last)
        owner.now { owner in
            owner.connection.awaitCredential()
            owner.send(.put(path: Path("w"), data: Node(1), hash: nil), as: "write")
        }
        XCTAssertTrue(first.isClosed)
        XCTAssertEqual(owner.now { $0.connection.state }, .waiting)
        usleep(50_000)
        XCTAssertEqual(owner.transports.count, 1, "no attempt without the credential")
        owner.now { $0.connection.authenticate(token: "t0ken", google: false) { _ in } }
        XCTAssertEqual(owner.transports.count, 2)
        let second = try XCTUnwrap(owner.last)
        greet(owner, on: second)
        XCTAssertEqual(second.requests, [.auth(credential: "t0ken", google: false), .put(path: Path("w"), data: Node(1), hash: nil)])
    }
}
