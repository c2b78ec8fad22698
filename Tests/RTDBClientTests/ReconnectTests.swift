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
            guard case .request(_, let request) = message else { return }
            lock.lock()
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
            func send(_ message: Message) { inner.send(message) }
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

    override func tearDown() {
        repos.forEach { $0.close() }
        database.close()
    }

    func connect() -> Repo {
        let server = self.server
        let repo = Repo(connector: { server.connect(host: $0, lastSession: $1) },
                        reconnect: ReconnectPolicy(minDelay: 0.01, maxDelay: 0.05))
        repos.append(repo)
        XCTAssertTrue(waitUntil { repo.isConnected })
        return repo
    }

    func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() >= deadline { return false }
            usleep(2_000)
        }
        return true
    }

    func testListensAndOfflineWritesSurviveALostConnection() throws {
        let watcher = connect()
        let writer = Repo(transport: { let (c, s) = InProcessTransport.pair(); database.accept(s); return c }())
        repos.append(writer)
        let events = LiveEventTests.Recorder()
        let connected = LiveEventTests.Recorder()
        watcher.listen(QuerySpec(path: Path("items")), events.registration)
        watcher.listen(QuerySpec(path: Path(".info/connected")), connected.registration)
        XCTAssertEqual(events.take(1), ["value - - null"])
        XCTAssertEqual(connected.take(1), ["value - - true"])

        server.setDown(true)
        server.dropAll()
        XCTAssertEqual(connected.take(1), ["value - - false"])
        // Offline: the write is seen locally at once and waits for the server.
        watcher.set(Path("items/a"), Node(1))
        XCTAssertEqual(events.take(2), ["child_added a - 1", #"value - - {"a":1}"#])
        writer.set(Path("items/b"), Node(2))
        XCTAssertEqual(writer.waitForPendingWrites(timeout: 10), 0)
        XCTAssertEqual(watcher.waitForPendingWrites(timeout: 0.2), 1)
        XCTAssertTrue(database.value(at: Path("items/a")).isEmpty)

        server.setDown(false)
        XCTAssertEqual(connected.take(1), ["value - - true"])
        XCTAssertEqual(watcher.waitForPendingWrites(timeout: 10), 0)
        XCTAssertEqual(database.value(at: Path("items/a")), Node(1))
        // The listen was restored: the other client's write made while away arrives.
        XCTAssertEqual(events.take(2), ["child_added b a 2", #"value - - {"a":1,"b":2}"#])
        // Reconnections name the previous session.
        server.lock.lock()
        let asked = server.asked
        server.lock.unlock()
        XCTAssertGreaterThanOrEqual(asked.count, 3)
        XCTAssertNil(asked[0].lastSession)
        XCTAssertNotNil(asked.last?.lastSession)
    }

    func testACredentialIsSentFirstOnEveryConnection() throws {
        let repo = connect()
        let answered = expectation(description: "auth")
        var outcome: Result<Void, DatabaseError>?
        repo.authenticate(token: "owner", google: true) { outcome = $0; answered.fulfill() }
        wait(for: [answered], timeout: 10)
        XCTAssertNoThrow(try outcome?.get())
        let recorder = LiveEventTests.Recorder()
        repo.listen(QuerySpec(path: Path("a")), recorder.registration)
        XCTAssertEqual(recorder.take(1), ["value - - null"])
        server.setDown(true)
        server.dropAll()
        XCTAssertTrue(waitUntil { !repo.isConnected })
        repo.set(Path("a"), Node(1))
        server.setDown(false)
        XCTAssertEqual(repo.waitForPendingWrites(timeout: 10), 0)
        server.lock.lock()
        let requests = server.requests
        server.lock.unlock()
        XCTAssertEqual(requests.first, ["gauth", "q"])
        XCTAssertEqual(requests.last, ["gauth", "q", "p"])
    }

    func testARevokedCredentialIsDroppedAndTheClientReconnectsWithoutIt() throws {
        let repo = connect()
        let answered = expectation(description: "auth")
        repo.authenticate(token: "owner", google: false) { _ in answered.fulfill() }
        wait(for: [answered], timeout: 10)
        server.sendToAll(.push(.authRevoked(status: "expired_token", reason: "Auth token is expired.")))
        XCTAssertTrue(waitUntil { repo.credentialRevoked != nil })
        XCTAssertEqual(repo.credentialRevoked, "expired_token: Auth token is expired.")
        repo.set(Path("after"), Node(1))
        XCTAssertEqual(repo.waitForPendingWrites(timeout: 10), 0)
        server.lock.lock()
        let requests = server.requests
        server.lock.unlock()
        XCTAssertEqual(requests.first, ["auth"])
        XCTAssertEqual(requests.last, ["p"], "the new connection goes on without the credential")
    }

    func testARestoredListenRaisesNoEventsForUnchangedData() throws {
        let watcher = connect()
        watcher.set(Path("big"), try JSONReader.parse(#"{"a":1,"b":{"c":2}}"#))
        XCTAssertEqual(watcher.waitForPendingWrites(timeout: 10), 0)
        let events = LiveEventTests.Recorder()
        watcher.listen(QuerySpec(path: Path("big")), events.registration)
        XCTAssertEqual(events.take(3).count, 3)
        server.dropAll()
        XCTAssertTrue(waitUntil { !watcher.isConnected })
        XCTAssertTrue(waitUntil { watcher.isConnected })
        watcher.set(Path("big/d"), Node(3))
        XCTAssertEqual(watcher.waitForPendingWrites(timeout: 10), 0)
        // Only the new child: the restored listen raised nothing of its own.
        XCTAssertEqual(events.take(2), ["child_added d b 3", #"value - - {"a":1,"b":{"c":2},"d":3}"#])
    }

    func testOfflineReadsUseWhatIsHeldOrFail() throws {
        let repo = connect()
        repo.offlineReadTimeout = 0.2
        repo.set(Path("held"), Node("x"))
        let recorder = LiveEventTests.Recorder()
        repo.listen(QuerySpec(path: Path("held")), recorder.registration)
        XCTAssertEqual(recorder.take(1), [#"value - - "x""#])
        server.setDown(true)
        server.dropAll()
        XCTAssertTrue(waitUntil { !repo.isConnected })
        XCTAssertEqual(try read(repo, "held").get(), Node("x"))
        XCTAssertEqual(read(repo, "elsewhere"), .failure(DatabaseError(code: "DISCONNECTED", message: "Client is offline.")))
    }

    func read(_ repo: Repo, _ path: String) -> Result<Node, DatabaseError> {
        let done = expectation(description: "get")
        var result: Result<Node, DatabaseError>!
        repo.get(Path(path)) { result = $0; done.fulfill() }
        wait(for: [done], timeout: 10)
        return result
    }

    func testARedirectSendsTheClientToTheNamedHost() {
        server.redirectTo = "s-elsewhere.example:9000"
        let repo = connect()
        server.lock.lock()
        let hosts = server.asked.map(\.host)
        server.lock.unlock()
        XCTAssertEqual(Array(hosts.prefix(2)), [nil, "s-elsewhere.example:9000"])
        XCTAssertTrue(repo.isConnected)
    }

    func testAFirstConnectionThatFailsIsReported() {
        server.setDown(true)
        let repo = Repo(connector: { [server] in server.connect(host: $0, lastSession: $1) },
                        reconnect: ReconnectPolicy(minDelay: 0.01, maxDelay: 0.05))
        repos.append(repo)
        XCTAssertTrue(waitUntil { repo.neverConnected })
        XCTAssertFalse(repo.isClosed, "it keeps trying")
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
