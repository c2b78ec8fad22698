import Foundation
import RTDBData
import RTDBProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The durable tree of one database: a node file, a head, and a write-ahead log, in a data folder.
///
/// Files: `LOCK`; `HEAD` (see `FolderHead`) and `HEAD.copy`, the same bytes (what `--recover`
/// rebuilds a damaged head from); `nodes-N.rtdb`, the tree as stored branches (see
/// `NodeFile`), read only where a request looks, so an open costs the same whatever the size;
/// `wal-N.log`, the records since the tree the head names. A write is acknowledged only after
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
/// `@unchecked Sendable`: the commit state is guarded by `commitLock`, the log file is
/// written only on `committer`, and the head only by one checkpoint at a time (`checkpoints`).
public final class Store: @unchecked Sendable {
    public let folder: String
    /// The tree as recovered at open (until `releaseRecoveredRoot`).
    public private(set) var recoveredRoot: Node
    /// The query indexes stored with it, brought up to date with the logs.
    private(set) var recoveredIndexes = QueryIndexes()
    /// The writes applied for each client that names them, as of the recovered tree.
    private(set) var recoveredReceipts = WriteReceipts()
    /// Checkpoint once the current log passes this many bytes.
    public var checkpointThreshold = 16 << 20
    /// Checkpoint a log that holds records once no write has come for this many seconds
    /// (nil: never), so a database left idle gives back what its recent writes hold in
    /// memory, and the next open has nothing to replay.
    public var idleCheckpointDelay: Double? = 5
    /// The idle checkpoint waits for a log of at least this many bytes: a few small writes
    /// hold little memory, and a write every few seconds should not cost a checkpoint each.
    public var idleCheckpointMinimum = 1 << 16
    /// How much the node file may grow past twice its size at its last full copy before
    /// the next checkpoint copies it whole.
    public var compactionSlack = 64 << 20
    /// Whether `close` checkpoints what the log holds (tests turn it off to keep a log, as a
    /// killed process leaves one).
    var checkpointOnClose = true
    /// Told, on a background queue, when a checkpoint stored the tree and its indexes as of
    /// the record numbered `marker`, with the records through `through` applied again; the
    /// database calls `rebase` with them on its own queue before it returns (no other
    /// checkpoint starts until then). Never called from `close`.
    var onCheckpoint: (@Sendable (_ replayed: Node, _ indexes: QueryIndexes, _ through: Int, _ marker: Int) -> Void)?
    /// Told, on the committer's queue, that a checkpoint is due: the database answers with
    /// its tree (`offer`, or its next `append`), on its own queue.
    var onSnapshotWanted: (@Sendable () -> Void)?
    /// Told, on the committer's queue, that the records through this number are durable.
    var onDurable: (@Sendable (Int) -> Void)?
    /// Told, on the committer's queue, that the record of this number could not be made
    /// durable (a full disk), before its writer is (the answers wait for it to return): it
    /// and every record after it are refused until the database has taken them out of its
    /// tree and called `recover`.
    var onFailure: (@Sendable (Int, StoreError) -> Void)?
    /// Where damage found in the node file while reading, and a failed checkpoint, are told.
    public static let report: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("rtdb: \(message)\n".utf8))
    }

    private let lock: FolderLock
    private let commitLock = NSLock()
    // Guarded by `commitLock`.
    private var pending = LogBatch()
    private var pendingCompletions: [@Sendable (StoreError?) -> Void] = []
    /// The origins of the records in `pending`, in order.
    private var pendingOrigins: [(origin: WriteOrigin, request: Int)] = []
    /// Set when a checkpoint is due: the database then hands over its tree with the records
    /// it appends (`append`), or by itself when it has none to append (`offer`). The store
    /// holds no tree otherwise, so the database's writes change its tree in place (a tree
    /// held here made each write copy its path).
    private var snapshotWanted = false
    /// The tree and indexes as of the last record appended, once wanted: what the next
    /// round checkpoints after writing its records.
    private var pendingSnapshot: (root: Node, indexes: QueryIndexes)?
    /// When `close` began: the marker of the stored tree the database's tree was rebased on,
    /// and the records accepted (those appended later were refused).
    private var closingRebasedOn: Int?
    private var closingAccepted = 0
    /// The database's tree as rebased on a checkpoint that finished after closing began.
    private var rebasedWhileClosing: (root: Node, indexes: QueryIndexes, marker: Int)?
    private var closed = false
    /// Records appended so far, and those a checkpoint has not stored yet (with their numbers).
    private var appended = 0
    private var unstored: [(number: Int, record: LogRecord)] = []
    /// What the last background checkpoint stored, as of which record (for `close`).
    private var lastStored: (root: Node, indexes: QueryIndexes, marker: Int)?
    /// The tree and indexes opened, until a checkpoint stores others (`lastStored`): with the
    /// records appended since, what `rebuild` makes the tree as of a record from.
    private var opened: (root: Node, indexes: QueryIndexes) = (.empty, QueryIndexes())
    /// The marker of the stored tree the database's tree was last rebased on.
    private var rebasedOn: Int?
    private var roundScheduled = false
    private var closing = false
    private var failure: StoreError?
    /// On the committer queue only.
    private var checkpointRunning = false
    private var idleCheckScheduled = false
    private let checkpoints = DispatchGroup()
    /// Runs commit rounds while there are records to make durable; no thread is held by an
    /// idle store, so a server with many namespaces does not keep one thread for each.
    private let committer = DispatchQueue(label: "rtdb.store.commit")
    // Owned by the committer queue.
    private var walFD: Int32 = -1
    /// Whether the current log's name is durable in the folder. Opening the folder makes the
    /// log without syncing the folder, so a session that only reads pays no sync; the first
    /// round syncs it before it writes to the log.
    private var walNameDurable = false
    private var walSeq: Int
    private var walBytes: Int
    /// The records through this number are in the log (committer's queue).
    private var durableThrough = 0
    /// The writes applied for each client as of the records in the log (committer's queue):
    /// what a checkpoint's head holds, so they outlive the logs it removes.
    private var receipts = WriteReceipts()
    // Owned by the one checkpoint running (and by `init` and `close`, when none is).
    private var head: FolderHead?

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
            if names.contains("HEAD") || names.contains(Store.headCopyName) {
                let head = try Store.readHead(folder, salvage: salvage)
                let path = folder + "/" + Store.nodesName(head.nodesID)
                let onDamage: @Sendable (String) -> Void
                if let salvage { onDamage = { salvage.noteDamage($0) } } else { onDamage = Store.report }
                let file: NodeFile
                do { file = try NodeFile(path: path, id: head.nodesID, length: head.nodesLength, onDamage: onDamage) } catch let failure as NodeFile.Failure {
                    throw StoreError(failure)
                }
                guard let stored = file.node(encoded: head.root) else {
                    throw StoreError.corrupt(file: folder + "/HEAD", offset: 48, reason: "its root does not read as a node of \(path)")
                }
                root = stored
                // Salvage stores none: queries build them again from what was saved.
                for link in head.indexes where salvage == nil {
                    // An index is derived data: one the head cannot link to is built again when a query needs it.
                    guard let entries = file.storedIndex(offset: link.offset, size: link.size) else {
                        Store.report("\(folder)/HEAD links the index of \(link.path) by \(link.index) outside \(path); it is built again when a query needs it")
                        continue
                    }
                    indexes[QueryIndexes.key(link.path, link.index)] = QueryIndex(path: link.path, index: link.index, stored: entries.entries, branches: entries.branches)
                }
                receipts = head.receipts
                base = head.covered
                self.head = head
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
            for (i, seq) in replay.enumerated() {
                let path = folder + "/" + Store.walName(seq)
                root = try Store.replay(path, into: root, indexes: &indexes, receipts: &receipts, isLast: i == replay.count - 1, salvage: salvage)
            }
            walSeq = max(replay.last ?? (base + 1), base + 1)
            walBytes = 0
            recoveredRoot = root
            recoveredIndexes = indexes
            opened = (root, indexes)
            self.receipts = receipts
            recoveredReceipts = receipts

            if let salvage {
                // Indexes are left behind: queries build them again from what was saved.
                recoveredIndexes = QueryIndexes()
                // Every branch is read once: a full copy leaves out what cannot be read, and
                // says so; damaged files are kept for inspection.
                let covered = walSeq
                walSeq += 1
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
                recoveredRoot = copy.root
                opened = (copy.root, QueryIndexes())
            } else if head == nil && !snapshotSeqs.isEmpty {
                // A folder of the first format: its JSON snapshot and logs become the node file.
                let covered = walSeq
                walSeq += 1
                let converted = try checkpoint(root, indexes: QueryIndexes(), receipts: receipts, covered: covered, wholeCopy: true, dropDamaged: false)
                recoveredRoot = converted.root
                opened = (converted.root, QueryIndexes())
            }

            let walPath = folder + "/" + Store.walName(walSeq)
            walFD = try FileIO.open(walPath, O_WRONLY | O_CREAT | O_APPEND)
            var st = stat()
            fstat(walFD, &st)
            walBytes = Int(st.st_size)
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
        recoveredRoot = .empty
        recoveredIndexes = QueryIndexes()
        recoveredReceipts = WriteReceipts()
    }

    /// Queues records in order, under one lock; `completion` runs on the committer queue once
    /// its record is durable (nil) or could not be made durable. `snapshot` gives the tree and
    /// the query indexes with all of them applied; it is called (under the lock) only when a
    /// checkpoint is due.
    func append(_ records: [(record: LogRecord, completion: @Sendable (StoreError?) -> Void)], snapshot: () -> (root: Node, indexes: QueryIndexes)) {
        commitLock.lock()
        // Kept even when refused below: the database's tree holds them, and `rebase` must
        // give that same tree back.
        for (record, _) in records {
            appended += 1
            unstored.append((appended, record))
        }
        if let failure = failure ?? (closing ? .failed("the database is closed") : nil) {
            commitLock.unlock()
            for (_, completion) in records { completion(failure) }
            return
        }
        if snapshotWanted { pendingSnapshot = snapshot() }
        for (record, completion) in records {
            pending.append(record)
            pendingCompletions.append(completion)
            if let origin = record.origin { pendingOrigins.append((origin, record.request)) }
        }
        if !roundScheduled {
            roundScheduled = true
            // Enqueued under the lock, so a `close` that follows finds the round queued.
            committer.async { self.commitRounds() }
        }
        commitLock.unlock()
    }

    /// The database's tree and indexes, as of every record it appended, offered (on its
    /// queue) when a checkpoint is due. With records still to write, the round that writes
    /// them checkpoints after; with none, the checkpoint starts after the round in progress.
    func offer(root: Node, indexes: QueryIndexes) {
        commitLock.lock()
        defer { commitLock.unlock() }
        guard snapshotWanted, !closing, failure == nil else { return }
        if !pending.isEmpty {
            pendingSnapshot = (root, indexes)
            return
        }
        snapshotWanted = false
        let marker = appended
        // Enqueued under the lock: a round for records appended later runs after it, so
        // they go to the next log, which this checkpoint does not cover.
        committer.async {
            self.commitLock.lock()
            let stopped = self.closing || self.failure != nil
            self.commitLock.unlock()
            guard !stopped, !self.checkpointRunning, self.walBytes > 0 else { return }
            self.startCheckpoint(of: root, indexes: indexes, marker: marker)
        }
    }

    /// Asks the database for its tree (once) to checkpoint it; on the committer's queue.
    private func requestSnapshot() {
        commitLock.lock()
        let ask = !snapshotWanted && !closing && failure == nil
        if ask { snapshotWanted = true }
        commitLock.unlock()
        if ask { onSnapshotWanted?() }
    }

    /// After a failure: the records from `first` on are gone from the database's tree, and
    /// the log takes records again.
    func recover(from first: Int) {
        commitLock.lock()
        unstored.removeAll { $0.number >= first }
        pendingSnapshot = nil  // it held the records taken out
        snapshotWanted = false  // asked again when a checkpoint is next due
        // Records queued since the failed round are among those taken out of the tree:
        // refused here, or the next round would write them and call them durable.
        let refused = failure ?? .failed("an earlier write could not be made durable")
        let dropped = pendingCompletions
        pending = LogBatch()
        pendingCompletions = []
        pendingOrigins = []
        if !closing { failure = nil }
        commitLock.unlock()
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
        commitLock.lock()
        defer { commitLock.unlock() }
        unstored.removeAll { $0.number <= marker }
        var root = replayed, rebased = indexes
        for (number, record) in unstored where number > through { Store.apply(record, to: &root, &rebased) }
        var merged = live
        merged.adopt(rebased)
        // A snapshot waiting for its round: the same data, now read from the new file.
        if pendingSnapshot != nil { pendingSnapshot = (root, merged) }
        if closing { rebasedWhileClosing = (root, merged, marker) }
        rebasedOn = marker
        return (root, merged)
    }

    /// The tree and indexes as of the records before `first`: the last tree stored (or
    /// opened) with the records appended since applied again. After a failure (`onFailure`),
    /// the database takes its tree back to this, the state of every record made durable.
    func rebuild(before first: Int) -> (root: Node, indexes: QueryIndexes) {
        commitLock.lock()
        defer { commitLock.unlock() }
        var (root, indexes, marker) = lastStored ?? (opened.root, opened.indexes, 0)
        for (number, record) in unstored where number > marker && number < first { Store.apply(record, to: &root, &indexes) }
        return (root, indexes)
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
            commitLock.lock()
            let records = unstored.filter { $0.number > through }
            commitLock.unlock()
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
        commitLock.lock()
        if !closing {
            closing = true
            closingRebasedOn = rebasedOn
            closingAccepted = appended
        }
        commitLock.unlock()
    }

    /// The rest of `close`, off the database's queue: a checkpoint finishing meanwhile calls
    /// the database on its queue.
    func finishClose(root live: Node, indexes liveIndexes: QueryIndexes) {
        commitLock.lock()
        if closed { commitLock.unlock(); return }
        closed = true
        var root = live
        var indexes = liveIndexes
        let accepted = closingAccepted
        commitLock.unlock()
        committer.sync {}  // the round in progress, and one scheduled, finish first
        checkpoints.wait()
        let receipts = committer.sync { self.receipts }
        commitLock.lock()
        let failed = failure != nil
        // A checkpoint that finished meanwhile (a full copy, perhaps) stored most of it: start
        // from what it stored, or all of that would be written again. When the database's
        // tree was rebased on it (before closing began, or since with no record refused), it
        // is that tree: applying the records again took a second after a large import.
        if let latest = lastStored, closingRebasedOn != latest.marker {
            if let rebased = rebasedWhileClosing, rebased.marker == latest.marker, appended == accepted {
                root = rebased.root
                indexes = rebased.indexes
            } else {
                var rebased = latest.indexes
                root = latest.root
                for (number, record) in unstored where number > latest.marker && number <= accepted { Store.apply(record, to: &root, &rebased) }
                indexes.adopt(rebased)
            }
        }
        commitLock.unlock()
        // Indexes built or left out since the head was written are stored too, though no
        // record was: a list queried once opens with its index next time.
        let storable = indexes.storable
        let indexesChanged = storable.contains { !$0.isStored } || storable.count != head?.indexes.count ?? 0
        if checkpointOnClose && !failed && (walBytes > 0 || indexesChanged), (try? rotateLog()) != nil {
            do { try checkpoint(root, indexes: indexes, receipts: receipts, covered: walSeq - 1, wholeCopy: false, dropDamaged: false) } catch {
                Store.report("\(folder): the checkpoint at close failed, the logs are kept: \(error)")
            }
        }
        close(walFD)
        lock.release()
    }

    private func close(_ fd: Int32) { if fd >= 0 { Glibc.close(fd) } }

    /// Waits for the commit rounds of every record appended so far (each completion has run).
    func waitForRounds() {
        committer.sync {}
    }

    // MARK: Committer

    /// Group commit: everything queued since the last round goes out with one write and one
    /// `fdatasync`; rounds follow each other until nothing is left.
    private func commitRounds() {
        var buffer = LogBatch()
        var completions: [@Sendable (StoreError?) -> Void] = []
        var origins: [(origin: WriteOrigin, request: Int)] = []
        while true {
            commitLock.lock()
            if pending.isEmpty {
                roundScheduled = false
                let seen = appended
                commitLock.unlock()
                scheduleIdleCheck(seen: seen)
                return
            }
            swap(&buffer, &pending)
            swap(&completions, &pendingCompletions)
            swap(&origins, &pendingOrigins)
            let snapshot = pendingSnapshot
            pendingSnapshot = nil
            if snapshot != nil { snapshotWanted = false }
            let marker = appended
            let refused = failure
            commitLock.unlock()
            if let refused {
                // Queued before an earlier round failed: they follow it out, unwritten.
                for completion in completions { completion(refused) }
                buffer.removeAll()
                completions.removeAll(keepingCapacity: true)
                origins.removeAll(keepingCapacity: true)
                durableThrough = marker
                continue
            }

            var error: StoreError?
            do {
                let path = folder + "/" + Store.walName(walSeq)
                // The log's name first: should that fail, nothing of the round is in the log.
                if !walNameDurable {
                    try FileIO.syncDirectory(folder)
                    walNameDurable = true
                }
                let written = try StageClock.measure(.logWrite) { try buffer.write { try FileIO.writeAll(walFD, $0, path: path) } }
                try StageClock.measure(.logSync) { try FileIO.sync(walFD, path: path) }
                walBytes += written
            } catch let e as StoreError {
                error = e
            } catch let other {
                error = .failed("\(other)")
            }
            if let error {
                // The log back to its last whole record, so the next round appends after it
                // (replay stops at a torn record, and would drop what followed).
                _ = ftruncate(walFD, off_t(walBytes))
                commitLock.lock()
                failure = error
                commitLock.unlock()
                // Before the writers hear of it: a read they send next finds the write undone.
                onFailure?(durableThrough + 1, error)
            } else {
                for (origin, request) in origins { receipts.record(origin, request: request) }
                onDurable?(marker)
            }
            durableThrough = marker
            StageClock.measure(.answer) { for completion in completions { completion(error) } }
            buffer.removeAll()
            completions.removeAll(keepingCapacity: true)
            origins.removeAll(keepingCapacity: true)

            // A snapshot taken at the swap is of the records this round wrote: it was wanted
            // for a checkpoint (a full log, or an idle one).
            if error == nil && !checkpointRunning && (snapshot != nil || walBytes > checkpointThreshold) {
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
        guard let delay = idleCheckpointDelay, !idleCheckScheduled else { return }
        idleCheckScheduled = true
        // Weak: a store closed meanwhile is let go (with the node file its tree maps).
        committer.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            idleCheckScheduled = false
            commitLock.lock()
            let stopped = closing || failure != nil
            let now = appended
            // Empty, everything appended is in the log: the committer runs rounds to the end.
            let written = pending.isEmpty
            commitLock.unlock()
            if stopped || !written { return }  // a round is queued; it schedules the next check
            if now != seen || checkpointRunning {
                scheduleIdleCheck(seen: now)
            } else if walBytes >= max(1, idleCheckpointMinimum) {
                requestSnapshot()
            }
        }
    }

    private func rotateLog() throws {
        close(walFD)
        walFD = -1  // a failed open below must not leave a number another file may reuse
        walSeq += 1
        walFD = try FileIO.open(folder + "/" + Store.walName(walSeq), O_WRONLY | O_CREAT | O_APPEND)
        walBytes = 0
        walNameDurable = false
        try FileIO.syncDirectory(folder)
        walNameDurable = true
    }

    /// Starts a new log and, in the background, a checkpoint of the tree as of the end of the
    /// old one; the database then reads its tree from the node file again.
    private func startCheckpoint(of root: Node, indexes: QueryIndexes, marker: Int) {
        do { try rotateLog() } catch let error {
            // No log to write to: every later write fails rather than going nowhere.
            let failed = (error as? StoreError) ?? .failed("\(error)")
            commitLock.lock()
            failure = failed
            commitLock.unlock()
            onFailure?(durableThrough + 1, failed)
            return
        }
        let covered = walSeq - 1
        let receipts = self.receipts
        checkpointRunning = true
        checkpoints.enter()
        DispatchQueue.global(qos: .utility).async { [self] in
            do {
                let stored = try checkpoint(root, indexes: indexes, receipts: receipts, covered: covered, wholeCopy: false, dropDamaged: false)
                commitLock.lock()
                lastStored = (stored.root, stored.indexes, marker)
                opened = (.empty, QueryIndexes())
                commitLock.unlock()
                let replayed = replay(onto: stored.root, indexes: stored.indexes, after: marker)
                onCheckpoint?(replayed.root, replayed.indexes, replayed.through, marker)
            } catch {
                // The logs stay (nothing is lost); the next checkpoint tries again.
                Store.report("\(folder): a checkpoint failed, the logs are kept: \(error)")
            }
            committer.async {
                self.checkpointRunning = false
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
        let old = head
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
        head = next
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
                       salvage: RecoveryReport? = nil) throws -> Node {
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
                case .record(let record, let next):
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
