import Foundation
import RTDBData
import RTDBProtocol
import RTDBRules

/// The server engine for one database: the live tree, its durable store, and the requests of
/// every connection, processed one at a time on a serial queue.
///
/// A write is applied to the tree at once (later requests see it) and acknowledged only when
/// its log record is durable. A multi-path update is one record: all of it or none of it.
///
/// An actor on its own queue (`executor`): connections post their requests there in bursts,
/// and the store's callbacks and the credential timers hop onto it, all in order; each takes
/// the database's isolation with `assumeIsolated`. The public methods are nonisolated and
/// hop themselves, so callers on any thread use it without `await`.
public actor Database {
    nonisolated let executor = QueueExecutor(label: "rtdb.database")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated var queue: DispatchQueue { executor.queue }
    private(set) var root: Node
    nonisolated let store: Store
    private let listeners = ListenerRegistry()
    /// Ordered indexes by location and ordering, shared by the queries that use them. One is
    /// built by the first query that needs it and kept while a listen uses it, and after
    /// that among the `idleIndexLimit` most recently used; those stored at the last
    /// checkpoint are read from the node file as they are walked.
    private(set) var indexes = QueryIndexes()
    /// How many listens use each index.
    private(set) var indexListens: [QueryIndexes.Key: Int] = [:]
    /// When a query last used each index (a count of uses), since the database was opened:
    /// at close after writes, only these and the ones the rules declare (`.indexOn`) are
    /// stored for the next open.
    private var indexLastUsed: [QueryIndexes.Key: Int] = [:]
    private var indexUses = 0
    /// Indexes kept with no listen: each costs an update per write below its location, so
    /// queries on ever new lists or orderings cannot make every write slower for good.
    static let idleIndexLimit = 16
    private var wrote = false
    /// Writes applied and sent to their listens, for the store once the requests queued with
    /// them are applied, or a request other than a write comes: pipelined writes reach the
    /// store together, so one commit round (one fdatasync) makes many durable. An index
    /// built meanwhile reaches the store with them, not before: the store's tree lacks them,
    /// and a checkpoint would store an index ahead of it.
    private var unstored: [(record: LogRecord, completion: @Sendable (StoreError?) -> Void)] = []
    /// Records applied so far (numbered as the store numbers them), and, for each not yet
    /// durable, the paths it wrote: a record the store refuses (a full disk) is taken out of
    /// the tree again, with every record after it (the tree goes back to the store's state
    /// as of the record before, `Store.rebuild`), so no refused write is seen or stored later
    /// by a checkpoint.
    private var committed = 0
    private var undo: [(number: Int, paths: [Path], origin: (client: String, request: Int)?)] = []
    /// The writes applied for each client that names them (durable or not yet): one sent
    /// again is answered, not applied again.
    private var receipts: WriteReceipts
    /// What waits for the records through `number` to be durable (nil) or refused: writes
    /// sent again, answered as their first copies were, and snapshots being saved.
    private var awaitingDurable: [(number: Int, done: @Sendable (isolated Database, StoreError?) -> Void)] = []
    /// Milliseconds since the epoch (a test gives its own).
    nonisolated let clock: @Sendable () -> Double
    public static let systemClock: @Sendable () -> Double = { (Date().timeIntervalSince1970 * 1000).rounded() }
    /// Who may read and write what; open unless the server was given rules.
    private(set) var rules = SecurityRules.open
    /// Whether refusals say which rule decided, and where decisions are logged.
    public nonisolated let explanations: RuleExplanations
    /// What it runs, for `monitor` and the profiler (`Database+Monitoring`).
    public nonisolated let operations = OperationFeed()
    /// Where a monitored request's JSON is written to be measured.
    var monitorScratch: [UInt8] = []

    public init(folder: String, clock: @escaping @Sendable () -> Double = Database.systemClock,
                explanations: RuleExplanations = RuleExplanations()) throws {
        self.clock = clock
        self.explanations = explanations
        store = try Store(folder: folder)
        root = store.recoveredRoot
        indexes = store.recoveredIndexes
        receipts = store.recoveredReceipts
        let restored = store.restoredAtOpen
        // Restored by the logs but named no more: they go once a checkpoint covers those logs.
        let named = (try? SnapshotCatalog.read(in: folder)).map { Set($0.entries.values.map(\.id)) } ?? restored
        unnamedFiles = restored.subtracting(named)
        restoresHeld = restored.map { (0, $0) }
        store.releaseRecoveredRoot()
        store.callbacks = Store.Callbacks(
            // After a checkpoint the tree is read from the node file again, so memory holds
            // only what changed since. Synchronously: until it is done no other checkpoint
            // starts, so none stores again, from a tree still in memory, what this one stored.
            onCheckpoint: { [weak self] replayed, replayedIndexes, through, marker in
                self?.runAndWait { database in
                    database.storeWrites()  // they belong to the replayed tree
                    (database.root, database.indexes) = database.store.rebase(replayed, indexes: replayedIndexes, through: through,
                                                                              marker: marker, live: database.indexes)
                    // The node file holds the restored trees now: a replay reads no snapshot
                    // file for them.
                    database.restoresHeld.removeAll { $0.number <= marker }
                    database.removeUnneededSnapshotFiles()
                }
            },
            onSnapshotWanted: { [weak self] in
                self?.schedule { $0.offerSnapshot() }
            },
            onDurable: { [weak self] through in
                self?.schedule { $0.madeDurable(through: through) }
            },
            onFailure: { [weak self] first, error in
                // Waited for: the writers hear of the failure only once their records are out
                // of the tree, so a request they send next finds them undone even when it
                // joins a turn of its session's that was queued before this. (Nothing on this
                // queue waits for the committer, so the wait cannot deadlock.)
                self?.runAndWait { $0.takeBack(from: first, error) }
            })
    }

    /// Runs `work` in the database's isolation once the work queued before it has run.
    nonisolated func schedule(_ work: @escaping @Sendable (isolated Database) -> Void) {
        executor.queue.async { self.assumeIsolated(work) }
    }

    /// Runs `work` in the database's isolation and waits for it (never from its own queue).
    nonisolated func runAndWait<T: Sendable>(_ work: (isolated Database) -> T) -> T {
        executor.queue.sync { self.assumeIsolated(work) }
    }

    public nonisolated var folder: String { store.folder }

    /// Attaches the server end of a connection; the session lives as long as the transport.
    /// It starts as `identity` (the owner for an embedded database and the processes on its
    /// folder, no one for a network client until it sends a credential).
    @discardableResult
    public nonisolated func accept(_ transport: Transport, host: String = "embedded", identity: Identity = .admin,
                                   peer: String = "embedded") -> ServerSession {
        let session = ServerSession(database: self, transport: transport, identity: identity, peer: peer)
        session.start(host: host)
        return session
    }

    /// Waits for queued work, makes every write durable and releases the data folder. After
    /// writes, the indexes no query used since the open, and that the rules do not declare,
    /// are not stored again: a list queried once is not indexed on every write forever (an
    /// open that only reads keeps them all, as they cost nothing then).
    public nonisolated func close() {
        // Saves under way finish first: their files and names are written while the folder
        // is this process's, and no new one starts.
        runAndWait { $0.snapshotsClosed = true }
        snapshotSaves.wait()
        let (tree, kept): (Node, QueryIndexes) = runAndWait { database in
            database.storeWrites()
            if database.wrote {
                // In the table too: a checkpoint finishing meanwhile takes the table as it is.
                database.indexes = database.indexes.filter {
                    database.indexLastUsed[QueryIndexes.key($0.path, $0.index)] != nil || database.declared($0)
                }
            }
            // Here, with the tree it is given: a write after this is refused, not lost.
            database.store.beginClose()
            return (database.root, database.indexes)
        }
        store.finishClose(root: tree, indexes: kept)
    }

    /// Runs every request received so far and waits until their writes are durable and
    /// answered: a server that stops taking requests calls it before it closes connections,
    /// so no acknowledgement is lost with them.
    public nonisolated func settle() {
        runAndWait { $0.storeWrites() }
        store.waitForRounds()
        queue.sync {}  // writes sent again, answered once the rounds made them durable
    }

    private var pushIDs = PushIDGenerator()

    /// Runs a request from outside a realtime session (REST) as `identity`; `completion` gets
    /// the answer (for writes, once durable).
    public nonisolated func submit(_ request: Request, as identity: Identity = .admin, completion: @escaping @Sendable (Response) -> Void) {
        schedule { $0.handle(request, from: nil, as: identity, reply: completion) }
    }

    /// Overwrites `path` with `value` (if its current value hashes to `hash`, when given) as
    /// `identity`; once durable, the answer carries the value the write left at `path`
    /// (server values resolved), as of the write: a later one does not show through, as it
    /// would in a read made after the answer.
    public nonisolated func write(_ path: Path, _ value: Node, hash: String? = nil, as identity: Identity = .admin,
                                  completion: @escaping @Sendable (Response) -> Void) {
        schedule { $0.handle(.put(path: path, data: value, hash: hash), from: nil, as: identity, echo: true, reply: completion) }
    }

    /// Writes `value` under a new push id made with the server's clock.
    public nonisolated func push(_ path: Path, _ value: Node, as identity: Identity = .admin,
                                 completion: @escaping @Sendable (String, Response) -> Void) {
        schedule { database in
            let key = database.pushIDs.next(now: Int64(database.clock()))
            database.handle(.put(path: path.child(key), data: value, hash: nil), from: nil, as: identity) { completion(key, $0) }
        }
    }

    // MARK: Snapshots

    /// The database's snapshots by name, read from its folder when first asked.
    private var snapshotCatalog: SnapshotCatalog?

    private func catalog() throws -> SnapshotCatalog {
        if let snapshotCatalog { return snapshotCatalog }
        let read = try SnapshotCatalog.read(in: store.folder)
        snapshotCatalog = read
        return read
    }

    /// The snapshots saved, by name.
    public nonisolated func snapshots() throws -> [SnapshotInfo] {
        let catalog = try runAndWait { database in Result { try database.catalog() } }.get()
        return catalog.entries.map { SnapshotInfo(name: $0.key, saved: $0.value.saved, bytes: $0.value.bytes) }.sorted { $0.name < $1.name }
    }

    /// Saves the tree as it is now (every write made so far in it) as snapshot `name`,
    /// replacing one of that name; `completion` gets it once the writes it holds and then its
    /// file are durable. It runs on the database's queue, so it must not wait for the
    /// database (`snapshots()` there would never return). A save whose writes are refused (a
    /// full disk) fails and keeps nothing. The file is written off the queue: requests go on
    /// meanwhile, and a removal of `name` before the save ends is followed by it (the name
    /// is back). Of two saves of one name, the later one's tree is kept.
    public nonisolated func saveSnapshot(_ name: String, completion: @escaping @Sendable (Result<SnapshotInfo, StoreError>) -> Void) {
        snapshotSaves.enter()
        schedule { database in
            let finish: @Sendable (Result<SnapshotInfo, StoreError>) -> Void = { outcome in
                completion(outcome)
                database.snapshotSaves.leave()
            }
            guard SnapshotInfo.isValid(name) else { return finish(.failure(.failed(SnapshotInfo.nameRule(name)))) }
            guard !database.snapshotsClosed else { return finish(.failure(.failed("the database is closing"))) }
            let id: Int
            do {
                let next = try SnapshotCatalog.nextID(in: database.store.folder, catalog: try database.catalog())
                id = max(next, database.lastSnapshotID + 1)
                guard id <= SnapshotFile.maximumID else { return finish(.failure(.failed("no snapshot number is left in this folder"))) }
            } catch {
                return finish(.failure(error as? StoreError ?? .failed("\(error)")))
            }
            database.lastSnapshotID = id
            database.storeWrites()
            let root = database.root, folder = database.store.folder, saved = database.clock()
            // The writes it holds first: one the store then refused is gone from the tree, and
            // the snapshot must not bring it back. Once durable, none can be refused.
            database.whenDurable(through: database.committed) { database, refused in
                if let refused {
                    return finish(.failure(.failed("writes the snapshot held could not be made durable (\(refused.clientDescription)); it was not saved")))
                }
                DispatchQueue.global().async {
                    let written = Result { () throws -> Int in
                        do { return try SnapshotFile.write(root, in: folder, id: id) } catch let failure as NodeFile.Failure { throw StoreError(failure) }
                    }
                    database.schedule { database in
                        do {
                            let bytes = try written.get()
                            var catalog = try database.catalog()
                            let replaced = catalog.entries[name]?.id
                            if let replaced, replaced > id {
                                // A save of the same name started after this one finished first:
                                // the name holds the later tree, as if this one came first.
                                unlink(SnapshotFile.path(in: folder, id: id))
                                return finish(.success(SnapshotInfo(name: name, saved: saved, bytes: bytes)))
                            }
                            catalog.entries[name] = SnapshotCatalog.Entry(id: id, saved: saved, bytes: bytes)
                            try catalog.write(in: folder)
                            database.snapshotCatalog = catalog
                            if let replaced { database.release(snapshotFile: replaced) }
                            finish(.success(SnapshotInfo(name: name, saved: saved, bytes: bytes)))
                        } catch {
                            finish(.failure(error as? StoreError ?? .failed("\(error)")))
                        }
                    }
                }
            }
        }
    }

    /// Saves under way, which `close` waits for.
    private nonisolated let snapshotSaves = DispatchGroup()
    /// Set once closing began: no snapshot is saved, restored or removed after it.
    private var snapshotsClosed = false
    /// The last snapshot number this database gave out: a save under way has one whose file
    /// is not there yet.
    private var lastSnapshotID = 0
    /// The snapshot files restores read, by the number of the record that restored each
    /// (0: a log replayed at open): a replay after a crash reads them again, until a
    /// checkpoint copied the tree into the database's own node file.
    private var restoresHeld: [(number: Int, id: Int)]
    /// Snapshot files no name holds any more, kept until no restore still needs them.
    private var unnamedFiles: Set<Int>

    /// Makes snapshot `name` the whole tree, as one write of `/` would: listeners get what
    /// changed, and the answer comes once it is durable. It costs the same for any size: the
    /// snapshot's file is read where requests look, and the log holds its number. (Damage in
    /// the file is found as its parts are read, and reported as the node file's is.)
    public nonisolated func restoreSnapshot(_ name: String, completion: @escaping @Sendable (Response) -> Void) {
        schedule { database in
            guard !database.snapshotsClosed else { return completion(.error(.writeFailed, "the database is closing")) }
            let snapshot: Node
            let id: Int
            do {
                guard SnapshotInfo.isValid(name), let entry = try database.catalog().entries[name] else {
                    return completion(.error(.invalidRequest, "there is no snapshot named \(name.prefix(80))"))
                }
                id = entry.id
                snapshot = try SnapshotFile.open(in: database.store.folder, id: id, onDamage: { Store.report($0) })
            } catch let failure as NodeFile.Failure {
                return completion(.error(.writeFailed, "the snapshot \(name) cannot be read: \(StoreError(failure).clientDescription)"))
            } catch {
                return completion(.error(.writeFailed, "the snapshot \(name) cannot be read: \((error as? StoreError)?.clientDescription ?? "\(error)")"))
            }
            let record = LogRecord(sets: [(.root, snapshot)], restoring: id)
            database.commit(record, after: snapshot, reply: completion)
            database.restoresHeld.append((database.committed, id))
        }
    }

    /// Forgets snapshot `name`, and its file unless a restore still needs it (then the
    /// checkpoint that makes it unneeded removes it). False when there was none.
    public nonisolated func removeSnapshot(_ name: String) throws -> Bool {
        try runAndWait { database in
            Result { () throws -> Bool in
                guard !database.snapshotsClosed else { throw StoreError.failed("the database is closing") }
                var catalog = try database.catalog()
                guard let removed = catalog.entries.removeValue(forKey: name) else { return false }
                try catalog.write(in: database.store.folder)
                database.snapshotCatalog = catalog
                database.release(snapshotFile: removed.id)
                return true
            }
        }.get()
    }

    /// Removes snapshot file `id`, which no name holds now, once no restore needs it; one a
    /// restore in the log needs goes at the next checkpoint, asked for now (a restore's
    /// record is small, and the log alone would wait long for one).
    private func release(snapshotFile id: Int) {
        unnamedFiles.insert(id)
        removeUnneededSnapshotFiles()
        if !unnamedFiles.isEmpty { store.checkpointSoon() }
    }

    private func removeUnneededSnapshotFiles() {
        let needed = Set(restoresHeld.map(\.id))
        for id in unnamedFiles where !needed.contains(id) {
            unlink(SnapshotFile.path(in: store.folder, id: id))
            unnamedFiles.remove(id)
        }
    }

    // MARK: Rules

    /// The rules in force.
    public nonisolated var securityRules: SecurityRules { runAndWait { $0.rules } }

    /// Puts new rules in force; every listen they no longer allow is cancelled.
    public nonisolated func replaceRules(_ rules: SecurityRules) {
        schedule { database in
            database.rules = rules
            database.revokeDenied(among: database.listeners.all())
        }
    }

    /// Listens whose permission the data decides (`.read: "root.child('members')…"`).
    private var dataDependentListens = 0
    /// Listens checked again after writes touched what their rules read (for tests).
    private(set) var listensRechecked = 0

    private func noteDataDependence(_ listen: Listen) {
        let patterns = listen.session.identity == .admin ? [] : rules.readPatterns(listen.path)
        let depends = !patterns.isEmpty
        if depends != listen.dependsOnData { dataDependentListens += depends ? 1 : -1 }
        listen.readPatterns = patterns
    }

    /// Checks again the listens whose rules read what `record` wrote: only those can have
    /// lost their permission by it (a check of every one at each write made a few costly
    /// rules slow every write of the namespace).
    private func recheckListens(touchedBy record: LogRecord) {
        guard dataDependentListens > 0 else { return }
        let touched = listeners.all().filter { listen in
            listen.readPatterns.contains { pattern in record.sets.contains { pattern.isTouched(by: $0.path) } }
        }
        listensRechecked += touched.count
        if !touched.isEmpty { revokeDenied(among: touched) }
    }


    /// Whether `identity` may read `path` with `query` now (a REST stream asks before it
    /// starts). Not from the database's own queue (a completion): it waits on it.
    public nonisolated func canRead(_ path: Path, query: QueryParams?, as identity: Identity) -> Bool {
        runAndWait { $0.rules.canRead(path, identity: identity, query: query, data: $0.root, now: $0.clock()) }
    }

    /// A query the rules warn of (`no_index`): ordered by a child or by value, no `.indexOn`.
    func unindexed(_ query: QueryParams?, at path: Path) -> Bool { rules.warnsUnindexed(query, at: path) }

    private func declared(_ index: QueryIndex) -> Bool { rules.declares(index.index, at: index.path) }

    /// Cancels those of `listens` the rules no longer allow (after new rules, a new
    /// credential, or a write the data-dependent ones are checked against); the others note
    /// again whether the data decides for them.
    private func revokeDenied(among listens: [Listen]) {
        let now = clock()
        for listen in listens {
            // A listen checked again is no new request: not counted in the coverage.
            guard !rules.canRead(listen.path, identity: listen.session.identity, query: listen.params, data: root, now: now, counted: false) else {
                noteDataDependence(listen)
                continue
            }
            listeners.remove(session: listen.session, path: listen.path, identifier: listen.identifier)
            release(listen)
            listen.session.send(.listenRevoked(path: listen.path, query: listen.params))
        }
    }

    /// Why a write is refused, as the client is told: with the rules that decided (every
    /// `.write` on the way, or the `.validate` that failed) when refusals are explained.
    private func refusal(_ denial: SecurityRules.Denial, _ trace: RuleTrace?) -> Response {
        let steps = trace?.steps ?? []
        func why(_ steps: [RuleTrace.Step]) -> String { steps.isEmpty ? "" : ": " + RuleExplanations.steps(steps) }
        switch denial {
        case .permission: return .error(.permissionDenied, "Permission denied: " + denial.reason + why(steps))
        case .validation: return .error(.permissionDenied, "Permission denied: " + denial.reason + why(steps.suffix(1)))
        case .overBudget: return .error(.permissionDenied, "Permission denied: " + denial.reason)
        }
    }

    /// Whether `identity` may read `path` with `query` now; nil if so, else the refusal. A
    /// refusal is explained (the rules are evaluated again, with a trace) when refusals
    /// are; every decision is logged when decisions are.
    func refusedRead(_ path: Path, _ query: QueryParams?, as identity: Identity) -> Response? {
        let now = clock()
        let (allowed, trace) = explanations.decide("read of \(path)", as: identity, refused: { !$0 }) { trace, counted in
            rules.canRead(path, identity: identity, query: query, data: root, now: now, trace: trace, counted: counted)
        }
        if allowed { return nil }
        let steps = trace.map { RuleExplanations.steps($0.steps) } ?? ""
        let why = explanations.toClients && !steps.isEmpty ? ": " + SecurityRules.readRefusal + ": " + steps : ""
        return .error(.permissionDenied, "Permission denied" + why)
    }
    /// A listen whose first data is larger than its client takes in one message (as hosted
    /// databases word it).
    private static let tooBigListen = "The data requested exceeds the maximum size that can be accessed with a single request; listen to or read its children instead"

    /// A user's credential has expired: a session is told (`ac`) and goes on as it was without
    /// one; a REST stream ends with `auth_revoked`.
    func credentialExpired(_ sink: ListenSink) {
        sink.send(.authRevoked(status: .expiredToken, reason: "the credential has expired"))
        if let session = sink as? ServerSession {
            session.identity = session.initialIdentity
            revokeDenied(among: listeners.listens(of: session))
        } else {
            sessionClosed(sink)
        }
    }

    /// Arranges `credentialExpired` for when `identity` expires (seconds since the epoch).
    /// A session keeps one such timer (a new credential replaces it), a stream has one.
    func watchExpiry(of identity: Identity, for sink: ListenSink) {
        guard case .user(_, _, let expires?) = identity else {
            (sink as? ServerSession)?.replaceExpiry(with: nil)
            return
        }
        let delay = max(0, expires - clock() / 1000)
        let expiry = CancellationFlag()
        (sink as? ServerSession)?.replaceExpiry(with: expiry)  // cancels the one before
        queue.asyncAfter(deadline: .now() + delay) { [weak self, weak sink] in
            guard !expiry.isCancelled, let self, let sink, sink.identity == identity else { return }
            if let session = sink as? ServerSession, session.isClosed { return }
            self.assumeIsolated { database in
                if !(sink is ServerSession), database.listeners.listens(of: sink).isEmpty { return }
                database.credentialExpired(sink)
            }
        }
    }

    /// Reads the value at `path`, filtered by a query when given (answered from an index).
    public nonisolated func read(_ path: Path, query: QueryParams?, completion: @escaping @Sendable (Node) -> Void) {
        schedule { completion($0.evaluate(path, query: query)) }
    }

    /// The value at `path`, or the query's window of it (answered from an index).
    func evaluate(_ path: Path, query: QueryParams?) -> Node {
        let node = root.child(at: path)
        guard let query, !query.loadsAllData else { return node }
        return answer(query, at: path, on: node)
    }

    /// Answers a query from its index, built now when there is none (and then kept).
    func answer(_ params: QueryParams, at path: Path, on node: Node, reusing previous: Node = .empty,
                        changed: (ChildKey) -> Bool = { _ in true }) -> Node {
        let key = QueryIndexes.key(path, params.index)
        indexUses += 1
        indexLastUsed[key] = indexUses
        guard var index = indexes[key] else {
            var index = QueryIndex(path: path, index: params.index, node: node)
            let result = index.answer(params, on: node)
            indexes[key] = index
            dropIdleIndexes()
            return result
        }
        let built = index.isStale || index.isStored
        let result = index.answer(params, on: node, reusing: previous, changed: changed)
        if built && !index.isStale && !index.isStored {
            // Built again: the list was replaced, or a stored record of it was damaged.
            indexes[key] = index
        }
        return result
    }

    /// Drops the least recently used indexes no listen uses, past `idleIndexLimit`.
    private func dropIdleIndexes() {
        let idle = indexes.keys.filter { indexListens[$0] == nil }
        guard idle.count > Database.idleIndexLimit else { return }
        let byAge = idle.sorted { indexLastUsed[$0] ?? 0 < indexLastUsed[$1] ?? 0 }
        for key in byAge.prefix(idle.count - Database.idleIndexLimit) { indexes[key] = nil }
    }

    /// What a write stores: server values resolved against the current data. A result that
    /// is not a finite number (an increment that overflows) is refused, so no stored, sent or
    /// logged value is ever outside JSON. A priority written on its own must be a string, a
    /// number or null.
    private func resolve(_ data: Node, at path: Path, now: Double) throws -> Node {
        try Self.resolve(data, at: path, now: now, in: root)
    }

    private static func resolve(_ data: Node, at path: Path, now: Double, in root: Node) throws -> Node {
        if path.last == ".priority" {
            switch data.content {
            case .empty, .leaf(.number), .leaf(.string), .leaf(.serverValue): break
            default: throw DataError.invalidPriority(path: path.description, reason: "a priority must be a string, a number or null")
            }
        }
        guard data.containsServerValues else { return data }
        let value = data.resolvingServerValues(now: now, existing: root.child(at: path))
        if value.containsNonFiniteNumber {
            throw DataError.invalidValue(path: path.description, reason: "the increment overflows: the result is beyond ±1.8e308, which no JSON number can hold")
        }
        return value
    }

    /// The current value at `path` (for tests and tools).
    public nonisolated func value(at path: Path) -> Node {
        runAndWait { $0.root.child(at: path) }
    }

    /// What the rules say of `question` now, on this database's data, making nothing: under
    /// `rules` when given (the question's own text is for the caller to parse), else the
    /// database's.
    public nonisolated func answer(_ question: RuleQuestion, rules given: SecurityRules? = nil) throws(RuleQuestion.Invalid) -> RuleAnswer {
        // The tree is a value: taken on the queue, judged off it, so a costly question holds
        // no other request up.
        let (rules, root, now) = runAndWait { database in (given ?? database.rules, database.root, database.clock()) }
        return try Database.answer(question, rules: rules, data: root, now: now)
    }

    /// What `rules` say of `question` on `data` at `now` (milliseconds): its path and values
    /// checked as a request's, server values resolved as a write's, the credential taken as
    /// a client's.
    public static func answer(_ question: RuleQuestion, rules: SecurityRules, data: Node, now: Double) throws(RuleQuestion.Invalid) -> RuleAnswer {
        let identity: Identity
        do { identity = try question.credential.map { credential throws(Identity.Refusal) in try Identity.from(credential: credential, now: now / 1000) } ?? .anonymous } catch {
            switch error {
            case .expired: throw RuleQuestion.Invalid("the credential has expired")
            case .invalid(let reason): throw RuleQuestion.Invalid("the credential is refused: \(reason)")
            }
        }
        let path = question.path
        var sets: [(Path, Node)] = []
        switch question.operation {
        case .read:
            if let error = checkPath(path, writing: false, priorityLast: true) { throw RuleQuestion.Invalid(error.message) }
            return rules.answer(read: path, identity: identity, data: data, now: now)
        case .write(let value):
            if let error = checkPath(path, writing: true, priorityLast: true) ?? checkValue(value, at: path) { throw RuleQuestion.Invalid(error.message) }
            sets = [(path, value)]
        case .update(let entries):
            guard !entries.isEmpty else { throw RuleQuestion.Invalid("an update needs at least one path to write") }
            if let error = checkPath(path, writing: true) ?? checkMerge(entries.map { UpdateEntry($0.0, $0.1) }, at: path) {
                throw RuleQuestion.Invalid(error.message)
            }
            do { try validateUpdatePaths(entries, base: path) } catch { throw RuleQuestion.Invalid("\(error)") }
            sets = entries.map { (path.appending($0.0), $0.1) }
        }
        do {
            sets = try sets.map { ($0.0, try resolve($0.1, at: $0.0, now: now, in: data)) }
        } catch {
            throw RuleQuestion.Invalid("\(error)")
        }
        let record = LogRecord(sets: sets)
        return rules.answer(write: record.sets, identity: identity, before: data, after: record.apply(to: data), now: now)
    }

    // MARK: Requests (on `queue`)

    /// Runs one request. A write named by its origin (the client, and `origin.request`, its
    /// number) is applied once: sent again, it is answered as soon as it is durable.
    func handle(_ request: Request, from session: ServerSession?, as identity: Identity,
                origin: (origin: WriteOrigin, request: Int)? = nil, echo: Bool = false, reply: @escaping @Sendable (Response) -> Void) {
        var reply = reply
        // Only writes read `origin`; one out of range is none.
        let origin = origin.flatMap { $0.origin.admits(request: $0.request) ? $0 : nil }
        switch request {
        case .put, .merge:
            if let (named, number) = origin {
                receipts.advance(to: named)
                if receipts.contains(named.client, number) { return answerWhenDurable(named.client, number, reply) }
            }
        default:
            // Only writes wait for the rest of their burst: a client that reads after writing
            // hears of its writes as soon as it would without the wait.
            storeWrites()
        }
        // A realtime request, for the monitors (`Database+Monitoring`): a write once answered,
        // a read here, with what it sent.
        let monitored = operations.isWatched ? session.map { Monitored(session: $0, identity: identity) } : nil
        if let monitored { reply = self.monitored(request, monitored, reply: reply) }
        switch request {
        case let .listen(path, query, tag, hash):
            if let error = Database.checkPath(path, writing: false) { return reply(error) }
            if query?.isCutWithoutWindow == true { return reply(.error(.invalidRequest, Database.uncutListen)) }
            guard let session else { return reply(.error(.invalidRequest, "listens need a connection")) }
            if let refusal = refusedRead(path, query, as: identity) {
                note(monitored, .listen, path, query, allowed: false)
                return reply(refusal)
            }
            let listen = Listen(session: session, path: path, params: query, tag: tag)
            guard addListen(listen, clientHash: hash) else {
                // Its data is more than the client takes in one message: refused as a read
                // that large is, rather than sent for the client to drop and ask for again.
                listeners.remove(session: session, path: path, identifier: listen.identifier)
                release(listen)
                return reply(.error(.tooBig, Database.tooBigListen))
            }
            // Nothing was sent for a client that held the data already (its hash).
            var sent = 0
            if monitored != nil, let data = listen.lastSent.map(listen.shown(window:)), hash.isEmpty || hash != data.hashString { sent = jsonLength(data) }
            note(monitored, .listen, path, query, allowed: true, bytes: sent)
            reply(unindexed(query, at: path) ? .ok(warnings: ["no_index"]) : .ok)
        case let .unlisten(path, query, _):
            if let session, let removed = listeners.remove(session: session, path: path, identifier: query?.identifier ?? "default") {
                release(removed)
            }
            note(monitored, .unlisten, path, query, allowed: nil)
            reply(.ok)
        case let .get(path, query):
            if let error = Database.checkPath(path, writing: false, priorityLast: true) { return reply(error) }
            if let refusal = refusedRead(path, query, as: identity) {
                note(monitored, .realtimeRead, path, query, allowed: false)
                return reply(refusal)
            }
            // A read may be cut as a listen is (it answers once: no window needed).
            let whole = evaluate(path, query: query)
            let value = query?.depth.map { whole.cut(below: $0) } ?? whole
            note(monitored, .realtimeRead, path, query, allowed: true, bytes: monitored == nil ? 0 : jsonLength(value))
            var answer = Response.value(value)
            // Warned of as a listen of it is (`Response.warnings`).
            if unindexed(query, at: path) { answer.warnings = ["no_index"] }
            reply(answer)
        case let .put(path, data, hash):
            if let error = Database.checkPath(path, writing: true, priorityLast: true) { return reply(error) }
            if let error = Database.checkValue(data, at: path) { return reply(error) }
            let value: Node
            do { value = try resolve(data, at: path, now: clock()) } catch { return reply(.error(.invalidData, "\(error)")) }
            let record = LogRecord(sets: [(path, value)], origin: origin?.origin, request: origin?.request ?? 0)
            let checked: Node?
            switch check(record, as: identity, now: clock()) {
            case .refused(let response): return reply(response)
            case .allowed(let after): checked = after
            }
            // After the rules: a compare-and-set must not tell a user what it may not write.
            if let hash, hash != root.child(at: path).hashString {
                return reply(.error(.dataStale, "the data at \(path) changed since it was read"))
            }
            commit(record, after: checked, echo: echo ? path : nil, reply: reply)
        case let .merge(path, updates, guards):
            if let error = Database.checkPath(path, writing: true) ?? Database.checkMerge(updates, at: path) { return reply(error) }
            // Each guard costs a hash of its value: a few, each path once (as the wire reads them).
            if guards.count > UpdateGuard.maximumCount || Set(guards.map(\.path)).count != guards.count {
                return reply(.error(.invalidRequest, "a merge takes at most \(UpdateGuard.maximumCount) guards, each path once"))
            }
            var sets: [(Path, Node)] = []
            let now = clock()
            for update in updates {
                let full = path.appending(update.path)
                do { sets.append((full, try resolve(update.value, at: full, now: now))) } catch {
                    return reply(.error(.invalidData, "\(error)"))
                }
            }
            // A guard says whether a value is the one hashed, so it needs the right to read it.
            func staleGuard() -> Response? {
                for guarded in guards {
                    if let refusal = refusedRead(path.appending(guarded.path), nil, as: identity) { return refusal }
                }
                guard let stale = guards.first(where: { root.child(at: path.appending($0.path)).hashString != $0.hash }) else { return nil }
                return .error(.dataStale, "the data at \(path.appending(stale.path)) changed since it was read")
            }
            if sets.isEmpty { return reply(staleGuard() ?? .ok) }
            let record = LogRecord(sets: sets, origin: origin?.origin, request: origin?.request ?? 0)
            switch check(record, as: identity, now: now) {
            case .refused(let response): reply(response)
            case .allowed(let after):
                // After the rules, as a compare-and-set's: a refusal says nothing of the data.
                if let refusal = staleGuard() { return reply(refusal) }
                commit(record, after: after, reply: reply)
            }
        case .stats:
            reply(.ok)
        case .onDisconnectPut(let path, _), .onDisconnectMerge(let path, _), .onDisconnectCancel(let path):
            if let error = Database.checkPath(path, writing: true, priorityLast: true) { return reply(error) }
            guard let session else { return reply(.error(.invalidRequest, "onDisconnect needs a connection")) }
            // Checked now, so a write that could never run is refused while the client can
            // hear it (and the rules again when it runs).
            var sets: [(Path, Node)] = []
            let now = clock()
            switch request {
            case let .onDisconnectPut(path, data):
                if let error = Database.checkValue(data, at: path) { return reply(error) }
                sets = [(path, data.resolvingServerValues(now: now, existing: root.child(at: path)))]
            case let .onDisconnectMerge(path, updates):
                if let error = Database.checkMerge(updates, at: path) { return reply(error) }
                sets = updates.map { (path.appending($0.path), $0.value.resolvingServerValues(now: now, existing: root.child(at: path.appending($0.path)))) }
            default:
                // A cancel needs the right to write where the operations would have written.
                sets = [(path, root.child(at: path))]
            }
            if case .refused(let refusal) = check(LogRecord(sets: sets), as: identity, now: now) { return reply(refusal) }
            session.recordOnDisconnect(request)
            reply(.ok)
        case let .auth(credential, _, acting):
            // A credential is used and never kept or logged; only who it names stays.
            guard let session else { return reply(.error(.invalidRequest, "auth needs a connection")) }
            let now = clock() / 1000
            do throws(Identity.Refusal) {
                let named = try Identity.from(credential: credential, acting: acting, now: now)
                session.identity = named
                watchExpiry(of: named, for: session)
                revokeDenied(among: listeners.listens(of: session))
                reply(.ok)
            } catch {
                switch error {
                case .expired: reply(.error(.expiredToken, "the credential has expired"))
                case .invalid(let reason): reply(.error(.invalidToken, reason))
                }
            }
        case .unauth:
            if let session {
                session.replaceExpiry(with: nil)
                session.identity = session.initialIdentity
                revokeDenied(among: listeners.listens(of: session))
            }
            reply(.ok)
        }
    }

    /// What the rules say of a write: refused (with the answer), or allowed, with the tree it
    /// leaves when the rules needed it to decide. The owner's writes skip the rules, and are
    /// then made in place (`commit`): a tree kept as it was before a write makes the write
    /// copy its path.
    private enum Check {
        case refused(Response)
        case allowed(after: Node?)
    }

    private func check(_ record: LogRecord, as identity: Identity, now: Double) -> Check {
        guard identity != .admin else { return .allowed(after: nil) }
        // Rules that cannot look at what the write leaves judge it on the tree as it is; it
        // is then made in place, not on a copy.
        let after = rules.writeRulesReadNewData ? record.apply(to: root) : nil
        let paths = explanations.log == nil ? "" : record.sets.map { $0.0.description }.joined(separator: ", ")
        let (denial, trace) = explanations.decide("write at \(paths)", as: identity, refused: { $0 != nil },
                                                  explainable: { $0?.isExplainable ?? false }) { trace, counted in
            rules.checkWrite(record.sets, identity: identity, before: root, after: after, now: now, trace: trace, counted: counted)
        }
        if let denial { return .refused(refusal(denial, explanations.toClients ? trace : nil)) }
        return .allowed(after: after)
    }

    /// Applies a write the rules allowed: `after` is the tree it leaves when the check made
    /// it, else it is made in place. With `echo`, the answer once durable carries the value
    /// the write left there (as of the write: a later one does not show through).
    private func commit(_ record: LogRecord, after: Node?, echo: Path? = nil, reply: @escaping @Sendable (Response) -> Void) {
        committed += 1
        let named = record.origin.map { (client: $0.client, request: record.request) }
        undo.append((committed, record.sets.map(\.path), named))
        if let origin = record.origin { receipts.record(origin, request: record.request) }
        if let after {
            indexes.apply(record, before: root, after: after)
            root = after
        } else {
            indexes.apply(record, to: &root)
        }
        wrote = true
        var reply = reply
        if let echo {
            let written = root.child(at: echo), answer = reply
            reply = { response in answer(response.isOK ? .value(written) : response) }
        }
        // Noted as unstored first, so an index its listens build meanwhile waits for it.
        if unstored.isEmpty { schedule { $0.storeWrites() } }
        unstored.append((record, Database.completion(reply)))
        // Every listen is sent the write's data before the store has it, so the write's
        // acknowledgement (once durable) never overtakes it: a client shown the ack first
        // would take its write back, then show it again.
        notifyListeners(record)
        recheckListens(touchedBy: record)
    }

    /// The store could not make record `first` durable: it and every record after it come
    /// out of the tree, newest first, each listen told as of a write; those not handed to
    /// the store yet are refused too. Then the store takes records again.
    private func takeBack(from first: Int, _ error: StoreError) {
        // Handed over all the same: the store counts them (and refuses them), so its record
        // numbers stay those of `committed`, which `undo` and the waits compare with its.
        let waiting = unstored
        unstored = []
        store.append(waiting) { (root, indexes) }
        let undone = undo.filter { $0.number >= first }
        undo.removeAll { $0.number >= first }
        for entry in undone {
            if let (client, request) = entry.origin { receipts.remove(client, request) }
        }
        let live = root
        let rebuilt = store.rebuild(before: first)
        root = rebuilt.root
        indexes.takeBack(to: rebuilt.indexes)
        let restored = LogRecord(sets: Database.restoring(Set(undone.flatMap(\.paths)), from: live, to: root))
        notifyListeners(restored)
        recheckListens(touchedBy: restored)
        store.recover(from: first)
        let refused = awaitingDurable.filter { $0.number >= first }
        awaitingDurable.removeAll { $0.number >= first }
        for entry in refused { entry.done(self, error) }
    }

    /// The sets that take listens from `live` to `rebuilt` where refused writes wrote
    /// `paths`: each at its path, or higher where the shape differs above it (a leaf written
    /// below, a node emptied or made, a priority an emptied node lost), as only a value set
    /// there brings it back. Those covered by another go; values come before removals, so
    /// no node a client holds is emptied (and loses its priority) on the way.
    static func restoring(_ paths: Set<Path>, from live: Node, to rebuilt: Node) -> [(Path, Node)] {
        var points = Set<Path>()
        for path in paths {
            var point = path
            var before = live, after = rebuilt
            for (depth, key) in path.keys.enumerated() {
                if before.isLeaf || before.isEmpty || after.isLeaf || after.isEmpty || before.priority != after.priority {
                    point = Path(keys: Array(path.keys.prefix(depth)))
                    break
                }
                before = before.child(key)
                after = after.child(key)
            }
            points.insert(point)
        }
        let kept = points.filter { point in !points.contains { $0 != point && $0.contains(point) } }
        let sets = kept.sorted { $0.description < $1.description }.map { ($0, rebuilt.child(at: $0)) }
        return sets.filter { !$0.1.isEmpty } + sets.filter { $0.1.isEmpty }
    }

    /// Answers a write sent again, once every record applied so far is durable (its first
    /// copy among them): as its first copy was answered, durable or refused.
    private func answerWhenDurable(_ client: String, _ request: Int, _ reply: @escaping @Sendable (Response) -> Void) {
        whenDurable(through: committed) { database, error in
            guard let error, !database.receipts.contains(client, request) else { return reply(.ok) }
            reply(Database.completionResponse(error))
        }
    }

    /// Runs `done` once the records through `number` are durable (nil), or when one of them
    /// is refused (its error); at once when they are durable already.
    private func whenDurable(through number: Int, _ done: @escaping @Sendable (isolated Database, StoreError?) -> Void) {
        if !undo.contains(where: { $0.number <= number }) { return done(self, nil) }
        awaitingDurable.append((number, done))
    }

    /// The records through `through` are durable: their undo goes, and what waited for them
    /// runs.
    private func madeDurable(through: Int) {
        undo.removeAll { $0.number <= through }
        guard !awaitingDurable.isEmpty else { return }
        let ready = awaitingDurable.filter { $0.number <= through }
        awaitingDurable.removeAll { $0.number <= through }
        for entry in ready { entry.done(self, nil) }
    }

    /// Hands the writes applied since the last call to the store, with the tree and indexes
    /// as they are now (any index built meanwhile included) when a checkpoint is due.
    func storeWrites() {
        guard !unstored.isEmpty else { return }
        store.append(unstored) { (root, indexes) }
        unstored = []
    }

    /// The store wants the tree for a checkpoint: with writes it has not been handed, they
    /// bring it; else it is offered alone.
    private func offerSnapshot() {
        if unstored.isEmpty { store.offer(root: root, indexes: indexes) } else { storeWrites() }
    }

    /// What the store calls once a write is durable, or could not be made so.
    private static func completion(_ reply: @escaping @Sendable (Response) -> Void) -> @Sendable (StoreError?) -> Void {
        { error in reply(error.map(completionResponse) ?? .ok) }
    }

    private static func completionResponse(_ error: StoreError) -> Response {
        .error(.writeFailed, "the write could not be made durable: \(error.clientDescription)")
    }

    /// Starts a listen; its current data goes out first (before a session's ok: the client
    /// takes ok as "complete"), unless the client already holds exactly that (`clientHash`,
    /// as after a reconnection): then the ok alone completes it. False when the data was
    /// more than the session sends in one message: nothing was sent.
    @discardableResult
    private func addListen(_ listen: Listen, clientHash: String = "") -> Bool {
        if let old = listeners.remove(session: listen.session, path: listen.path, identifier: listen.identifier) { release(old) }
        listeners.add(listen)
        noteDataDependence(listen)
        if listen.isFiltered, let params = listen.params { indexListens[QueryIndexes.key(listen.path, params.index), default: 0] += 1 }
        let data = currentData(for: listen)
        listen.lastSent = data
        let shown = listen.shown(window: data)
        if !clientHash.isEmpty && clientHash == shown.hashString { return true }
        return listen.session.sendIfItFits(.data(path: listen.path, data: shown, tag: listen.tag))
    }

    /// Why a query cut to a depth without bounds or a limit is refused.
    public static let uncutListen = "a query cut to a depth (dp) needs bounds or a limit: only then do its updates name whole children"

    /// A REST stream (Server-Sent Events) listens like a session; the caller has checked
    /// that its identity may read there. Its credential's expiry ends it.
    public nonisolated func stream(_ sink: ListenSink, path: Path, query: QueryParams?) {
        schedule { database in
            // Checked again here: the rules or the data may have changed since the caller asked
            // (which counted the request in the coverage).
            // A cut stream needs a window (`uncutListen`): the caller refuses one without.
            guard query?.isCutWithoutWindow != true,
                  database.rules.canRead(path, identity: sink.identity, query: query, data: database.root, now: database.clock(), counted: false) else {
                return sink.send(.listenRevoked(path: path, query: query))
            }
            database.addListen(Listen(session: sink, path: path, params: query, tag: nil))
            database.watchExpiry(of: sink.identity, for: sink)
        }
    }

    /// A realtime connection ended: its onDisconnect operations run as ordinary writes, in
    /// order, with server values resolved now, checked with the rules as `identity`.
    func runOnDisconnect(_ operations: [Request], as identity: Identity) {
        for operation in operations {
            switch operation {
            case let .onDisconnectPut(path, data): handle(.put(path: path, data: data, hash: nil), from: nil, as: identity) { _ in }
            case let .onDisconnectMerge(path, updates): handle(.merge(path: path, data: updates), from: nil, as: identity) { _ in }
            default: continue
            }
        }
    }

    /// A REST stream went away (from any thread): its listens go with it, then `completion` runs.
    public nonisolated func detach(_ sink: ListenSink, then completion: @escaping @Sendable () -> Void = {}) {
        schedule { database in
            database.sessionClosed(sink)
            completion()
        }
    }

    /// A connection or stream went away: its listens go with it.
    func sessionClosed(_ session: ListenSink) {
        for listen in listeners.listens(of: session) {
            listeners.remove(session: session, path: listen.path, identifier: listen.identifier)
            release(listen)
        }
    }

    // MARK: Listens and indexes (on `queue`)

    /// A listen ended (its index stays a while: see `indexes`).
    private func release(_ listen: Listen) {
        if listen.dependsOnData {
            listen.readPatterns = []
            dataDependentListens -= 1
        }
        guard listen.isFiltered, let params = listen.params else { return }
        let key = QueryIndexes.key(listen.path, params.index)
        let remaining = (indexListens[key] ?? 1) - 1
        indexListens[key] = remaining > 0 ? remaining : nil
        if remaining <= 0 { dropIdleIndexes() }
    }

    /// The data a listen is sent: all of its location, or its query's window.
    private func currentData(for listen: Listen) -> Node {
        let node = root.child(at: listen.path)
        guard listen.isFiltered, let params = listen.params else { return node }
        return answer(params, at: listen.path, on: node)
    }

    /// Sends a query's listen what `record` changed in its window, as its own update: a
    /// client sees every window its writes pass through, in order, as it would from
    /// Firebase. A write at or above the location sends the whole window; below it, the
    /// children written that are in the window (null for those that left it) and, under a
    /// limit, the children others pushed in or out. Nothing goes out when nothing changed.
    private func sendWindowChange(_ listen: Listen, by record: LogRecord, counting broadcast: inout Broadcast?) {
        func send(_ whole: Push) {
            let push = listen.shown(whole)
            if broadcast != nil { broadcast?.count(pushLength(push), to: listen.session) }
            listen.session.send(push)
        }
        guard let params = listen.params else { return }
        // The children written, each once; most writes name one, so a set (byte-wise, as
        // keys are; a String set is not) answers only past a few.
        var written: [ChildKey] = []
        var many: Set<ChildKey>?
        func isWritten(_ key: ChildKey) -> Bool { many?.contains(key) ?? written.contains(key) }
        var whole = false
        for (path, _) in record.sets {
            if path.contains(listen.path) { whole = true; break }
            guard listen.path.contains(path) else { continue }  // another part of a multi-path update
            let key = ChildKey(path.keys[listen.path.count])
            guard !isWritten(key) else { continue }
            written.append(key)
            if many != nil { many?.insert(key) } else if written.count > 8 { many = Set(written) }
        }
        guard !whole, let previous = listen.lastSent else {
            let window = currentData(for: listen)
            // Kept even when equal: `==` takes canonically equivalent strings as equal, and
            // the next window reuses these children.
            let unchanged = window == listen.lastSent
            listen.lastSent = window
            if !unchanged { send(.data(path: listen.path, data: window, tag: listen.tag)) }
            return
        }
        let node = root.child(at: listen.path)
        var updates: [UpdateEntry] = []
        func change(_ key: ChildKey, to value: Node) { updates.append(UpdateEntry(Path(keys: [key.name]), value)) }
        if params.limit == nil {
            // Bounds alone: a child is in the window by its own value, whatever the others do,
            // so the window changes only where it was written (no pass over all of it).
            var children = previous.children
            for key in written {
                let child = node.child(key)
                if !child.isEmpty && params.matches(key: key, node: child) {
                    children = children.inserting(key, child)
                    change(key, to: child)
                } else if children[key] != nil {
                    children = children.removing(key)
                    change(key, to: .empty)
                }
            }
            listen.lastSent = Node(children: children)
        } else if let entering = entering(written, listen, params, node) {
            // Written only outside the window: it changes only if one of them enters it.
            guard let key = entering.first else { return }
            let child = node.child(key)
            var children = previous.children
            if let limit = params.limit, children.count >= limit, let edge = edge(of: listen, params) {
                children = children.removing(edge.key)
                change(edge.key, to: .empty)
            }
            listen.lastSent = Node(children: children.inserting(key, child))
            change(key, to: child)
        } else {
            // Under a limit, a child written into the window pushes another out, and one
            // leaving it lets another in: the new window is compared with the last one. Its
            // children not written are taken from the last one (a lookup in a stored list of
            // a million children reads about twenty records).
            let window = answer(params, at: listen.path, on: node, reusing: previous, changed: isWritten)
            let before = previous.children, after = window.children
            for (key, _) in before where after[key] == nil { change(key, to: .empty) }
            for (key, child) in after where isWritten(key) || before[key] == nil { change(key, to: child) }
            listen.lastSent = window
        }
        if updates.count == 1 {
            send(.data(path: listen.path.appending(updates[0].path), data: updates[0].value, tag: listen.tag))
        } else if !updates.isEmpty {
            send(.merge(path: listen.path, data: updates, tag: listen.tag))
        }
    }

    /// When no child written is in a limited query's window: those that enter it, in bounds
    /// and (the window full) ahead of its child nearest the cut. Nil when one of them was in
    /// it, or more than one enters: the query is then answered again. Most writes to a big
    /// list thus cost no query: one entering pushes that nearest child out, and others change
    /// nothing.
    private func entering(_ written: [ChildKey], _ listen: Listen, _ params: QueryParams, _ node: Node) -> [ChildKey]? {
        guard let limit = params.limit, let window = listen.lastSent?.children,
              !written.contains(where: { window[$0] != nil }) else { return nil }
        let full = window.count >= limit
        let edge = full ? self.edge(of: listen, params) : nil
        if full && edge == nil { return nil }
        var entering: [ChildKey] = []
        for key in written {
            let child = node.child(key)
            guard !child.isEmpty, params.matches(key: key, node: child) else { continue }
            if let edge {
                let order = params.index.compare(params.index.position(of: key, child), edge.position)
                guard params.isViewFromLeft ? order < 0 : order > 0 else { continue }
            }
            entering.append(key)
            if entering.count > 1 { return nil }
        }
        return entering
    }

    /// The child of a limited query's window nearest the side the limit cuts: its last for
    /// limitToFirst, its first for limitToLast. Kept with the listen until its window changes.
    private func edge(of listen: Listen, _ params: QueryParams) -> (key: ChildKey, position: IndexPosition)? {
        if let edge = listen.windowEdge { return edge }
        let index = params.index, fromLeft = params.isViewFromLeft
        var edge: (key: ChildKey, position: IndexPosition)?
        for (key, child) in listen.lastSent?.children ?? ChildMap() {
            let position = index.position(of: key, child)
            if let current = edge, (index.compare(position, current.position) < 0) == fromLeft { continue }
            edge = (key, position)
        }
        listen.windowEdge = edge
        return edge
    }

    /// Sends each concerned listen the smallest update that is correct, in one message so a
    /// multi-path update arrives whole.
    private func notifyListeners(_ record: LogRecord) {
        guard listeners.count > 0 else { return }
        let paths = record.sets.map(\.path)
        var broadcast = operations.isWatched ? Broadcast() : nil
        // Listens at one location are sent the same push (untagged): its bytes are made once.
        var whole: [Path: SharedEncoding] = [:], below: [Path: SharedEncoding] = [:], merged: [Path: SharedEncoding] = [:]
        // A shared push's bytes, measured once for the monitors.
        var lengths: [ObjectIdentifier: Int] = [:]
        func send(_ push: Push, to listen: Listen, _ shared: inout [Path: SharedEncoding], at path: Path) {
            guard listen.tag == nil else {
                if broadcast != nil { broadcast?.count(pushLength(push), to: listen.session) }
                return listen.session.send(push)
            }
            let encoding = shared[path] ?? SharedEncoding(.push(push))
            shared[path] = encoding
            if broadcast != nil {
                let length = lengths[ObjectIdentifier(encoding)] ?? pushLength(push)
                lengths[ObjectIdentifier(encoding)] = length
                broadcast?.count(length, to: listen.session)
            }
            listen.session.send(sharing: encoding)
        }
        defer { if let broadcast { publish(broadcast, of: record) } }
        for listen in listeners.affected(by: paths) {
            if listen.isFiltered {
                sendWindowChange(listen, by: record, counting: &broadcast)
                continue
            }
            let relevant = record.sets.filter { listen.path.overlaps($0.path) }
            if relevant.contains(where: { $0.path.contains(listen.path) }) {
                send(.data(path: listen.path, data: root.child(at: listen.path), tag: listen.tag), to: listen, &whole, at: listen.path)
            } else if relevant.count == 1 {
                send(.data(path: relevant[0].path, data: relevant[0].value, tag: listen.tag), to: listen, &below, at: relevant[0].path)
            } else {
                let updates = relevant.map { UpdateEntry($0.path.relative(to: listen.path)!, $0.value) }
                send(.merge(path: listen.path, data: updates, tag: listen.tag), to: listen, &merged, at: listen.path)
            }
        }
    }

    /// A request's path: valid keys and size; no write to `.info`; `.priority` last only where
    /// a write or a read (`g`) may name it.
    static func checkPath(_ path: Path, writing: Bool, priorityLast: Bool = false) -> Response? {
        do {
            try path.validate(allowInfo: !writing, allowPriorityLast: priorityLast)
            return nil
        } catch {
            return .error(.invalidPath, "\(error)")
        }
    }

    /// A value about to be written at `path`, checked against the database's rules.
    static func checkValue(_ data: Node, at path: Path) -> Response? {
        do {
            try data.validate(at: path)
            return nil
        } catch {
            return .error(.invalidData, "\(error)")
        }
    }

    /// A merge's child paths and values, and that no child path lies below another.
    static func checkMerge(_ updates: [UpdateEntry], at path: Path) -> Response? {
        for update in updates {
            let full = path.appending(update.path)
            if let error = checkPath(full, writing: true, priorityLast: true) ?? checkValue(update.value, at: full) { return error }
        }
        do {
            try validateUpdatePaths(updates.map { ($0.path, $0.value) }, base: path)
            return nil
        } catch {
            return .error(.invalidData, "\(error)")
        }
    }
}
