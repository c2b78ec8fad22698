import Foundation
import RTDBData
import RTDBProtocol
import Synchronization

// Follows the Firebase JS SDK's Repo (core/Repo.ts).

/// The client core: the one owner of a connection's state (the sync tree, the pending
/// writes, the connection). An actor on its own serial queue; operations are `async`.
///
/// Writes go into the sync tree first (listeners see them at once), then to the server; the
/// acknowledgement removes them from the pending writes, a rejection reverts them with
/// events. Listens register with the sync tree, which asks the server for what it lacks.
///
/// Events are delivered on the core's queue to each registration's callback. A callback
/// cannot call back into the core synchronously (every entry point is isolated to the
/// actor), so no event handler and no caller can deadlock it.
public actor Repo {
    /// Transport callbacks and timers hop onto this queue, in order, and run isolated.
    nonisolated let executor = QueueExecutor(label: "rtdb.repo")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let connection: PersistentConnection
    /// How this client names its writes to a server that applies each once.
    nonisolated let clientName: String
    private let syncTree: SyncTree
    /// `.info/connected` and `.info/serverTimeOffset`, kept locally.
    private let infoTree: SyncTree
    private let serverListens: ServerListens
    private let infoListens: InfoListens
    private var nextWriteID = 0
    /// Flow control: at most 10,000 writes unanswered by default.
    private nonisolated let gate = WriteGate(limit: 10_000)
    /// Writes on their way to this Repo's queue, applied there in the order submitted.
    private nonisolated let submissions: QueueInbox<Submission>

    /// How long a write waits for room among the unanswered ones while none is answered;
    /// past it the write fails (`WriteStall`). Nil: as long as it takes.
    public nonisolated func setWriteTimeout(_ seconds: TimeInterval?) {
        gate.setPatience(seconds)
    }
    /// Where the server's warnings about a query go (one it has no index for).
    private nonisolated let queryWarning = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Tells `handler` what the server warns of a listen or a read: a query ordered by a
    /// child its rules declare no index for, as the official clients warn of a listen.
    public nonisolated func onQueryWarning(_ handler: (@Sendable (String) -> Void)?) {
        queryWarning.withLock { $0 = handler }
    }

    /// The warning an answer carries, said as the official clients say it; nil for none
    /// this client knows.
    nonisolated static func warning(_ warnings: [String], path: Path, query: QueryParams?) -> String? {
        guard warnings.contains("no_index") else { return nil }
        let index = query?.index.description ?? ".value"
        return "Using an unspecified index. Consider adding \".indexOn\": \"\(index)\" at \(path) to your security rules for better performance."
    }

    /// The server's clock (from the handshake) and push ids, read by writers on any executor.
    private nonisolated let clock = ServerClock()
    /// Waiting for the first connection to come up or fail.
    private var firstConnection: [OneShot<Bool>] = []
    private let transactions: TransactionQueue
    /// What the server will write when this connection ends.
    public private(set) var onDisconnectWrites = OnDisconnectWrites()
    /// Locations kept synced (`keepSynced`), each with its silent listen.
    private var keptSynced: [Path: EventRegistration] = [:]
    /// The disk cache (persistence), if this client keeps one.
    private let diskCache: DiskCache?
    private var commitScheduled = false
    /// The user's writes not yet answered, by write id, with their place in the disk queue
    /// (nil: not on disk) and their request's number in the connection.
    private var queuedWrites: [Int: (write: Write, row: Int64?, request: Int)] = [:]
    /// Writes kept from an earlier session, shown at once and sent when taken (after the
    /// caller has signed in: the rules must see them as their writer).
    private var restoredWrites: [(write: Write, row: Int64, cached: Bool, outcome: OneShot<Void>)] = []
    /// Kept writes that could not be read back.
    public private(set) var unreadableRestoredWrites = 0
    /// The disk cache was filled by an earlier session that reached the server.
    public private(set) var cacheHasBeenOnline = false

    /// A client that connects through `connector`, and again after losing the connection
    /// as `reconnect` says. With `cache`, what it receives and its queued writes are kept
    /// there, and what an earlier session kept is used (its queued writes are sent).
    public init(connector: @escaping Connector, reconnect: ReconnectPolicy = .standard, cache: sending DiskCache? = nil) {
        let connection = PersistentConnection(connector: connector, policy: reconnect, queue: executor.queue)
        submissions = QueueInbox(queue: executor.queue) { submitted in
            submitted.repo.assumeIsolated { $0.apply(submitted.write, outcome: submitted.outcome, cached: submitted.cached) }
        }
        let syncTree = SyncTree(listenProvider: nil)
        let clock = self.clock
        self.connection = connection
        clientName = connection.clientName
        self.syncTree = syncTree
        infoTree = SyncTree(listenProvider: nil)
        serverListens = ServerListens(connection: connection)
        transactions = TransactionQueue(syncTree: syncTree, send: { [unowned connection] request, completion in connection.send(request, completion: completion) },
                                        serverNow: { clock.now })
        infoListens = InfoListens()
        diskCache = cache
        // Started before anything a caller can ask is queued: what the transport delivers at
        // once (an in-process server's hello) is then handled before the first request. The
        // queue is not yet known to anyone else, so this wait cannot deadlock.
        executor.queue.sync { self.assumeIsolated { $0.start() } }
    }

    /// A client over one transport: when it closes, the client is closed.
    public init(transport: Transport) {
        // Without reconnection the connector is asked once.
        self.init(connector: { _, _ in transport }, reconnect: .never)
    }

    private func start() {
        connection.reach = { [weak self] work in self?.assumeIsolated { work($0.connection) } }
        transactions.raise = { [weak self] events in self?.assumeIsolated { $0.raise(events) } }
        transactions.nextWriteID = { [weak self] in self?.assumeIsolated { $0.takeWriteID() } ?? -1 }
        transactions.wake = { [weak self, executor] delay, orders in
            executor.queue.asyncAfter(deadline: .now() + delay) { [weak self] in
                self?.assumeIsolated { $0.transactions.pauseEnded(orders) }
            }
        }
        syncTree.listenProvider = serverListens
        infoTree.listenProvider = infoListens
        // Weak: a transport may still deliver after the last owner dropped this Repo unclosed.
        serverListens.raise = { [weak self] events in self?.assumeIsolated { $0.raise(events) } }
        infoListens.tree = infoTree
        updateInfo("connected", Node(false))
        updateInfo("authenticated", Node(false))
        // The connection calls these on this Repo's queue; weak, since a transport may still
        // deliver after the last owner dropped this Repo without closing it.
        connection.onConnectedChange = { [weak self] connected in
            self?.assumeIsolated { repo in
                // Flow control only while a connection can answer (see WriteGate).
                repo.gate.setBounded(connected)
                repo.updateInfo("connected", Node(connected))
                if connected, let diskCache = repo.diskCache, !repo.cacheHasBeenOnline {
                    repo.cacheHasBeenOnline = true
                    diskCache.setSetting("online", "yes")
                }
                repo.clock.offset = repo.connection.serverTimeOffset
                repo.updateInfo("serverTimeOffset", Node(repo.connection.serverTimeOffset.rounded()))
                if !connected { repo.runOnDisconnectWritesLocally() }
                repo.settleFirstConnection()
            }
        }
        connection.onAttemptFailed = { [weak self] in self?.assumeIsolated { $0.settleFirstConnection() } }
        connection.onPush = { [weak self] push in self?.assumeIsolated { $0.receive(push) } }
        connection.onListenWarnings = { [weak self] path, query, warnings in
            guard let self, let message = Repo.warning(warnings, path: path, query: query) else { return }
            self.queryWarning.withLock { $0 }?(message)
        }
        if let diskCache { restore(from: diskCache) }
        connection.start()
    }

    /// Takes up what an earlier session kept: its queued writes (shown at once, sent in their
    /// order once connected) and its kept-synced locations; a cache over its limit shrinks.
    private func restore(from cache: DiskCache) {
        syncTree.diskCache = cache
        cache.onFirstChange = { [weak self] in
            // After the rest of this burst of work: one commit for all of it.
            guard let self else { return }
            executor.queue.async { self.assumeIsolated { $0.commitCache() } }
        }
        // The cache is used on this queue only, so its notice comes here.
        cache.writes.onWritesLost = { [weak self] rows in self?.assumeIsolated { $0.writesNotKept(rows) } }
        cacheHasBeenOnline = cache.setting("online") != nil
        let (writes, unreadable) = cache.writes.load()
        unreadableRestoredWrites = unreadable
        restoredWrites = writes.map { ($0.write, $0.row, $0.cached, OneShot<Void>()) }
        for path in cache.keptSynced { try? keepSynced(path, true) }
        cache.evictIfOverLimitWhenOpened(pinned: syncTree.listenedPaths)
    }

    /// Queued writes a failed commit of the disk cache did not keep.
    private func writesNotKept(_ rows: [Int64]) {
        let lost = Set(rows)
        for (id, entry) in queuedWrites where entry.row.map(lost.contains) == true {
            queuedWrites[id]?.row = nil
            notKept(id)
        }
    }

    /// A write the disk cache could not keep: one not sent yet fails at once with the reason
    /// (nothing may say it is queued when no restart would find it); one sent already waits
    /// for its answer, and at exit is counted as not kept.
    private func notKept(_ id: Int) {
        guard let request = queuedWrites[id]?.request else { return }
        let reason = diskCache?.failure ?? "unknown error"
        connection.withdraw(request, response: .error(.writeFailed, "not queued: the disk cache could not keep it (\(reason))"))
    }

    private func commitCache() {
        guard let diskCache else { return }
        diskCache.commit()
        diskCache.evictIfNeeded(pinned: syncTree.listenedPaths)
    }

    // MARK: Listening

    /// Registers a listener; its first events (the current data, if known) follow at once.
    public func listen(_ query: QuerySpec, _ registration: EventRegistration) {
        listen(query, registration, diskCache: .startFromAndKeep)
    }

    func listen(_ query: QuerySpec, _ registration: EventRegistration, diskCache use: DiskCacheUse) {
        let tree = query.path.isInfo ? infoTree : syncTree
        raise(tree.addRegistration(registration, for: query, diskCache: use))
        // `.info` listens are complete once their first events are out.
        for complete in infoListens.takeCompletions() { raise(complete(.ok)) }
    }

    public func unlisten(_ query: QuerySpec, _ registration: EventRegistration) {
        let tree = query.path.isInfo ? infoTree : syncTree
        for (registration, error) in tree.removeRegistration(registration, for: query) { registration.cancel(error) }
    }

    /// The events of `types` at `query`, from now until the stream's consumer stops (which
    /// ends the listen) or the server cancels the listen (the stream throws why).
    public func events(_ query: QuerySpec, types: Set<EventType> = Set(EventType.allCases)) -> AsyncThrowingStream<Event, Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Event.self)
        let registration = EventRegistration(types: types, callback: { continuation.yield($0) },
                                             cancel: { continuation.finish(throwing: $0) })
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.unlisten(query, registration) }
        }
        listen(query, registration)
        return stream
    }

    private func raise(_ events: [Event]) {
        for event in events { event.registration.callback(event) }
    }

    private func receive(_ push: Push) {
        switch push {
        case let .data(path, data, tag):
            let events = tag.map { syncTree.applyTaggedOverwrite(path, data, tag: $0) } ?? syncTree.applyServerOverwrite(path, data)
            raise(events)
            // Even without events: a transaction's own visible write hides the server's
            // change, and the transaction must not be sent on what it read before.
            transactions.rerun(at: path, onlyIfChanged: true)
        case let .merge(path, updates, tag):
            let entries = updates.map { ($0.path, $0.value) }
            let events = tag.map { syncTree.applyTaggedMerge(path, entries, tag: $0) } ?? syncTree.applyServerMerge(path, entries)
            raise(events)
            transactions.rerun(at: path, onlyIfChanged: true)
        case let .listenRevoked(path, query):
            let error = DatabaseError(status: .permissionDenied, message: SyncTree.message(forStatus: .permissionDenied))
            let spec = QuerySpec(path: path, params: query ?? .default)
            for (registration, error) in syncTree.removeRegistration(nil, for: spec, error: error) { registration.cancel(error) }
        case .authRevoked:
            updateInfo("authenticated", Node(false))  // the connection drops the credential
        }
    }

    private func updateInfo(_ key: String, _ value: Node) {
        infoListens.data = infoListens.data.updatingChild(ChildKey(key), value)
        raise(infoTree.applyServerOverwrite(Path(keys: [".info", key]), value))
    }

    // MARK: Connection

    public var isConnected: Bool { connection.connected }
    /// Closed by `close()`, by the server for good, or (without reconnection) lost.
    public var isClosed: Bool { connection.closed }
    /// The first connection has not come up, and at least one attempt failed.
    public var neverConnected: Bool { !connection.everConnected && (connection.failedAttempts > 0 || connection.closed) }
    /// Why the server stopped accepting this client's credential, if it did.
    public var credentialRevoked: String? { connection.credentialRevoked }
    /// Why the server ended the connection for good, if it did.
    public var shutdownReason: String? { connection.shutdownReason }
    public var serverTimeOffset: Double { connection.serverTimeOffset }
    /// How long a read made while offline waits for a connection before failing. Offline by
    /// `goOffline`, no connection is coming: only long enough for cached data to be delivered.
    public var offlineReadTimeout: TimeInterval {
        connection.offlineByUser ? min(0.05, connection.offlineReadTimeout) : connection.offlineReadTimeout
    }

    public func setOfflineReadTimeout(_ seconds: TimeInterval) {
        connection.offlineReadTimeout = seconds
    }

    /// Waits for the first connection: true once it is up, false when an attempt failed
    /// (or the client was closed) before it ever was.
    public func firstConnectionEstablished() async throws -> Bool {
        if connection.everConnected { return true }
        if neverConnected { return false }
        let waiter = OneShot<Bool>()
        firstConnection.append(waiter)
        return try await waiter.value()
    }

    private func settleFirstConnection() {
        guard connection.everConnected || neverConnected else { return }
        let waiting = firstConnection
        firstConnection = []
        for waiter in waiting { waiter.resolve(.success(connection.everConnected)) }
    }

    /// Waits until the connection is up (`/.info/connected` is true), however many attempts
    /// it takes; false after `seconds`. Throws only when the waiting task is cancelled.
    public nonisolated func connected(within seconds: TimeInterval) async throws -> Bool {
        do {
            return try await withTimeout(seconds) {
                for try await event in await self.events(QuerySpec(path: Path(".info/connected")), types: [.value])
                where event.node == Node(true) {
                    return true
                }
                return false
            }
        } catch is TimeoutError {
            return false
        }
    }

    /// Authenticates now and after every reconnection: an ID token or database secret, or
    /// with `google` an OAuth2 access token. Returns (or throws) with the first answer.
    public func authenticate(token: String, google: Bool) async throws {
        let answer = OneShot<Void>()
        connection.authenticate(token: token, google: google) { [weak self] response in
            self?.assumeIsolated { $0.updateInfo("authenticated", Node(response.isOK)) }
            answer.resolve(response.isOK ? .success(()) : .failure(DatabaseError(status: response.status, message: response.message)))
        }
        try await answer.value()
    }

    /// Drops the credential, on this connection and later ones.
    public func unauthenticate() {
        connection.unauthenticate()
        updateInfo("authenticated", Node(false))
    }

    public func close() {
        diskCache?.commit()
        connection.close()
        diskCache?.close()
    }

    /// Drops the current connection as a network failure would; the client reconnects as
    /// its policy says.
    public func interruptConnection() {
        connection.interrupt()
    }

    // MARK: Reads

    /// Reads the value at `path` (see `get(_:keepInDiskCache:)`).
    public func get(_ path: Path) async throws -> Node {
        try await get(QuerySpec(path: path))
    }

    /// Reads what `query` selects from the server, never from what this client holds: a
    /// listen's data (kept synced, watched) may have come from the disk cache and not be
    /// confirmed yet. The answer is kept in the disk cache as a listen's would be, unless
    /// `keepInDiskCache` is false (data that goes elsewhere: an export's pages). Offline,
    /// the answer is what this client holds complete for the query (in memory or on disk:
    /// watched, kept synced, or left complete by earlier reads and writes); `.info` is
    /// always answered locally.
    public func get(_ query: QuerySpec, keepInDiskCache keep: Bool = true) async throws -> Node {
        let path = query.path
        let answer = OneShot<Node>()
        let filtered = !query.params.loadsAllData
        if path.isInfo {
            guard filtered else { return infoListens.value(at: path) }
            listenOnce(query, answer, diskCache: .startFromAndKeep)
            return try await answer.value()
        }
        if !connection.connected && keep {
            if !filtered {
                if let cached = syncTree.knownValue(at: path) { return cached }
            } else {
                // The sync tree answers from memory or disk when it holds the query complete.
                listenOnce(query, answer, diskCache: .startFromAndKeep)
                executor.queue.asyncAfter(deadline: .now() + offlineReadTimeout) { [weak self] in
                    self?.assumeIsolated { repo in
                        if answer.current == nil && !repo.connection.connected { answer.resolve(.failure(DatabaseError.offline)) }
                    }
                }
                return try await answer.value()
            }
        }
        let fallback: DiskCacheUse = keep ? .keep : .bypass
        // The query as the official clients send it (an order alone too: rules may read it).
        connection.send(.get(path: path, query: query.params.isDefault ? nil : query.params)) { [weak self] response in
            if response.isOK {
                // An answer without a value (`""`) is the empty string; a missing value is `null`.
                let value = response.carriesValue ? response.data : Node(.string(""))
                // Only from the answer that is the read's: a late one, after the read fell back
                // to a listen (warned of itself) or was given up, says nothing.
                if answer.current == nil, let self, let message = Repo.warning(response.warnings, path: path, query: query.params) {
                    self.queryWarning.withLock { $0 }?(message)
                }
                if keep {
                    self?.assumeIsolated { repo in
                        let keptFresh = repo.syncTree.wholeListenedPaths.contains { $0.contains(path) }
                        repo.diskCache?.overwriteComplete(query, value, locationKeptFresh: keptFresh)
                    }
                }
                answer.resolve(.success(value))
            } else if response.status == .invalidRequest || !Self.readRefusals.contains(response.status) {
                // A server that does not know `g`: read as clients did before it existed.
                self?.assumeIsolated { $0.listenOnce(query, answer, diskCache: fallback) }
            } else {
                answer.resolve(.failure(DatabaseError(status: response.status, message: response.message)))
            }
        }
        // A server that ignores `g` altogether: the same, once it has had time to answer.
        executor.queue.asyncAfter(deadline: .now() + getFallbackDelay) { [weak self] in
            self?.assumeIsolated { repo in
                if answer.current == nil && repo.connection.connected { repo.listenOnce(query, answer, diskCache: fallback) }
            }
        }
        return try await answer.value()
    }

    /// The refusals a `g` read can meet on a server that knows `g`; any other answer
    /// (`invalid_request`, a status this client does not name) says it does not.
    private static let readRefusals: Set<ResponseStatus> = [.permissionDenied, .expiredToken, .invalidToken, .disconnected,
                                                            .invalidPath, .invalidData, .unavailable, .tooBig]

    /// How long a `get` waits for the server's answer before it also reads with a one-time
    /// listen (for servers without `g`).
    public private(set) var getFallbackDelay: TimeInterval = 5

    public func setGetFallbackDelay(_ seconds: TimeInterval) {
        getFallbackDelay = seconds
    }

    /// Reads `query` with a listen that ends at its first value; resolves `answer` unless
    /// something else did first.
    private func listenOnce(_ query: QuerySpec, _ answer: OneShot<Node>, diskCache use: DiskCacheUse) {
        let registration = EventRegistration(types: [.value], callback: { answer.resolve(.success($0.node)) },
                                             cancel: { answer.resolve(.failure($0)) })
        listen(query, registration, diskCache: use)
        let queue = executor.queue
        answer.whenResolved { [weak self] _ in
            // Not from inside the event being delivered: on the queue, after it.
            queue.async { [weak self] in self?.assumeIsolated { $0.unlisten(query, registration) } }
        }
    }

    /// Returns once every event already produced has been delivered. It has no body: the
    /// call is a hop onto the core's queue, which runs after everything queued before it,
    /// the delivery of those events included.
    public func waitForQueuedEvents() {}

    /// The server's clock as this client estimates it, in milliseconds.
    private nonisolated var serverNow: Double { clock.now }

    // MARK: Writes

    /// Applies `value` at `path` locally and queues it for the server. Returns once queued
    /// (waiting while `maxPendingWrites` are unanswered); throws only when cancelled first.
    /// Runs on the caller's executor: a pipelined script pays no hop per write.
    ///
    /// `cached: false`: once acknowledged, the data is not kept in the disk cache as the
    /// server's (it still waits there until then). For a bulk import, whose data is in the
    /// file it came from: kept, it evicted what was read and watched (the cache holds 10 MB
    /// by default) and writing it there more than doubled the import's time.
    @discardableResult
    public nonisolated(nonsending) func set(_ path: Path, _ value: Node, cached: Bool = true) async throws -> PendingWrite {
        try await submit(.set(path, value), cached: cached)
    }

    /// With `guards`, the update is written only if each guarded value is still the one
    /// read, else it fails with `datastale` and its local change is taken back; a server
    /// that does not check guards (hosted Firebase, its emulator) is never sent it: it fails
    /// with `guardsUnchecked` instead (see `serverChecksGuards`).
    @discardableResult
    public nonisolated(nonsending) func update(_ path: Path, _ updates: [UpdateEntry], guards: [UpdateGuard] = [],
                                               cached: Bool = true) async throws -> PendingWrite {
        if updates.isEmpty { return PendingWrite(outcome: OneShot(.success(()))) }
        return try await submit(.update(path, updates, guards: guards), cached: cached)
    }

    @discardableResult
    public nonisolated(nonsending) func setPriority(_ path: Path, _ priority: LeafValue?) async throws -> PendingWrite {
        try await set(path.child(".priority"), priority.map { Node($0) } ?? .empty)
    }

    /// Writes `value` under a new chronological key; the key is in the result at once.
    @discardableResult
    public nonisolated(nonsending) func push(_ path: Path, _ value: Node) async throws -> PendingWrite {
        let key = clock.nextPushID()
        guard !value.isEmpty else { return PendingWrite(key: key, outcome: OneShot(.success(()))) }
        let write = try await set(path.child(key), value)
        return PendingWrite(key: key, outcome: write.outcome)
    }

    /// Takes a place (flow control), then queues the write onto the core's queue, where it is
    /// applied in the order submitted.
    private nonisolated(nonsending) func submit(_ write: Write, cached: Bool = true) async throws -> PendingWrite {
        try await gate.enter(entries: write.entryCount)
        let outcome = OneShot<Void>()
        submissions.post(Submission(repo: self, write: write, outcome: outcome, cached: cached))
        return PendingWrite(outcome: outcome)
    }

    /// A write submitted and not yet applied on the queue.
    private struct Submission: Sendable {
        let repo: Repo
        let write: Write
        let outcome: OneShot<Void>
        let cached: Bool
    }

    /// Applies a write locally (events at once) and sends it; the answer acknowledges or
    /// reverts it.
    private func takeWriteID() -> Int {
        defer { nextWriteID += 1 }
        return nextWriteID
    }

    /// `row`: the write's place in the disk queue, when it was kept by an earlier session.
    /// `cached`: its data is kept in the disk cache once acknowledged (see `set`).
    private func apply(_ write: Write, outcome: OneShot<Void>, row: Int64? = nil, cached: Bool = true) {
        let started = StageClock.begin()
        defer { StageClock.end(.clientApply, since: started) }
        let id = takeWriteID()
        let events: [Event]
        let request: Request
        let row = row ?? diskCache?.writes.save(write, cached: cached)
        queuedWrites[id] = (write, row, -1)  // its request's number once sent (an answer may come at once)
        // What the server will hold once it acknowledges, and whether that is only estimated
        // here (server values).
        var acknowledgedData: [(path: Path, node: Node, estimated: Bool)] = []
        switch write {
        case let .set(path, value):
            // Server values resolve locally for the optimistic view; the raw value is sent.
            var local = value
            if value.containsServerValues {
                local = value.resolvingServerValues(now: serverNow, existing: syncTree.completeEventCache(at: path) ?? .empty)
            }
            events = syncTree.applyUserOverwrite(path, local, writeID: id)
            request = .put(path: path, data: value, hash: nil)
            acknowledgedData = [(path, local, value.containsServerValues)]
        case let .update(path, updates, guards):
            let now = serverNow
            let local = updates.map { update -> (Path, Node) in
                guard update.value.containsServerValues else { return (update.path, update.value) }
                let existing = syncTree.completeEventCache(at: path.appending(update.path)) ?? .empty
                return (update.path, update.value.resolvingServerValues(now: now, existing: existing))
            }
            events = syncTree.applyUserMerge(path, local, writeID: id)
            request = .merge(path: path, data: updates, guards: guards)
            acknowledgedData = zip(updates, local).map { update, local in
                (path.appending(local.0), local.1, update.value.containsServerValues)
            }
        }
        raise(events)
        let acknowledged = acknowledgedData
        let entryCount = write.entryCount
        let listenedBefore = diskCache != nil && acknowledged.contains { $0.estimated } ? syncTree.wholeListenedPaths : []
        let sent = connection.send(request) { [self] response in
            let started = StageClock.begin()
            defer { StageClock.end(.clientAcknowledge, since: started) }
            raise(syncTree.ackUserWrite(id, revert: !response.isOK))
            // Its row as it is now: one a failed commit did not keep is no longer its own.
            let row = queuedWrites.removeValue(forKey: id)?.row
            // Closing or losing the connection is no answer: a kept write waits for the next session.
            if let row, let diskCache, response.status != .disconnected { diskCache.writes.remove(row) }
            // Accepted, what the disk keeps of it is the cache policy's to say.
            if response.isOK, let diskCache {
                diskCache.acknowledged(write.path, written: acknowledged, cached: cached, listened: syncTree.listenedPaths,
                                       whole: syncTree.wholeListenedPaths, wholeBefore: listenedBefore)
            }
            gate.leave(entries: entryCount)
            outcome.resolve(response.isOK ? .success(()) : .failure(DatabaseError(status: response.status, message: response.message)))
        }
        queuedWrites[id]?.request = sent
        if diskCache != nil && row == nil { notKept(id) }
        // As the official clients do: a write overrides the transactions it overlaps.
        switch write {
        case .set(let path, _):
            transactions.rerun(at: transactions.abort(overlapping: path))
        case .update(let path, let updates, _):
            for update in updates { transactions.rerun(at: transactions.abort(overlapping: path.appending(update.path))) }
        }
    }

    // MARK: The queue of writes and the disk cache

    /// The user's writes not yet acknowledged, oldest first (transactions are not among them).
    /// With a disk cache, each one listed is on disk when this returns.
    public var pendingUserWrites: [Write] {
        diskCache?.commit()
        return queuedWrites.sorted { $0.key < $1.key }.map(\.value.write)
    }

    /// Drops every write not yet acknowledged (their changes are taken back, with events),
    /// from memory and from the disk queue; each fails with `WRITE_CANCELED`. A write already
    /// sent may still be applied by the server. Kept writes that could not be read back go
    /// too. Returns how many were dropped, those included.
    @discardableResult
    public func purgeOutstandingWrites() -> Int {
        let count = queuedWrites.count + unreadableRestoredWrites
        unreadableRestoredWrites = 0
        connection.purgeWrites()
        diskCache?.writes.removeAll()
        diskCache?.commit()
        return count
    }

    /// Sends the writes an earlier session kept, in their order (shown at once, sent once
    /// connected), and returns them; call it once signed in. Later calls return none.
    public func takeRestoredWrites() -> [PendingWrite] {
        defer { restoredWrites = [] }
        return restoredWrites.map { write, row, cached, outcome in
            gate.admit(entries: write.entryCount)
            apply(write, outcome: outcome, row: row, cached: cached)
            return PendingWrite(outcome: outcome)
        }
    }

    /// Uses `token` from the next connection on, without waiting for an answer (a shell
    /// started offline signs in when its server comes back).
    public func setCredential(token: String, google: Bool) {
        connection.authenticate(token: token, google: google) { [weak self] response in
            self?.assumeIsolated { $0.updateInfo("authenticated", Node(response.isOK)) }
        }
    }

    /// Attempts no connection until `setCredential`, `authenticate` or `unauthenticate` says
    /// who the client is, so that restored writes are not sent as no one (an offline start
    /// whose credential must be fetched first); a connection already up is dropped.
    public func awaitCredential() {
        connection.awaitCredential()
    }

    /// The disk cache, for what `status` shows; nil without one.
    public var cacheSummary: CacheSummary? {
        guard let diskCache else { return nil }
        return CacheSummary(folder: diskCache.folder, dataBytes: diskCache.dataSize, limit: diskCache.limit,
                            queuedWrites: queuedWrites.values.filter { $0.row != nil }.count, failure: diskCache.failure)
    }

    /// Puts every change made so far on disk (what the shell reports as queued is then
    /// kept); false when the cache failed (`cacheSummary` says why).
    @discardableResult
    public func commitCacheNow() -> Bool {
        diskCache?.commit() ?? true
    }

    /// A setting kept in the disk cache (nil without one, or unset).
    public func cacheSetting(_ name: String) -> String? {
        diskCache?.setting(name)
    }

    public func setCacheSetting(_ name: String, _ value: String) {
        diskCache?.setSetting(name, value)
    }

    /// Forgets the cached server data (kept writes stay): reads go to the server again.
    public func clearCache() {
        diskCache?.clearData()
    }

    // MARK: Transactions

    /// Runs `update` on the value at `path` as the client sees it (empty when nothing is
    /// cached yet) and writes its result if the server still has the value it read; if not,
    /// runs it again on the fresh value, up to 25 times. The result shows at once (events)
    /// unless `applyLocally` is false. Transactions at one path run in order; they queue while
    /// offline, and are not kept across restarts.
    ///
    /// Returns when the transaction committed or its update function gave up; throws the
    /// `DatabaseError` it failed with (`SET`, `MAXRETRY`, `DISCONNECT` or the server's refusal).
    /// `update` runs on the core's queue: it must be quick and must not wait for the core.
    /// A caller that stops waiting (cancelled) leaves the transaction running.
    public func transaction(_ path: Path, applyLocally: Bool = true,
                            _ update: @escaping @Sendable (Node) -> TransactionUpdate) async throws -> TransactionResult {
        try await startTransaction(path, applyLocally: applyLocally, update).value()
    }

    /// Starts a transaction as `transaction` does and returns at once, its first attempt
    /// made (and shown): the result arrives through the returned `OneShot`.
    public func startTransaction(_ path: Path, applyLocally: Bool = true,
                                 _ update: @escaping @Sendable (Node) -> TransactionUpdate) -> OneShot<TransactionResult> {
        let outcome = OneShot<TransactionResult>()
        if path.isInfo {
            outcome.resolve(.failure(DatabaseError(status: .invalidPath, message: ".info paths are read-only")))
            return outcome
        }
        gate.admit()
        outcome.whenResolved { [gate] _ in gate.leave() }
        transactions.start(path, applyLocally: applyLocally, update: update, outcome: outcome)
        return outcome
    }

    /// Whether the server checks an update's guards (`update(_:_:guards:)`); nil before the
    /// first connection says.
    public var serverChecksGuards: Bool? { connection.everConnected ? connection.serverChecksGuards : nil }

    /// Transactions started and not finished.
    public var pendingTransactionCount: Int { transactions.count }

    // MARK: onDisconnect

    /// When this connection ends, the server writes `value` at `path` (server values are
    /// resolved then). Returns once the server acknowledged the registration.
    public func onDisconnectSet(_ path: Path, _ value: Node) async throws {
        try await registerOnDisconnect(.onDisconnectPut(path: path, data: value), .set(path, value))
    }

    /// When this connection ends, the server applies this multi-path update at `path`.
    public func onDisconnectUpdate(_ path: Path, _ updates: [UpdateEntry]) async throws {
        try await registerOnDisconnect(.onDisconnectMerge(path: path, data: updates), .update(path, updates))
    }

    /// Forgets the onDisconnect writes at and below `path`.
    public func onDisconnectCancel(_ path: Path) async throws {
        try await registerOnDisconnect(.onDisconnectCancel(path: path), nil, cancelling: path)
    }

    private func registerOnDisconnect(_ request: Request, _ write: Write?, cancelling: Path? = nil) async throws {
        if let path = write?.path ?? cancelling, path.isInfo {
            throw DatabaseError(status: .invalidPath, message: ".info paths are read-only")
        }
        let answer = OneShot<Void>()
        connection.send(request) { [weak self] response in
            guard response.isOK else {
                return answer.resolve(.failure(DatabaseError(status: response.status, message: response.message)))
            }
            self?.assumeIsolated { repo in
                if let write { repo.onDisconnectWrites.add(write) }
                if let cancelling { repo.onDisconnectWrites.cancel(cancelling) }
            }
            answer.resolve(.success(()))
        }
        try await answer.value()
    }

    /// The connection is gone, and with it the server ran this connection's onDisconnect
    /// writes: the local view shows them now, as the server's data (server values estimated).
    private func runOnDisconnectWritesLocally() {
        let now = serverNow
        for write in onDisconnectWrites.takeAll() {
            let events: [Event]
            switch write {
            case let .set(path, value):
                let existing = syncTree.completeEventCache(at: path) ?? .empty
                events = syncTree.applyServerOverwrite(path, value.resolvingServerValues(now: now, existing: existing))
            case let .update(path, updates, _):
                let entries = updates.map { update -> (Path, Node) in
                    let existing = syncTree.completeEventCache(at: path.appending(update.path)) ?? .empty
                    return (update.path, update.value.resolvingServerValues(now: now, existing: existing))
                }
                events = syncTree.applyServerMerge(path, entries)
            }
            raise(events)
            // As a user's set or update would: the transactions they overlap end (SET).
            switch write {
            case let .set(path, _):
                transactions.rerun(at: transactions.abort(overlapping: path))
            case let .update(path, updates, _):
                for update in updates { transactions.rerun(at: transactions.abort(overlapping: path.appending(update.path))) }
            }
        }
    }

    // MARK: Online, offline, keepSynced

    /// Disconnects and stays offline until `goOnline`. Writes and transactions queue as on a
    /// lost connection; reads answer from what is cached.
    public func goOffline() {
        connection.goOffline()
    }

    public func goOnline() {
        connection.goOnline()
    }

    /// Offline by `goOffline`.
    public var isOfflineByChoice: Bool { connection.offlineByUser }

    /// Keeps the data at `path` synced (a listen without a view) so reads there answer from
    /// the cache, or stops.
    public func keepSynced(_ path: Path, _ on: Bool) throws {
        if path.isInfo { throw DatabaseError(status: .invalidPath, message: ".info is always kept locally") }
        diskCache?.setKeptSynced(path, on)
        if on {
            guard keptSynced[path] == nil else { return }
            let registration = EventRegistration(types: [.value], callback: { _ in })
            keptSynced[path] = registration
            listen(QuerySpec(path: path), registration)
        } else if let registration = keptSynced.removeValue(forKey: path) {
            unlisten(QuerySpec(path: path), registration)
        }
    }

    /// The locations kept synced, in path order.
    public var keptSyncedPaths: [Path] { keptSynced.keys.sorted() }

    /// Writes sent and not yet answered (transactions included).
    public nonisolated var pendingWriteCount: Int { gate.count }
    /// Writes sent and not yet acknowledged at most; more wait (flow control for scripts).
    public nonisolated var maxPendingWrites: Int { gate.capacity }

    public nonisolated func setMaxPendingWrites(_ count: Int) {
        gate.setLimit(count)
    }

    /// Waits for every write made so far to be answered, for as long as the server keeps
    /// answering: it gives up when `idle` passes with no write answered (or the task is
    /// cancelled). A server that is slow but working, an engine writing a large load, is
    /// waited for; one that answers nothing is not. Returns how many are still unanswered.
    @discardableResult
    public nonisolated func waitForPendingWrites(idle: TimeInterval) async -> Int {
        let gate = self.gate
        var answered = gate.answered
        var progress = Date()
        while gate.count > 0 && !Task.isCancelled {
            let left = idle - Date().timeIntervalSince(progress)
            if left <= 0 { break }
            try? await withTimeout(min(left, 0.25)) { try await gate.allAnswered() }
            if gate.answered != answered {
                answered = gate.answered
                progress = Date()
            }
        }
        // The gate counts a write done just before its answer's handlers run, in the same
        // turn of the core's queue: a turn taken here comes after it, so whoever waited
        // finds every rejection already recorded (a script's end reports them).
        await settled()
        return gate.count
    }

    /// Returns once the core's queue has finished what it was doing.
    private func settled() {}
}

/// Listens the server must serve go to the connection; the answer completes them.
private final class ServerListens: ListenProvider {
    unowned let connection: PersistentConnection
    var raise: ([Event]) -> Void = { _ in }

    init(connection: PersistentConnection) {
        self.connection = connection
    }

    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (ResponseStatus) -> [Event]) -> [Event] {
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
private final class InfoListens: ListenProvider {
    var data = Node.empty
    weak var tree: SyncTree?
    /// Listens started and not yet completed: the Repo completes them after their first events.
    private var completions: [(ResponseStatus) -> [Event]] = []

    func value(at path: Path) -> Node { data.child(at: path.dropFirst()) }

    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, complete: @escaping (ResponseStatus) -> [Event]) -> [Event] {
        guard let tree else { return [] }
        completions.append(complete)
        let node = value(at: query.path)
        return node.isEmpty ? [] : tree.applyServerOverwrite(query.path, node)
    }

    func takeCompletions() -> [(ResponseStatus) -> [Event]] {
        defer { completions = [] }
        return completions
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {}
}
