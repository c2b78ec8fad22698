import Foundation
import RTDBData
import RTDBProtocol
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The durable tree of one database: a node file, a head, and a write-ahead log, in a data folder.
///
/// Files: `LOCK`; `HEAD` (see `FolderHead`) and `HEAD.copy`, the same bytes (what `--recover`
/// rebuilds a damaged head from); `nodes-N.rtdb`, the tree as stored branches (see
/// `NodeFile`), read only where a request looks, so an open costs the same whatever the size;
/// `wal-N.log`, the records since the tree the head names; `snapshots/` the saved snapshots
/// (`SnapshotFile`, `SnapshotCatalog`), which a log's restore names. A write is acknowledged only after
/// its record is on disk: the committer writes everything queued since its last round with one
/// `fdatasync` (group commit).
///
/// A checkpoint appends to the node file the branches written since the last one (those in
/// memory: what the writes changed, not the whole tree), makes it durable,
/// then replaces the head and removes the logs it covers. The database then reads its tree
/// from the file again (`rebase`), so memory holds only what changed since. When the node
/// file has grown to twice its size at its last full copy (replaced branches are never
/// reused), a checkpoint copies the live tree to a new file instead.
///
/// The query indexes the database keeps are stored with the tree (their links in the head),
/// and read from the file as they are walked after an open, like the tree; the logs are
/// applied to them as to the tree.
///
/// Recovery reads the head, maps the node file and replays later logs, cutting a torn record
/// at the end of the last log (a crash mid-write: that record was never acknowledged); damage
/// anywhere else stops the open (see `replay`). A folder of the first format (a JSON
/// snapshot, no head) is converted on open.
///
/// Its state is in three locks, one per owner: `commit` holds what the database appends and
/// the committer takes (held briefly); `log` the log file, owned by the committer's rounds and
/// by `finishClose` once they are done; `head` the folder's head, owned by the one checkpoint
/// running (and by `init` and `close`, when none is).
public final class Store: Sendable {
    public let folder: String

    /// What the open recovered, until `releaseRecoveredRoot`.
    private struct Recovered {
        var root: Node
        /// The query indexes stored with it, brought up to date with the logs.
        var indexes: QueryIndexes
        /// The writes applied for each client that names them, as of the recovered tree.
        var receipts: WriteReceipts
    }

    private let recovered: Mutex<Recovered>
    /// The tree as recovered at open (until `releaseRecoveredRoot`).
    public var recoveredRoot: Node { recovered.withLock { $0.root } }
    var recoveredIndexes: QueryIndexes { recovered.withLock { $0.indexes } }
    var recoveredReceipts: WriteReceipts { recovered.withLock { $0.receipts } }
    /// The snapshot files the logs replayed at open restore: until a checkpoint covers those
    /// logs, the next open reads them again.
    let restoredAtOpen: Set<Int>

    /// When checkpoints run; set before writes come (tests and tools change them).
    private struct Tuning {
        var checkpointThreshold = 16 << 20
        var idleCheckpointDelay: Double? = 5
        var idleCheckpointMinimum = 1 << 16
        var compactionSlack = 64 << 20
        var checkpointOnClose = true
    }

    private let tuning = Mutex(Tuning())
    /// Checkpoint once the current log passes this many bytes.
    public var checkpointThreshold: Int {
        get { tuning.withLock { $0.checkpointThreshold } }
        set { tuning.withLock { $0.checkpointThreshold = newValue } }
    }
    /// Checkpoint a log that holds records once no write has come for this many seconds
    /// (nil: never), so a database left idle gives back what its recent writes hold in
    /// memory, and the next open has nothing to replay.
    public var idleCheckpointDelay: Double? {
        get { tuning.withLock { $0.idleCheckpointDelay } }
        set { tuning.withLock { $0.idleCheckpointDelay = newValue } }
    }
    /// The idle checkpoint waits for a log of at least this many bytes: a few small writes
    /// hold little memory, and a write every few seconds should not cost a checkpoint each.
    public var idleCheckpointMinimum: Int {
        get { tuning.withLock { $0.idleCheckpointMinimum } }
        set { tuning.withLock { $0.idleCheckpointMinimum = newValue } }
    }
    /// How much the node file may grow past twice its size at its last full copy before
    /// the next checkpoint copies it whole.
    public var compactionSlack: Int {
        get { tuning.withLock { $0.compactionSlack } }
        set { tuning.withLock { $0.compactionSlack = newValue } }
    }
    /// Whether `close` checkpoints what the log holds (tests turn it off to keep a log, as a
    /// killed process leaves one).
    var checkpointOnClose: Bool {
        get { tuning.withLock { $0.checkpointOnClose } }
        set { tuning.withLock { $0.checkpointOnClose = newValue } }
    }

    /// Where the store tells the database what happened; set by the database once, at its open.
    struct Callbacks {
        /// Told, on a background queue, when a checkpoint stored the tree and its indexes as
        /// of the record numbered `marker`, with the records through `through` applied again;
        /// the database calls `rebase` with them on its own queue before it returns (no other
        /// checkpoint starts until then). Never called from `close`.
        var onCheckpoint: (@Sendable (_ replayed: Node, _ indexes: QueryIndexes, _ through: Int, _ marker: Int) -> Void)?
        /// Told, on the committer's queue, that a checkpoint is due: the database answers with
        /// its tree (`offer`, or its next `append`), on its own queue.
        var onSnapshotWanted: (@Sendable () -> Void)?
        /// Told, on the committer's queue, that the records through this number are durable.
        var onDurable: (@Sendable (Int) -> Void)?
        /// Told, on the committer's queue, that the record of this number could not be made
        /// durable (a full disk), before its writer is (the answers wait for it to return):
        /// it and every record after it are refused until the database has taken them out of
        /// its tree and called `recover`.
        var onFailure: (@Sendable (Int, StoreError) -> Void)?
    }

    private let callbackTable = Mutex(Callbacks())
    var callbacks: Callbacks {
        get { callbackTable.withLock { $0 } }
        set { callbackTable.withLock { $0 = newValue } }
    }

    /// Where damage found in the node file while reading, and a failed checkpoint, are told.
    public static let report: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("rtdb: \(message)\n".utf8))
    }

    private let lock: FolderLock

    /// What the database appends and the committer takes.
    private struct Commit {
        var pending = LogBatch()
        var pendingCompletions: [@Sendable (StoreError?) -> Void] = []
        /// The origins of the records in `pending`, in order.
        var pendingOrigins: [(origin: WriteOrigin, request: Int)] = []
        /// Set when a checkpoint is due: the database then hands over its tree with the
        /// records it appends (`append`), or by itself when it has none to append (`offer`).
        /// The store holds no tree otherwise, so the database's writes change its tree in
        /// place (a tree held here made each write copy its path).
        var snapshotWanted = false
        /// The tree and indexes as of the last record appended, once wanted: what the next
        /// round checkpoints after writing its records.
        var pendingSnapshot: (root: Node, indexes: QueryIndexes)?
        /// When `close` began: the marker of the stored tree the database's tree was rebased
        /// on, and the records accepted (those appended later were refused).
        var closingRebasedOn: Int?
        var closingAccepted = 0
        /// The database's tree as rebased on a checkpoint that finished after closing began.
        var rebasedWhileClosing: (root: Node, indexes: QueryIndexes, marker: Int)?
        var closed = false
        /// Records appended so far, and those a checkpoint has not stored yet (with their numbers).
        var appended = 0
        var unstored: [(number: Int, record: LogRecord)] = []
        /// What the last background checkpoint stored, as of which record (for `close`).
        var lastStored: (root: Node, indexes: QueryIndexes, marker: Int)?
        /// The tree and indexes opened, until a checkpoint stores others (`lastStored`): with
        /// the records appended since, what `rebuild` makes the tree as of a record from.
        var opened: (root: Node, indexes: QueryIndexes)
        /// The marker of the stored tree the database's tree was last rebased on.
        var rebasedOn: Int?
        var roundScheduled = false
        var closing = false
        var failure: StoreError?

        /// Whether records are refused: after a failure, or once closing began.
        var stopped: Bool { closing || failure != nil }
    }

    private let commit: Mutex<Commit>

    /// The log file and what the committer knows of it.
    private struct Log {
        var fd: Int32 = -1
        /// Whether the current log's name is durable in the folder. Opening the folder makes
        /// the log without syncing the folder, so a session that only reads pays no sync; the
        /// first round syncs it before it writes to the log.
        var nameDurable = false
        var sequence: Int
        var bytes = 0
        /// The records through this number are in the log.
        var durableThrough = 0
        /// The writes applied for each client as of the records in the log: what a
        /// checkpoint's head holds, so they outlive the logs it removes.
        var receipts: WriteReceipts
        var checkpointRunning = false
        var idleCheckScheduled = false
    }

    private let log: Mutex<Log>
    private let head: Mutex<FolderHead?>
    private let checkpoints = DispatchGroup()
    /// Runs commit rounds while there are records to make durable; no thread is held by an
    /// idle store, so a server with many namespaces does not keep one thread for each.
    private let committer = DispatchQueue(label: "rtdb.store.commit")

    /// Opens (creating when needed) the store in `folder`. With `salvage`, damage does not stop
    /// the open: what can be read is kept, the damaged files are moved to a `damaged-…` folder
    /// beside the others, a new node file holds the result, and `salvage` says what was lost.
    public init(folder: String, salvage: RecoveryReport? = nil) throws {
        self.folder = folder
        try FileIO.makeDirectories(folder)
        do {
            lock = try FolderLock(folder: folder, name: "LOCK")
        } catch .held(let pid) {
            throw StoreError.folderInUse(folder: folder, pid: pid)
        } catch .unusable(let code) {
            throw StoreError.io(operation: "open", path: folder + "/LOCK", errno: code)
        }
        do {
            var names = try FileIO.listDirectory(folder)
            for name in names where name.hasSuffix(".tmp") {
                unlink(folder + "/" + name)  // a head or a snapshot that never finished
            }
            names.removeAll { $0.hasSuffix(".tmp") }
            let snapshotSeqs = names.compactMap { Store.sequence($0, prefix: "snapshot-", suffix: ".json") }.sorted()
            let walSeqs = names.compactMap { Store.sequence($0, prefix: "wal-", suffix: ".log") }.sorted()
            let nodeIDs = names.compactMap { Store.sequence($0, prefix: "nodes-", suffix: ".rtdb") }

            var root = Node.empty
            var indexes = QueryIndexes()
            var receipts = WriteReceipts()
            var base = 0
            var head: FolderHead?
            if names.contains("HEAD") || names.contains(Store.headCopyName) {
                let stored = try Store.readHead(folder, salvage: salvage)
                let path = folder + "/" + Store.nodesName(stored.nodesID)
                let onDamage: @Sendable (String) -> Void
                if let salvage { onDamage = { salvage.noteDamage($0) } } else { onDamage = Store.report }
                let file: NodeFile
                do { file = try NodeFile(path: path, id: stored.nodesID, length: stored.nodesLength, onDamage: onDamage) } catch let failure as NodeFile.Failure {
                    throw StoreError(failure)
                }
                guard let storedRoot = file.node(encoded: stored.root) else {
                    throw StoreError.corrupt(file: folder + "/HEAD", offset: 48, reason: "its root does not read as a node of \(path)")
                }
                root = storedRoot
                // Salvage stores none: queries build them again from what was saved.
                for link in stored.indexes where salvage == nil {
                    // An index is derived data: one the head cannot link to is built again when a query needs it.
                    guard let entries = file.storedIndex(offset: link.offset, size: link.size) else {
                        Store.report("\(folder)/HEAD links the index of \(link.path) by \(link.index) outside \(path); it is built again when a query needs it")
                        continue
                    }
                    indexes[QueryIndexes.key(link.path, link.index)] = QueryIndex(path: link.path, index: link.index, stored: entries.entries, branches: entries.branches)
                }
                receipts = stored.receipts
                base = stored.covered
                head = stored
            } else if let n = snapshotSeqs.last {
                root = try Store.readSnapshot(folder + "/" + Store.snapshotName(n), salvage: salvage)
                base = n
            } else if !nodeIDs.isEmpty && !walSeqs.contains(1) {
                // A first checkpoint cut short leaves a node file and the first log, which
                // holds everything. Without that log, the tree is in the node file, and only
                // a head can say where: the folder is not opened as if empty.
                throw StoreError.unsalvageable(file: folder + "/HEAD", offset: 0, reason: "the file is missing, and so is its copy (\(Store.headCopyName)); without them the node file cannot be read")
            }
            // What a finished checkpoint made obsolete, or an interrupted full copy left.
            for id in nodeIDs where id != head?.nodesID { unlink(folder + "/" + Store.nodesName(id)) }
            for seq in walSeqs where seq <= base { unlink(folder + "/" + Store.walName(seq)) }
            let replay = walSeqs.filter { $0 > base }
            var restored = Set<Int>()
            for (i, seq) in replay.enumerated() {
                let path = folder + "/" + Store.walName(seq)
                root = try Store.replay(path, into: root, indexes: &indexes, receipts: &receipts, isLast: i == replay.count - 1,
                                        restored: &restored, salvage: salvage)
            }
            // Snapshot files no name holds and no log restores: removed or saved again since.
            // (A catalog that cannot be read removes nothing: `snapshot list` says why.)
            if salvage == nil { try? SnapshotFile.removeUnused(in: folder, restored: restored) }
            restoredAtOpen = restored
            var sequence = max(replay.last ?? (base + 1), base + 1)
            recovered = Mutex(Recovered(root: root, indexes: indexes, receipts: receipts))
            commit = Mutex(Commit(opened: (root, indexes)))
            self.head = Mutex(head)
            log = Mutex(Log(sequence: sequence, receipts: receipts))

            if let salvage {
                // Every branch is read once: a full copy leaves out what cannot be read, and
                // says so; damaged files are kept for inspection.
                let covered = sequence
                sequence += 1
                let copy = try checkpoint(root, indexes: QueryIndexes(), receipts: receipts, covered: covered, wholeCopy: true, dropDamaged: true, removingObsolete: false)
                if salvage.skipped.isEmpty {
                    removeObsolete(covered: covered, nodesID: copy.id)
                } else {
                    let aside = "damaged-\(Int(Date().timeIntervalSince1970))"
                    try FileIO.makeDirectories(folder + "/" + aside)
                    for name in names where name != Store.nodesName(copy.id)
                        && (name.hasPrefix("wal-") || name.hasPrefix("snapshot-") || name.hasPrefix("nodes-")) && FileManager.default.fileExists(atPath: folder + "/" + name) {
                        guard rename(folder + "/" + name, folder + "/" + aside + "/" + name) == 0 else {
                            throw StoreError.io(operation: "move aside", path: folder + "/" + name, errno: errno)
                        }
                    }
                    try FileIO.syncDirectory(folder)
                    salvage.noteMoved(to: folder + "/" + aside)
                }
                // Indexes are left behind: queries build them again from what was saved.
                recovered.withLock { $0 = Recovered(root: copy.root, indexes: QueryIndexes(), receipts: receipts) }
                commit.withLock { $0.opened = (copy.root, QueryIndexes()) }
            } else if head == nil && !snapshotSeqs.isEmpty {
                // A folder of the first format: its JSON snapshot and logs become the node file.
                let covered = sequence
                sequence += 1
                let converted = try checkpoint(root, indexes: QueryIndexes(), receipts: receipts, covered: covered, wholeCopy: true, dropDamaged: false)
                recovered.withLock { $0.root = converted.root }
                commit.withLock { $0.opened = (converted.root, QueryIndexes()) }
            }

            let walPath = folder + "/" + Store.walName(sequence)
            let fd = try FileIO.open(walPath, O_WRONLY | O_CREAT | O_APPEND)
            var st = stat()
            fstat(fd, &st)
            log.withLock { log in
                log.fd = fd
                log.sequence = sequence
                log.bytes = Int(st.st_size)
            }
        } catch {
            lock.release()
            throw error
        }
    }

    /// The folder's head. One that is damaged (or gone while its copy is there) stops the
    /// open; a salvaging open takes the copy instead (both are written at each checkpoint).
    /// A head that reads is copied again when its copy differs: a crash between the two
    /// writes left the old one.
    private static func readHead(_ folder: String, salvage: RecoveryReport?) throws -> FolderHead {
        let path = folder + "/HEAD", copyPath = folder + "/" + headCopyName
        var damage: (offset: Int, reason: String)
        do {
            let bytes = try FileIO.readFile(path)
            let head = try FolderHead.decode(bytes, path: path)
            if (try? FileIO.readFile(copyPath)) != bytes {
                // Best effort: a full disk or a read-only folder still opens to be read.
                do { try writeFile(copyPath, bytes) } catch { report("\(folder): the head's copy could not be written: \(error)") }
            }
            return head
        } catch StoreError.corrupt(let file, let offset, let reason) where reason.hasPrefix(FolderHead.unknownVersion) {
            // Written by a newer rtdb, not damaged: its copy says the same.
            throw StoreError.corrupt(file: file, offset: offset, reason: reason)
        } catch StoreError.corrupt(_, let offset, let reason) {
            damage = (offset, reason)
        } catch StoreError.io(_, _, ENOENT) {
            damage = (0, "the file is missing")
        }
        let copy: FolderHead
        do { copy = try FolderHead.decode(FileIO.readFile(copyPath), path: copyPath) } catch {
            let why: String
            if case let StoreError.corrupt(file, offset, reason) = error { why = "\(file) is damaged at byte \(offset): \(reason)" } else { why = "\(error)" }
            throw StoreError.unsalvageable(file: path, offset: damage.offset, reason: "\(damage.reason); its copy cannot stand in for it: \(why)")
        }
        guard let salvage else {
            throw StoreError.corrupt(file: path, offset: damage.offset, reason: "\(damage.reason) (its copy, \(headCopyName), reads, and --recover rebuilds the head from it)")
        }
        salvage.noteRepair("\(path) (damaged at byte \(damage.offset): \(damage.reason)) was rebuilt from its copy, \(headCopyName)")
        return copy
    }

    /// A first-format snapshot (the whole tree as JSON), salvaged when asked.
    private static func readSnapshot(_ path: String, salvage: RecoveryReport?) throws -> Node {
        let bytes = try FileIO.readFile(path)
        do {
            return try JSONReader.parse(data: bytes, options: .init(allowServerValues: false))
        } catch let e as JSONParseError {
            guard let salvage else { throw StoreError.corrupt(file: path, offset: e.offset, reason: e.message) }
            // Earlier versions could write NaN or Infinity; such values are dropped.
            do {
                let root = try JSONReader.parse(data: bytes, options: .init(allowServerValues: false, dropNonFiniteNumbers: true))
                salvage.noteDamage("\(path): numbers that were not finite (NaN or Infinity) were left out")
                return root
            } catch let e as JSONParseError {
                throw StoreError.corrupt(file: path, offset: e.offset, reason: e.message + "; the snapshot cannot be salvaged")
            }
        }
    }

    /// Lets go of the tree recovered at open, once its owner has it: it would keep the node
    /// file of that time mapped (and its disk space, after a full copy) for the store's life.
    public func releaseRecoveredRoot() {
        recovered.withLock { $0 = Recovered(root: .empty, indexes: QueryIndexes(), receipts: WriteReceipts()) }
    }

    /// Queues records in order, under one lock; `completion` runs on the committer queue once
    /// its record is durable (nil) or could not be made durable. `snapshot` gives the tree and
    /// the query indexes with all of them applied; it is called (under the lock) only when a
    /// checkpoint is due.
    func append(_ records: [(record: LogRecord, completion: @Sendable (StoreError?) -> Void)], snapshot: () -> (root: Node, indexes: QueryIndexes)) {
        let refused: StoreError? = commit.withLock { state in
            // Kept even when refused below: the database's tree holds them, and `rebase` must
            // give that same tree back.
            for (record, _) in records {
                state.appended += 1
                state.unstored.append((state.appended, record))
            }
            if let failure = state.failure ?? (state.closing ? .failed("the database is closed") : nil) { return failure }
            if state.snapshotWanted { state.pendingSnapshot = snapshot() }
            for (record, completion) in records {
                state.pending.append(record)
                state.pendingCompletions.append(completion)
                if let origin = record.origin { state.pendingOrigins.append((origin, record.request)) }
            }
            if !state.roundScheduled {
                state.roundScheduled = true
                // Enqueued under the lock, so a `close` that follows finds the round queued.
                committer.async { self.commitRounds() }
            }
            return nil
        }
        if let refused {
            for (_, completion) in records { completion(refused) }
        }
    }

    /// The database's tree and indexes, as of every record it appended, offered (on its
    /// queue) when a checkpoint is due. With records still to write, the round that writes
    /// them checkpoints after; with none, the checkpoint starts after the round in progress.
    func offer(root: Node, indexes: QueryIndexes) {
        commit.withLock { state in
            guard state.snapshotWanted, !state.stopped else { return }
            if !state.pending.isEmpty {
                state.pendingSnapshot = (root, indexes)
                return
            }
            state.snapshotWanted = false
            let marker = state.appended
            // Enqueued under the lock: a round for records appended later runs after it, so
            // they go to the next log, which this checkpoint does not cover.
            committer.async {
                // A round under way when this was queued may have taken records appended
                // after `marker` into the log this checkpoint would cover (and remove): then
                // the tree is asked for again, as of them.
                let (stopped, current) = self.commit.withLock { ($0.stopped, $0.appended) }
                guard !stopped else { return }
                guard current == marker else { return self.requestSnapshot() }
                guard self.log.withLock({ !$0.checkpointRunning && $0.bytes > 0 }) else { return }
                self.startCheckpoint(of: root, indexes: indexes, marker: marker)
            }
        }
    }

    /// Asks for a checkpoint before the log's size or idleness would (on any queue).
    func checkpointSoon() {
        committer.async { self.requestSnapshot() }
    }

    /// Asks the database for its tree (once) to checkpoint it; on the committer's queue.
    func requestSnapshot() {
        let ask = commit.withLock { state in
            let ask = !state.snapshotWanted && !state.stopped
            if ask { state.snapshotWanted = true }
            return ask
        }
        if ask { callbacks.onSnapshotWanted?() }
    }

    /// After a failure: the records from `first` on are gone from the database's tree, and
    /// the log takes records again.
    func recover(from first: Int) {
        let (dropped, refused) = commit.withLock { state in
            state.unstored.removeAll { $0.number >= first }
            state.pendingSnapshot = nil  // it held the records taken out
            state.snapshotWanted = false  // asked again when a checkpoint is next due
            // Records queued since the failed round are among those taken out of the tree:
            // refused here, or the next round would write them and call them durable.
            let refused = state.failure ?? .failed("an earlier write could not be made durable")
            let dropped = state.pendingCompletions
            state.pending = LogBatch()
            state.pendingCompletions = []
            state.pendingOrigins = []
            if !state.closing { state.failure = nil }
            return (dropped, refused)
        }
        for completion in dropped { completion(refused) }
    }

    /// The tree and indexes a checkpoint stored as of record `marker`, with every record
    /// appended since applied again: the same data as the database's tree, read from the
    /// node file where nothing changed. `replayed` is that tree (and `indexes` those indexes)
    /// with the records through `through` already applied, off the database's queue
    /// (`replay`). `live` is the database's table: each index in it is taken from the
    /// checkpoint where it was stored. Called on the database's queue, where no record is
    /// being appended.
    func rebase(_ replayed: Node, indexes: QueryIndexes, through: Int, marker: Int, live: QueryIndexes) -> (root: Node, indexes: QueryIndexes) {
        commit.withLock { state in
            state.unstored.removeAll { $0.number <= marker }
            var root = replayed, rebased = indexes
            for (number, record) in state.unstored where number > through { Store.apply(record, to: &root, &rebased) }
            var merged = live
            merged.adopt(rebased)
            // A snapshot waiting for its round: the same data, now read from the new file.
            if state.pendingSnapshot != nil { state.pendingSnapshot = (root, merged) }
            if state.closing { state.rebasedWhileClosing = (root, merged, marker) }
            state.rebasedOn = marker
            return (root, merged)
        }
    }

    /// The tree and indexes as of the records before `first`: the last tree stored (or
    /// opened) with the records appended since applied again. After a failure (`onFailure`),
    /// the database takes its tree back to this, the state of every record made durable.
    func rebuild(before first: Int) -> (root: Node, indexes: QueryIndexes) {
        commit.withLock { state in
            var (root, indexes, marker) = state.lastStored ?? (state.opened.root, state.opened.indexes, 0)
            for (number, record) in state.unstored where number > marker && number < first { Store.apply(record, to: &root, &indexes) }
            return (root, indexes)
        }
    }

    /// Applies `record` to a tree and its indexes.
    static func apply(_ record: LogRecord, to root: inout Node, _ indexes: inout QueryIndexes) {
        indexes.apply(record, to: &root)
    }

    /// Applies to `stored` (and its indexes) the records appended after `marker`, in the
    /// background: under a steady load, applying them on the database's queue held every
    /// request for a second after each large checkpoint. Records keep arriving meanwhile, so
    /// it catches up a few times; `rebase` applies what is left.
    private func replay(onto stored: Node, indexes storedIndexes: QueryIndexes, after marker: Int) -> (root: Node, indexes: QueryIndexes, through: Int) {
        var root = stored, indexes = storedIndexes, through = marker
        for _ in 0..<4 {
            let records = commit.withLock { state in state.unstored.filter { $0.number > through } }
            guard let last = records.last?.number else { break }
            for (_, record) in records { Store.apply(record, to: &root, &indexes) }
            through = last
            if records.count < 16 { break }
        }
        return (root, indexes, through)
    }

    /// Closes a store nothing was appended to (`rtdb --recover`, tests): as `close(root:indexes:)`
    /// with the tree it opened with.
    public func close() {
        close(root: recoveredRoot, indexes: recoveredIndexes)
    }

    /// Makes everything queued durable, stops the committer, checkpoints what the log holds
    /// (so the next open replays nothing), unlocks. `root` and `indexes` are the tree and
    /// indexes with every record appended so far applied.
    func close(root: Node, indexes: QueryIndexes) {
        beginClose()
        finishClose(root: root, indexes: indexes)
    }

    /// Refuses records from now on. The database calls it on its queue, where it takes the
    /// tree it passes to `finishClose`: no record can be accepted in between.
    func beginClose() {
        commit.withLock { state in
            guard !state.closing else { return }
            state.closing = true
            state.closingRebasedOn = state.rebasedOn
            state.closingAccepted = state.appended
        }
    }

    /// The rest of `close`, off the database's queue: a checkpoint finishing meanwhile calls
    /// the database on its queue.
    func finishClose(root live: Node, indexes liveIndexes: QueryIndexes) {
        let accepted: Int? = commit.withLock { state in
            guard !state.closed else { return nil }
            state.closed = true
            return state.closingAccepted
        }
        guard let accepted else { return }
        committer.sync {}  // the round in progress, and one scheduled, finish first
        checkpoints.wait()
        let (root, indexes, failed) = commit.withLock { state in
            var root = live
            var indexes = liveIndexes
            // A checkpoint that finished meanwhile (a full copy, perhaps) stored most of it:
            // start from what it stored, or all of that would be written again. When the
            // database's tree was rebased on it (before closing began, or since with no record
            // refused), it is that tree: applying the records again took a second after a
            // large import.
            if let latest = state.lastStored, state.closingRebasedOn != latest.marker {
                if let rebased = state.rebasedWhileClosing, rebased.marker == latest.marker, state.appended == accepted {
                    root = rebased.root
                    indexes = rebased.indexes
                } else {
                    var rebased = latest.indexes
                    root = latest.root
                    for (number, record) in state.unstored where number > latest.marker && number <= accepted {
                        Store.apply(record, to: &root, &rebased)
                    }
                    indexes.adopt(rebased)
                }
            }
            return (root, indexes, state.failure != nil)
        }
        // Indexes built or left out since the head was written are stored too, though no
        // record was: a list queried once opens with its index next time.
        let storable = indexes.storable
        let indexesChanged = storable.contains { !$0.isStored } || storable.count != head.withLock({ $0?.indexes.count }) ?? 0
        // The rounds are done: the log is this thread's now.
        let (bytes, receipts) = log.withLock { ($0.bytes, $0.receipts) }
        if checkpointOnClose && !failed && (bytes > 0 || indexesChanged), let covered = try? rotateLog() {
            do { try checkpoint(root, indexes: indexes, receipts: receipts, covered: covered, wholeCopy: false, dropDamaged: false) } catch {
                Store.report("\(folder): the checkpoint at close failed, the logs are kept: \(error)")
            }
        }
        log.withLock { log in
            if log.fd >= 0 { Glibc.close(log.fd) }
            log.fd = -1
        }
        lock.release()
    }

    /// Waits for the commit rounds of every record appended so far (each completion has run).
    func waitForRounds() {
        committer.sync {}
    }

    // MARK: Committer

    /// Group commit: everything queued since the last round goes out with one write and one
    /// `fdatasync`; rounds follow each other until nothing is left. On the committer's queue.
    private func commitRounds() {
        var buffer = LogBatch()
        var completions: [@Sendable (StoreError?) -> Void] = []
        var origins: [(origin: WriteOrigin, request: Int)] = []
        enum Turn {
            case idle(seen: Int)
            case round(snapshot: (root: Node, indexes: QueryIndexes)?, marker: Int, refused: StoreError?)
        }
        while true {
            let turn: Turn = commit.withLock { state in
                if state.pending.isEmpty {
                    state.roundScheduled = false
                    return .idle(seen: state.appended)
                }
                swap(&buffer, &state.pending)
                swap(&completions, &state.pendingCompletions)
                swap(&origins, &state.pendingOrigins)
                let snapshot = state.pendingSnapshot
                state.pendingSnapshot = nil
                if snapshot != nil { state.snapshotWanted = false }
                return .round(snapshot: snapshot, marker: state.appended, refused: state.failure)
            }
            guard case let .round(snapshot, marker, refused) = turn else {
                if case .idle(let seen) = turn { scheduleIdleCheck(seen: seen) }
                return
            }
            if let refused {
                // Queued before an earlier round failed: they follow it out, unwritten.
                for completion in completions { completion(refused) }
                buffer.removeAll()
                completions.removeAll(keepingCapacity: true)
                origins.removeAll(keepingCapacity: true)
                log.withLock { $0.durableThrough = marker }
                continue
            }

            let (error, firstRecord, logBytes, checkpointRunning) = log.withLock { log in
                var error: StoreError?
                do {
                    let path = folder + "/" + Store.walName(log.sequence)
                    // The log's name first: should that fail, nothing of the round is in the log.
                    if !log.nameDurable {
                        try FileIO.syncDirectory(folder)
                        log.nameDurable = true
                    }
                    let fd = log.fd
                    let written = try StageClock.measure(.logWrite) { try buffer.write { try FileIO.writeAll(fd, $0, path: path) } }
                    try StageClock.measure(.logSync) { try FileIO.sync(fd, path: path) }
                    log.bytes += written
                } catch let e as StoreError {
                    error = e
                } catch let other {
                    error = .failed("\(other)")
                }
                if error != nil {
                    // The log back to its last whole record, so the next round appends after
                    // it (replay stops at a torn record, and would drop what followed).
                    _ = ftruncate(log.fd, off_t(log.bytes))
                } else {
                    for (origin, request) in origins { log.receipts.record(origin, request: request) }
                }
                let first = log.durableThrough + 1
                log.durableThrough = marker
                return (error, first, log.bytes, log.checkpointRunning)
            }
            if let error {
                commit.withLock { $0.failure = error }
                // Before the writers hear of it: a read they send next finds the write undone.
                callbacks.onFailure?(firstRecord, error)
            } else {
                callbacks.onDurable?(marker)
            }
            StageClock.measure(.answer) { for completion in completions { completion(error) } }
            buffer.removeAll()
            completions.removeAll(keepingCapacity: true)
            origins.removeAll(keepingCapacity: true)

            // A snapshot taken at the swap is of the records this round wrote: it was wanted
            // for a checkpoint (a full log, or an idle one).
            if error == nil && !checkpointRunning && (snapshot != nil || logBytes > checkpointThreshold) {
                if let snapshot {
                    startCheckpoint(of: snapshot.root, indexes: snapshot.indexes, marker: marker)
                } else {
                    requestSnapshot()
                }
            }
        }
    }

    /// After `idleCheckpointDelay`, checkpoints the log if no record was appended since the
    /// `seen`th; if some were, looks again later. One check is pending at a time.
    private func scheduleIdleCheck(seen: Int) {
        guard let delay = idleCheckpointDelay else { return }
        let schedule = log.withLock { log in
            defer { log.idleCheckScheduled = true }
            return !log.idleCheckScheduled
        }
        guard schedule else { return }
        // Weak: a store closed meanwhile is let go (with the node file its tree maps).
        committer.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            let (stopped, now, written) = commit.withLock { state in
                // Empty, everything appended is in the log: the committer runs rounds to the end.
                (state.stopped, state.appended, state.pending.isEmpty)
            }
            let (running, bytes) = log.withLock { log in
                log.idleCheckScheduled = false
                return (log.checkpointRunning, log.bytes)
            }
            if stopped || !written { return }  // a round is queued; it schedules the next check
            if now != seen || running {
                scheduleIdleCheck(seen: now)
            } else if bytes >= max(1, idleCheckpointMinimum) {
                requestSnapshot()
            }
        }
    }

    /// Starts the next log; returns the sequence number of the one it follows. On the
    /// committer's queue, or in `finishClose` once the rounds are done.
    private func rotateLog() throws -> Int {
        try log.withLock { log in
            if log.fd >= 0 { Glibc.close(log.fd) }
            log.fd = -1  // a failed open below must not leave a number another file may reuse
            log.sequence += 1
            log.fd = try FileIO.open(folder + "/" + Store.walName(log.sequence), O_WRONLY | O_CREAT | O_APPEND)
            log.bytes = 0
            log.nameDurable = false
            try FileIO.syncDirectory(folder)
            log.nameDurable = true
            return log.sequence - 1
        }
    }

    /// Starts a new log and, in the background, a checkpoint of the tree as of the end of the
    /// old one; the database then reads its tree from the node file again.
    private func startCheckpoint(of root: Node, indexes: QueryIndexes, marker: Int) {
        let covered: Int
        do { covered = try rotateLog() } catch let error {
            // No log to write to: every later write fails rather than going nowhere.
            let failed = (error as? StoreError) ?? .failed("\(error)")
            commit.withLock { $0.failure = failed }
            callbacks.onFailure?(log.withLock { $0.durableThrough } + 1, failed)
            return
        }
        let receipts = log.withLock { log in
            log.checkpointRunning = true
            return log.receipts
        }
        checkpoints.enter()
        DispatchQueue.global(qos: .utility).async { [self] in
            do {
                let stored = try checkpoint(root, indexes: indexes, receipts: receipts, covered: covered, wholeCopy: false, dropDamaged: false)
                commit.withLock { state in
                    state.lastStored = (stored.root, stored.indexes, marker)
                    state.opened = (.empty, QueryIndexes())
                }
                let replayed = replay(onto: stored.root, indexes: stored.indexes, after: marker)
                callbacks.onCheckpoint?(replayed.root, replayed.indexes, replayed.through, marker)
            } catch {
                // The logs stay (nothing is lost); the next checkpoint tries again.
                Store.report("\(folder): a checkpoint failed, the logs are kept: \(error)")
            }
            committer.async {
                self.log.withLock { $0.checkpointRunning = false }
                self.checkpoints.leave()
            }
        }
    }

    /// Stores `root` and its `indexes` (appending what the node file lacks, or copying it
    /// whole to a new file), makes it durable, replaces the head, then (unless salvage sets
    /// them aside) removes what the new head made obsolete. Returns the tree and the indexes
    /// as read back from the file.
    @discardableResult
    private func checkpoint(_ root: Node, indexes: QueryIndexes, receipts: WriteReceipts, covered: Int, wholeCopy: Bool, dropDamaged: Bool,
                            removingObsolete: Bool = true) throws -> (root: Node, indexes: QueryIndexes, id: Int) {
        let old = head.withLock { $0 }
        let copy = wholeCopy || old.map { $0.nodesLength > 2 * $0.compactedLength + compactionSlack } ?? true
        let id = copy ? (old?.nodesID ?? 0) + 1 : old?.nodesID ?? 1
        let path = folder + "/" + Store.nodesName(id)
        let written: (bytes: [UInt8], length: Int)
        var links: [FolderHead.IndexLink] = []
        do {
            let writer = try NodeFileWriter(path: path, id: id, appendingAt: copy ? 0 : old?.nodesLength ?? 0)
            writer.dropDamaged = dropDamaged
            let bytes = try writer.store(root)
            for index in indexes.storable {
                do {
                    let link = try writer.storeIndex(index.entries)
                    links.append(.init(path: index.path, index: index.index, offset: link.offset, size: link.size))
                } catch NodeFile.Failure.damaged {
                    continue  // found damaged while storing: the next open builds it again
                }
            }
            written = (bytes, try writer.finish())
        } catch let failure as NodeFile.Failure {
            throw StoreError(failure)
        }
        if copy { try FileIO.syncDirectory(folder) }
        let next = FolderHead(nodesID: id, nodesLength: written.length, compactedLength: copy ? written.length : old?.compactedLength ?? 0,
                              covered: covered, root: written.bytes, indexes: links, receipts: receipts)
        let encoded = next.encode()
        try Store.writeFile(folder + "/HEAD", encoded)
        // From the rename on, the head on disk may be this one: the next checkpoint must
        // append after it (never over it), even if the directory sync below fails.
        head.withLock { $0 = next }
        // The copy a salvaging open falls back on when the head is damaged.
        try Store.writeFile(folder + "/" + Store.headCopyName, encoded)
        try FileIO.syncDirectory(folder)
        if removingObsolete { removeObsolete(covered: covered, nodesID: id) }
        let file: NodeFile
        do { file = try NodeFile(path: path, id: id, length: written.length, onDamage: Store.report) } catch let failure as NodeFile.Failure {
            throw StoreError(failure)
        }
        var stored = indexes
        for link in links {
            guard let read = file.storedIndex(offset: link.offset, size: link.size) else { continue }
            stored[QueryIndexes.key(link.path, link.index)] = QueryIndex(path: link.path, index: link.index, stored: read.entries, branches: read.branches)
        }
        return (file.node(encoded: written.bytes) ?? root, stored, id)
    }

    /// Removes the logs up to `covered`, the first format's snapshots and other node files:
    /// the head names a tree that holds all of them.
    private func removeObsolete(covered: Int, nodesID: Int) {
        for name in (try? FileIO.listDirectory(folder)) ?? [] {
            if let n = Store.sequence(name, prefix: "wal-", suffix: ".log"), n <= covered { unlink(folder + "/" + name) }
            if Store.sequence(name, prefix: "snapshot-", suffix: ".json") != nil { unlink(folder + "/" + name) }
            if let n = Store.sequence(name, prefix: "nodes-", suffix: ".rtdb"), n != nodesID { unlink(folder + "/" + name) }
        }
    }

    /// Writes `path` whole or not at all: a temporary file, synced, then renamed over it.
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        let temporary = path + ".tmp"
        let fd = try FileIO.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try bytes.withUnsafeBytes { try FileIO.writeAll(fd, $0, path: temporary) }
            if fsync(fd) != 0 { throw StoreError.io(operation: "sync", path: temporary, errno: errno) }
        } catch {
            Glibc.close(fd)
            unlink(temporary)
            throw error
        }
        Glibc.close(fd)
        guard rename(temporary, path) == 0 else { throw StoreError.io(operation: "rename", path: temporary, errno: errno) }
    }

    // MARK: Recovery

    /// Reads a log into `root`. A bad record that nothing valid follows, at the end of the
    /// newest log, is a write the process was making when it died (never acknowledged): it is
    /// cut. A bad record followed by good ones is damage: the open stops with the file and the
    /// offset and touches nothing, unless `salvage` is set, which skips each damaged stretch
    /// and keeps every record that can still be read.
    static func replay(_ path: String, into root: Node, indexes: inout QueryIndexes, receipts: inout WriteReceipts, isLast: Bool,
                       restored: inout Set<Int>, salvage: RecoveryReport? = nil) throws -> Node {
        let bytes = try FileIO.readFile(path)
        var root = root
        var offset = 0
        var tornReason: String?
        /// Damage at `offset`: salvage notes what it leaves out and goes on at `resume`;
        /// otherwise the open stops here.
        func damaged(leaving skipped: String, resume: Int, reason: String) throws {
            guard let salvage else { throw StoreError.corrupt(file: path, offset: offset, reason: reason) }
            salvage.noteDamage("\(path): \(skipped)")
            offset = resume
        }
        try bytes.withUnsafeBytes { raw in
            while true {
                switch LogRecord.decode(raw, at: offset) {
                case .end: return
                case .record(var record, let next):
                    if let id = record.restoring {
                        // The tree the snapshot holds; without it the log cannot be read on.
                        do {
                            // Damage in it is told as any other: salvage notes what it leaves out.
                            var told: @Sendable (String) -> Void = Store.report
                            if let salvage { told = { salvage.noteDamage($0) } }
                            record.sets = [(.root, try SnapshotFile.open(in: (path as NSString).deletingLastPathComponent, id: id, onDamage: told))]
                        } catch {
                            try damaged(leaving: "the restore at byte \(offset) (\(error))", resume: next,
                                        reason: "it restores snapshot \(id), which cannot be opened: \(error)")
                            continue
                        }
                        restored.insert(id)
                    }
                    Store.apply(record, to: &root, &indexes)
                    if let origin = record.origin { receipts.record(origin, request: record.request) }
                    salvage?.countRecord()
                    offset = next
                case .unreadable(let reason, let next):
                    // Whole but unreadable (for example a number older versions wrote as
                    // `inf`): never a write cut short, so never cut silently.
                    try damaged(leaving: "the record at byte \(offset) (\(reason))", resume: next,
                                reason: "a whole record that cannot be read: \(reason)")
                case .torn(let reason):
                    guard let resume = LogRecord.nextRecord(raw, after: offset) else {
                        tornReason = reason
                        return
                    }
                    try damaged(leaving: "\(resume - offset) bytes at byte \(offset) (\(reason))", resume: resume,
                                reason: "\(reason), and readable records follow at byte \(resume), so this is not the end of an interrupted write (unless the machine lost power during it)")
                }
            }
        }
        if let reason = tornReason {
            if !isLast && salvage == nil { throw StoreError.corrupt(file: path, offset: offset, reason: reason + " in a log that is not the newest") }
            if let salvage {
                // The files are set aside whole; the new snapshot holds what was read.
                salvage.noteDamage("\(path): \(bytes.count - offset) bytes at the end (\(reason))")
                return root
            }
            // The tail of the newest log was being written when the process died.
            guard truncate(path, off_t(offset)) == 0 else { throw StoreError.io(operation: "truncate", path: path, errno: errno) }
        }
        return root
    }

    static let headCopyName = "HEAD.copy"
    static func walName(_ n: Int) -> String { "wal-" + String(n).leftPadded(to: 10) + ".log" }
    static func nodesName(_ n: Int) -> String { "nodes-" + String(n).leftPadded(to: 10) + ".rtdb" }
    static func snapshotName(_ n: Int) -> String { "snapshot-" + String(n).leftPadded(to: 10) + ".json" }

    static func sequence(_ name: String, prefix: String, suffix: String) -> Int? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return Int(name.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
