import Foundation
import RTDBData
import RTDBProtocol

// Follows the Firebase JS SDK's Repo (core/Repo.ts).

/// The client core: the one owner of a connection's state. Every call hops onto a serial
/// queue; completions and events are delivered on that queue.
///
/// Writes go into the sync tree first (listeners see them at once), then to the server; the
/// acknowledgement removes them from the pending writes, a rejection reverts them with
/// events. Listens register with the sync tree, which asks the server for what it lacks.
public final class Repo: @unchecked Sendable {
    let queue = DispatchQueue(label: "rtdb.repo")
    private let connection: PersistentConnection
    private var syncTree: SyncTree!
    /// `.info/connected` and `.info/serverTimeOffset`, kept locally.
    fileprivate var infoTree: SyncTree!
    private let infoProvider = InfoListenProvider()
    private var infoData = Node.empty
    private var pushIDs = PushIDGenerator()
    private var nextWriteID = 0
    private var pendingWrites = 0
    private var waiters = 0
    private let idle = NSCondition()
    /// Writes sent and not yet acknowledged at most; more wait (flow control for scripts).
    public var maxPendingWrites = 10_000

    /// A client that connects through `connector`, and again after losing the connection
    /// as `reconnect` says.
    public init(connector: @escaping Connector, reconnect: ReconnectPolicy = .standard) {
        connection = PersistentConnection(connector: connector, policy: reconnect, queue: queue)
        queue.sync {
            syncTree = SyncTree(listenProvider: self)
            infoTree = SyncTree(listenProvider: infoProvider)
            infoProvider.repo = self
            updateInfo("connected", Node(false))
            // Weak: the connection's close can be reported after the Repo is gone.
            connection.onConnectedChange = { [weak self] connected in
                guard let self else { return }
                updateInfo("connected", Node(connected))
                updateInfo("serverTimeOffset", Node(connection.serverTimeOffset.rounded()))
            }
            connection.onPush = { [weak self] push in self?.receive(push) }
            connection.start()
        }
    }

    /// A client over one transport: when it closes, the client is closed.
    public convenience init(transport: Transport) {
        // Without reconnection the connector is asked once.
        self.init(connector: { _, _ in transport }, reconnect: .never)
    }

    // MARK: Listening

    /// Registers a listener; its first events (the current data, if known) follow at once.
    public func listen(_ query: QuerySpec, _ registration: EventRegistration) {
        queue.async { [self] in
            let tree = query.path.isInfo ? infoTree! : syncTree!
            raise(tree.addRegistration(registration, for: query))
        }
    }

    public func unlisten(_ query: QuerySpec, _ registration: EventRegistration) {
        queue.async { [self] in
            let tree = query.path.isInfo ? infoTree! : syncTree!
            for (registration, error) in tree.removeRegistration(registration, for: query) { registration.cancel(error) }
        }
    }

    private func raise(_ events: [Event]) {
        for event in events { event.registration.callback(event) }
    }

    private func receive(_ push: Push) {
        switch push {
        case let .data(path, data, tag):
            raise(tag.map { syncTree.applyTaggedOverwrite(path, data, tag: $0) } ?? syncTree.applyServerOverwrite(path, data))
        case let .merge(path, updates, tag):
            let entries = updates.map { ($0.path, $0.value) }
            raise(tag.map { syncTree.applyTaggedMerge(path, entries, tag: $0) } ?? syncTree.applyServerMerge(path, entries))
        case let .listenRevoked(path, query):
            let error = DatabaseError(status: "permission_denied", message: SyncTree.message(forStatus: "permission_denied"))
            let spec = QuerySpec(path: path, params: query ?? .default)
            for (registration, error) in syncTree.removeRegistration(nil, for: spec, error: error) { registration.cancel(error) }
        case .authRevoked:
            break  // the connection handles it
        }
    }

    private func updateInfo(_ key: String, _ value: Node) {
        infoData = infoData.updatingChild(ChildKey(key), value)
        raise(infoTree.applyServerOverwrite(Path(keys: [".info", key]), value))
    }

    fileprivate func infoValue(at path: Path) -> Node { infoData.child(at: path.dropFirst()) }

    // MARK: Credentials

    /// Authenticates now and after every reconnection: an ID token or database secret, or
    /// with `google` an OAuth2 access token. `completion` hears the first answer.
    public func authenticate(token: String, google: Bool, completion: @escaping (Result<Void, DatabaseError>) -> Void) {
        queue.async { [self] in
            var answered = false
            connection.authenticate(token: token, google: google) { response in
                guard !answered else { return }
                answered = true
                completion(response.isOK ? .success(()) : .failure(DatabaseError(status: response.status, message: response.message)))
            }
        }
    }

    // MARK: Reads

    /// Reads the value at `path` from the server; `.info` is answered locally, and so is a
    /// path this client already holds completely (it listens there) while offline.
    public func get(_ path: Path, completion: @escaping (Result<Node, DatabaseError>) -> Void) {
        queue.async { [self] in
            if path.isInfo { return completion(.success(infoValue(at: path))) }
            if !connection.connected, let cached = syncTree.completeEventCache(at: path, knownOnly: true) {
                return completion(.success(cached))
            }
            connection.send(.get(path: path, query: nil)) { response in
                // An answer without a value (`""`) is the empty string; a missing value is `null`.
                let value = response.carriesValue ? response.data : Node(.string(""))
                completion(response.isOK ? .success(value) : .failure(DatabaseError(status: response.status, message: response.message)))
            }
        }
    }

    public var isConnected: Bool { queue.sync { connection.connected } }
    /// Closed by `close()`, by the server for good, or (without reconnection) lost.
    public var isClosed: Bool { queue.sync { connection.closed } }
    /// The first connection has not come up, and at least one attempt failed.
    public var neverConnected: Bool { queue.sync { !connection.everConnected && (connection.failedAttempts > 0 || connection.closed) } }
    /// How long a read made while offline waits for a connection before failing.
    public var offlineReadTimeout: TimeInterval {
        get { queue.sync { connection.offlineReadTimeout } }
        set { queue.sync { connection.offlineReadTimeout = newValue } }
    }
    /// Why the server stopped accepting this client's credential, if it did.
    public var credentialRevoked: String? { queue.sync { connection.credentialRevoked } }
    /// Why the server ended the connection for good, if it did.
    public var shutdownReason: String? { queue.sync { connection.shutdownReason } }
    public var serverTimeOffset: Double { queue.sync { connection.serverTimeOffset } }

    /// The server's clock as this client estimates it, in milliseconds.
    private var serverNow: Double { (Date().timeIntervalSince1970 * 1000 + connection.serverTimeOffset).rounded() }

    // MARK: Writes

    public func set(_ path: Path, _ value: Node, completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) {
        write(completion) { [self] id in
            // Server values resolve locally for the optimistic view; the raw value is sent.
            var local = value
            if value.containsServerValues {
                local = value.resolvingServerValues(now: serverNow, existing: syncTree.completeEventCache(at: path) ?? .empty)
            }
            return (syncTree.applyUserOverwrite(path, local, writeID: id), .put(path: path, data: value, hash: nil))
        }
    }

    public func update(_ path: Path, _ updates: [Update], completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) {
        if updates.isEmpty { return queue.async { completion(.success(())) } }
        write(completion) { [self] id in
            let now = serverNow
            let local = updates.map { update -> (Path, Node) in
                guard update.value.containsServerValues else { return (update.path, update.value) }
                let existing = syncTree.completeEventCache(at: path.appending(update.path)) ?? .empty
                return (update.path, update.value.resolvingServerValues(now: now, existing: existing))
            }
            return (syncTree.applyUserMerge(path, local, writeID: id), .merge(path: path, data: updates))
        }
    }

    public func setPriority(_ path: Path, _ priority: LeafValue?, completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) {
        set(path.child(".priority"), priority.map { Node($0) } ?? .empty, completion: completion)
    }

    /// Writes `value` under a new chronological key and returns the key at once.
    @discardableResult
    public func push(_ path: Path, _ value: Node, completion: @escaping (Result<Void, DatabaseError>) -> Void = { _ in }) -> String {
        let key = queue.sync { pushIDs.next(now: Int64(serverNow)) }
        if !value.isEmpty { set(path.child(key), value, completion: completion) } else { queue.async { completion(.success(())) } }
        return key
    }

    /// Applies a write locally and sends it; `body` gets the write id and returns the local
    /// events and the request.
    private func write(_ completion: @escaping (Result<Void, DatabaseError>) -> Void, _ body: @escaping (Int) -> ([Event], Request)) {
        idle.lock()
        while pendingWrites >= maxPendingWrites { idle.wait() }
        pendingWrites += 1
        idle.unlock()
        queue.async { [self] in
            let id = nextWriteID
            nextWriteID += 1
            let (events, request) = body(id)
            raise(events)
            connection.send(request) { [self] response in
                raise(syncTree.ackUserWrite(id, revert: !response.isOK))
                finishWrite()
                completion(response.isOK ? .success(()) : .failure(DatabaseError(status: response.status, message: response.message)))
            }
        }
    }

    private func finishWrite() {
        idle.lock()
        let wasFull = pendingWrites >= maxPendingWrites
        pendingWrites -= 1
        if waiters > 0 || wasFull { idle.broadcast() }
        idle.unlock()
    }

    /// Writes sent but not yet acknowledged.
    public var pendingWriteCount: Int {
        idle.lock()
        defer { idle.unlock() }
        return pendingWrites
    }

    /// Blocks until every write made so far is acknowledged or rejected, or `timeout` passes.
    /// Returns the number still unacknowledged.
    @discardableResult
    public func waitForPendingWrites(timeout: TimeInterval) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        idle.lock()
        defer { idle.unlock() }
        waiters += 1
        while pendingWrites > 0 {
            if !idle.wait(until: deadline) { break }
        }
        waiters -= 1
        return pendingWrites
    }

    /// Returns once every event already produced has been delivered.
    public func flushEvents() { queue.sync {} }

    public func close() {
        queue.sync { connection.close() }
    }

    /// Drops the current connection as a network failure would; the client reconnects as
    /// its policy says.
    public func interruptConnection() {
        queue.sync { connection.interrupt() }
    }
}

extension Repo: ListenProvider {
    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (String) -> [Event]) -> [Event] {
        let params = query.params.isDefault ? nil : query.params
        connection.listen(query.path, query: params, tag: tag, hash: hash) { [self] status in
            raise(complete(status))
        }
        return []
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {
        connection.unlisten(query.path, query: query.params.isDefault ? nil : query.params, tag: tag)
    }
}

/// `.info` data never goes to a server: a listen is complete at once with what is known.
final class InfoListenProvider: ListenProvider {
    weak var repo: Repo?
    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (String) -> [Event]) -> [Event] {
        guard let repo, let tree = repo.infoTree else { return [] }
        // The data first, then the listen is complete.
        let node = repo.infoValue(at: query.path)
        let events = node.isEmpty ? [] : tree.applyServerOverwrite(query.path, node)
        repo.queue.async { for event in complete("ok") { event.registration.callback(event) } }
        return events
    }
    func stopListening(_ query: QuerySpec, tag: Int?) {}
}
