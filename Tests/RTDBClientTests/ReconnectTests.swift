import Foundation
import XCTest
import RTDBData
import RTDBProtocol
import RTDBEngine
@testable import RTDBClient

/// Losing the connection and getting it back: listens and writes survive, `.info/connected`
/// follows, redirects are obeyed, and the wait between attempts grows.
final class ReconnectTests: XCTestCase {
    var database: Database!
    var repos: [Repo] = []
    let server = FlakyServer()

    /// Connects clients to the engine in process; can refuse connections (as a server that
    /// is down) and drop the ones it has.
    final class FlakyServer: @unchecked Sendable {
        let lock = NSLock()
        var database: Database!
        var down = false
        var serverEnds: [InProcessTransport] = []
        var asked: [(host: String?, lastSession: String?)] = []
        /// Plays a server that redirects the first connection to `redirectTo`.
        var redirectTo: String?
        /// Answers are lost on the way to the client while set (the server did send them).
        var answersLost = false
        /// The origin of each write received, in order.
        var origins: [WriteOrigin?] = []

        func connect(host: String?, lastSession: String?) -> Transport {
            lock.lock(); defer { lock.unlock() }
            asked.append((host, lastSession))
            let (client, server) = InProcessTransport.pair()
            if down {
                server.close()
            } else if let target = redirectTo {
                redirectTo = nil
                server.start(onMessage: { _ in }, onClose: {})
                server.send(.reset(host: target))
            } else {
                database.accept(Recording(server, into: self, connection: accepted))
                accepted += 1
                serverEnds.append(server)
            }
            return client
        }

        /// The actions of the requests servers received, in order, one list per connection.
        var requests: [[String]] = []
        var accepted = 0

        func record(_ message: Message, connection: Int) {
            guard case .request(_, let request, let origin) = message else { return }
            lock.lock()
            if case .put = request { origins.append(origin) }
            while requests.count <= connection { requests.append([]) }
            requests[connection].append(request.action)
            lock.unlock()
        }

        /// A server end that notes what the client sent.
        final class Recording: Transport, @unchecked Sendable {
            let inner: Transport
            let connection: Int
            weak var server: FlakyServer?
            init(_ inner: Transport, into server: FlakyServer, connection: Int) {
                self.inner = inner
                self.server = server
                self.connection = connection
            }
            func start(onMessage: @escaping @Sendable (Message) -> Void, onClose: @escaping @Sendable () -> Void) {
                inner.start(onMessage: { [weak self] message in
                    if let self { server?.record(message, connection: connection) }
                    onMessage(message)
                }, onClose: onClose)
            }
            func send(_ message: Message) {
                if case .response = message, let server, server.lock.withLock({ server.answersLost }) { return }
                inner.send(message)
            }
            func close() { inner.close() }
        }

        /// Drops every open connection, as a network failure would.
        func dropAll() {
            lock.lock()
            let ends = serverEnds
            serverEnds = []
            lock.unlock()
            ends.forEach { $0.close() }
        }

        func setDown(_ value: Bool) { lock.lock(); down = value; lock.unlock() }

        /// Sends `message` to every connected client, as the server would.
        func sendToAll(_ message: Message) {
            lock.lock()
            let ends = serverEnds
            lock.unlock()
            ends.forEach { $0.send(message) }
        }
    }

    override func setUpWithError() throws {
        database = try Database(folder: NSTemporaryDirectory() + "rtdb-reconnect-" + UUID().uuidString)
        server.database = database
    }

    override func tearDown() async throws {
        for repo in repos { await repo.close() }
        database.close()
    }

    func connect() async -> Repo {
        let server = self.server
        let repo = Repo(connector: { server.connect(host: $0, lastSession: $1) },
                        reconnect: ReconnectPolicy(minDelay: 0.01, maxDelay: 0.05))
        repos.append(repo)
        await assertEventually { await repo.isConnected }
        return repo
    }


    func testListensAndOfflineWritesSurviveALostConnection() async throws {
        let watcher = await connect()
        let writer = Repo(transport: { let (c, s) = InProcessTransport.pair(); database.accept(s); return c }())
        repos.append(writer)
        let events = LiveEventTests.Recorder()
        let connected = LiveEventTests.Recorder()
        await watcher.listen(QuerySpec(path: Path("items")), events.registration)
        await watcher.listen(QuerySpec(path: Path(".info/connected")), connected.registration)
        XCTAssertEqual(events.take(1), ["value - - null"])
        XCTAssertEqual(connected.take(1), ["value - - true"])

        server.setDown(true)
        server.dropAll()
        XCTAssertEqual(connected.take(1), ["value - - false"])
        // Offline: the write is seen locally at once and waits for the server.
        try await watcher.set(Path("items/a"), Node(1))
        XCTAssertEqual(events.take(2), ["child_added a - 1", #"value - - {"a":1}"#])
        try await writer.set(Path("items/b"), Node(2))
        assertEqual(await writer.waitForPendingWrites(idle: 10), 0)
        assertEqual(await watcher.waitForPendingWrites(idle: 0.2), 1)
        XCTAssertTrue(database.value(at: Path("items/a")).isEmpty)

        server.setDown(false)
        XCTAssertEqual(connected.take(1), ["value - - true"])
        assertEqual(await watcher.waitForPendingWrites(idle: 10), 0)
        XCTAssertEqual(database.value(at: Path("items/a")), Node(1))
        // The listen was restored: the other client's write made while away arrives.
        XCTAssertEqual(events.take(2), ["child_added b a 2", #"value - - {"a":1,"b":2}"#])
        // Reconnections name the previous session.
        let asked = server.lock.withLock { server.asked }
        XCTAssertGreaterThanOrEqual(asked.count, 3)
        XCTAssertNil(asked[0].lastSession)
        XCTAssertNotNil(asked.last?.lastSession)
    }

    /// Writes the server applied, whose answers the connection lost, are sent again on the
    /// next one, named by the same origin: the server answers them and applies none twice.
    func testAWriteWhoseAnswerWasLostIsAppliedOnce() async throws {
        let repo = await connect()
        server.lock.withLock { server.answersLost = true }
        for _ in 0..<3 { _ = try await repo.set(Path("cnt"), Node(.serverValue(.increment(1)))) }
        await assertEventually { self.database.value(at: Path("cnt")) == Node(3) }
        assertEqual(await repo.waitForPendingWrites(idle: 0.2), 3)
        server.lock.withLock { server.answersLost = false }
        server.dropAll()
        assertEqual(await repo.waitForPendingWrites(idle: 10), 0)
        XCTAssertEqual(database.value(at: Path("cnt")), Node(3))
        let origins = server.lock.withLock { server.origins }
        XCTAssertEqual(origins.count, 6)
        let client = repo.clientName
        // Each sent twice, its floor the lowest write still unanswered then.
        XCTAssertEqual(origins, [1, 1, 1, 1, 1, 1].map { WriteOrigin(client: client, floor: $0) })
    }

    func testACredentialIsSentFirstOnEveryConnection() async throws {
        let repo = await connect()
        try await repo.authenticate(token: "owner", google: true)
        let recorder = LiveEventTests.Recorder()
        await repo.listen(QuerySpec(path: Path("a")), recorder.registration)
        XCTAssertEqual(recorder.take(1), ["value - - null"])
        server.setDown(true)
        server.dropAll()
        await assertEventually { await !repo.isConnected }
        try await repo.set(Path("a"), Node(1))
        server.setDown(false)
        assertEqual(await repo.waitForPendingWrites(idle: 10), 0)
        let requests = server.lock.withLock { server.requests }
        XCTAssertEqual(requests.first, ["gauth", "q"])
        XCTAssertEqual(requests.last, ["gauth", "q", "p"])
    }

    func testARevokedCredentialIsDroppedAndTheClientReconnectsWithoutIt() async throws {
        let repo = await connect()
        try await repo.authenticate(token: "owner", google: false)
        server.sendToAll(.push(.authRevoked(status: "expired_token", reason: "Auth token is expired.")))
        await assertEventually { await repo.credentialRevoked != nil }
        assertEqual(await repo.credentialRevoked, "expired_token: Auth token is expired.")
        try await repo.set(Path("after"), Node(1))
        assertEqual(await repo.waitForPendingWrites(idle: 10), 0)
        let requests = server.lock.withLock { server.requests }
        XCTAssertEqual(requests.first, ["auth"])
        XCTAssertEqual(requests.last, ["p"], "the new connection goes on without the credential")
    }

    func testARestoredListenRaisesNoEventsForUnchangedData() async throws {
        let watcher = await connect()
        try await watcher.set(Path("big"), try JSONReader.parse(#"{"a":1,"b":{"c":2}}"#))
        assertEqual(await watcher.waitForPendingWrites(idle: 10), 0)
        let events = LiveEventTests.Recorder()
        await watcher.listen(QuerySpec(path: Path("big")), events.registration)
        XCTAssertEqual(events.take(3).count, 3)
        server.dropAll()
        await assertEventually { await !watcher.isConnected }
        await assertEventually { await watcher.isConnected }
        try await watcher.set(Path("big/d"), Node(3))
        assertEqual(await watcher.waitForPendingWrites(idle: 10), 0)
        // Only the new child: the restored listen raised nothing of its own.
        XCTAssertEqual(events.take(2), ["child_added d b 3", #"value - - {"a":1,"b":{"c":2},"d":3}"#])
    }

    func testOfflineReadsUseWhatIsHeldOrFail() async throws {
        let repo = await connect()
        await repo.setOfflineReadTimeout(0.2)
        try await repo.set(Path("held"), Node("x"))
        let recorder = LiveEventTests.Recorder()
        await repo.listen(QuerySpec(path: Path("held")), recorder.registration)
        XCTAssertEqual(recorder.take(1), [#"value - - "x""#])
        // That first event may come from the write alone: a read answered by the server after
        // the listen was sent also means the listen's data has arrived (answers come in order).
        assertEqual(try await repo.get(Path("held")), Node("x"))
        server.setDown(true)
        server.dropAll()
        await assertEventually { await !repo.isConnected }
        assertEqual(try await read(repo, "held").get(), Node("x"))
        assertEqual(await read(repo, "elsewhere"), .failure(DatabaseError(code: "DISCONNECTED", message: "Client is offline.")))
    }

    func read(_ repo: Repo, _ path: String) async -> Result<Node, DatabaseError> {
        do {
            return .success(try await repo.get(Path(path)))
        } catch {
            return .failure(error as! DatabaseError)
        }
    }

    func testARedirectSendsTheClientToTheNamedHost() async throws {
        server.redirectTo = "s-elsewhere.example:9000"
        let repo = await connect()
        let hosts = server.lock.withLock { server.asked.map(\.host) }
        XCTAssertEqual(Array(hosts.prefix(2)), [nil, "s-elsewhere.example:9000"])
        assertEqual(await repo.isConnected, true)
    }

    func testAFirstConnectionThatFailsIsReported() async throws {
        server.setDown(true)
        let repo = Repo(connector: { [server] in server.connect(host: $0, lastSession: $1) },
                        reconnect: ReconnectPolicy(minDelay: 0.01, maxDelay: 0.05))
        repos.append(repo)
        await assertEventually { await repo.neverConnected }
        assertEqual(await repo.isClosed, false, "it keeps trying")
    }

    func testBackoffGrowsToItsCapAndResetsAfterAStableConnection() {
        var backoff = Backoff(policy: ReconnectPolicy(minDelay: 1, maxDelay: 5, multiplier: 2, resetAfter: 30))
        let start = Date(timeIntervalSince1970: 0)
        var waits: [TimeInterval] = []
        for _ in 0..<5 {
            backoff.attempting(at: start)
            waits.append(backoff.nextWait(now: start, random: 1))
        }
        XCTAssertEqual(waits, [1, 2, 4, 5, 5])
        // Time already spent since the attempt counts toward the wait; jitter scales it.
        backoff.attempting(at: start)
        XCTAssertEqual(backoff.nextWait(now: start.addingTimeInterval(2), random: 0.5), 1.5)
        backoff.established(at: start)
        backoff.attempting(at: start.addingTimeInterval(31))
        XCTAssertEqual(backoff.nextWait(now: start.addingTimeInterval(31), random: 1), 1)
    }
}
