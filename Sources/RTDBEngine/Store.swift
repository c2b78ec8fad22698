import Foundation
import RTDBData
#if canImport(Glibc)
import Glibc
#endif

/// The durable tree of one database: a write-ahead log plus snapshots, in a data folder.
///
/// Files: `LOCK`; `snapshot-N.json` (the whole tree, export form, covering logs 1…N);
/// `wal-N.log` (records after snapshot N−1). A write is acknowledged only after its record
/// is on disk: the committer writes everything queued since its last round with one
/// `fdatasync` (group commit). When the log grows large the committer starts a new log and a
/// background task writes a snapshot of the tree as of the end of the old one; only after
/// the snapshot is durable are older files removed. Recovery loads the newest snapshot and
/// replays later logs, cutting a torn record at the end of the last log (a crash mid-write:
/// that record was never acknowledged); damage anywhere else stops the open (see `replay`).
///
/// `@unchecked Sendable`: the commit state is guarded by `condition` and the log file is
/// written only on `committer`, which the compiler cannot see.
public final class Store: @unchecked Sendable {
    public let folder: String
    /// The tree as recovered at open.
    public let recoveredRoot: Node
    /// Start a new log and snapshot once the current log passes this many bytes.
    public var compactionThreshold = 64 << 20

    private let lock: FolderLock
    private let condition = NSLock()
    // Guarded by `condition`.
    private var pending: [UInt8] = []
    private var pendingCompletions: [(StoreError?) -> Void] = []
    private var pendingRoot: Node
    private var roundScheduled = false
    private var closing = false
    private var failure: StoreError?
    private var snapshots = DispatchGroup()
    private var snapshotRunning = false
    /// Runs commit rounds while there are records to make durable; no thread is held by an
    /// idle store, so a server with many namespaces does not keep one thread for each.
    private let committer = DispatchQueue(label: "rtdb.store.commit")
    // Owned by the committer queue.
    private var walFD: Int32 = -1
    private var walSeq: Int
    private var walBytes: Int

    /// Opens (creating when needed) the store in `folder`. With `salvage`, damage does not stop
    /// the open: what can be read is kept, the damaged files are moved to a `damaged-…` folder
    /// beside the others, a new snapshot holds the result, and `salvage` says what was lost.
    public init(folder: String, salvage: RecoveryReport? = nil) throws {
        self.folder = folder
        try FileIO.makeDirectories(folder)
        lock = try FolderLock(folder: folder)
        do {
            var names = try FileIO.listDirectory(folder)
            for name in names where name.hasSuffix(".tmp") {
                unlink(folder + "/" + name)  // a snapshot that never finished
            }
            names.removeAll { $0.hasSuffix(".tmp") }
            let snapshotSeqs = names.compactMap { Store.sequence($0, prefix: "snapshot-", suffix: ".json") }.sorted()
            let walSeqs = names.compactMap { Store.sequence($0, prefix: "wal-", suffix: ".log") }.sorted()

            var root = Node.empty
            var base = 0
            if let n = snapshotSeqs.last {
                let path = folder + "/" + Store.snapshotName(n)
                let bytes = try FileIO.readFile(path)
                do {
                    root = try JSONReader.parse(data: bytes, options: .init(allowServerValues: false))
                } catch let e as JSONParseError {
                    guard let salvage else { throw StoreError.corrupt(file: path, offset: e.offset, reason: e.message) }
                    // Earlier versions could write NaN or Infinity; such values are dropped.
                    do {
                        root = try JSONReader.parse(data: bytes, options: .init(allowServerValues: false, dropNonFiniteNumbers: true))
                        salvage.skipped.append("\(path): numbers that were not finite (NaN or Infinity) were left out")
                    } catch let e as JSONParseError {
                        throw StoreError.corrupt(file: path, offset: e.offset, reason: e.message + "; the snapshot cannot be salvaged")
                    }
                }
                base = n
            }
            let replay = walSeqs.filter { $0 > base }
            for (i, seq) in replay.enumerated() {
                let path = folder + "/" + Store.walName(seq)
                root = try Store.replay(path, into: root, isLast: i == replay.count - 1, salvage: salvage)
            }
            if let salvage, !salvage.skipped.isEmpty {
                // Keep the damaged files for inspection; a fresh snapshot replaces them.
                let stamp = Int(Date().timeIntervalSince1970)
                let aside = "damaged-\(stamp)"
                try FileIO.makeDirectories(folder + "/" + aside)
                let seq = max(walSeqs.last ?? 0, base) + 1
                let snapshot = folder + "/" + Store.snapshotName(seq)
                try Store.writeFile(snapshot, JSONWriter.bytes(root, options: .init(export: true)))
                for name in names where name != Store.snapshotName(seq)
                    && (Store.sequence(name, prefix: "wal-", suffix: ".log") != nil || Store.sequence(name, prefix: "snapshot-", suffix: ".json") != nil) {
                    guard rename(folder + "/" + name, folder + "/" + aside + "/" + name) == 0 else {
                        throw StoreError.io(operation: "move aside", path: folder + "/" + name, errno: errno)
                    }
                }
                try FileIO.syncDirectory(folder)
                salvage.movedTo = folder + "/" + aside
                base = seq
            }
            // Files a finished snapshot made obsolete.
            for seq in walSeqs where seq <= base { unlink(folder + "/" + Store.walName(seq)) }
            for seq in snapshotSeqs where seq < base { unlink(folder + "/" + Store.snapshotName(seq)) }

            recoveredRoot = root
            pendingRoot = root
            walSeq = max(replay.last ?? (base + 1), base + 1)
            let walPath = folder + "/" + Store.walName(walSeq)
            walFD = try FileIO.open(walPath, O_WRONLY | O_CREAT | O_APPEND)
            var st = stat()
            fstat(walFD, &st)
            walBytes = Int(st.st_size)
            try FileIO.syncDirectory(folder)
        } catch {
            lock.release()
            throw error
        }
    }

    /// Queues a record; `completion` runs on the committer queue once it is durable (nil) or
    /// could not be made durable. `root` is the tree with this record applied.
    func append(_ record: LogRecord, root: Node, completion: @escaping (StoreError?) -> Void) {
        condition.lock()
        if let failure = failure ?? (closing ? .failed("the database is closed") : nil) {
            condition.unlock()
            completion(failure)
            return
        }
        record.encode(into: &pending)
        pendingCompletions.append(completion)
        pendingRoot = root
        if !roundScheduled {
            roundScheduled = true
            // Enqueued under the lock, so a `close` that follows finds the round queued.
            committer.async { self.commitRounds() }
        }
        condition.unlock()
    }

    /// Makes everything queued durable, stops the committer, snapshots a large log, unlocks.
    public func close() {
        condition.lock()
        if closing { condition.unlock(); return }
        closing = true
        condition.unlock()
        committer.sync {}  // the round in progress, and one scheduled, finish first
        snapshots.wait()
        if failure == nil && walBytes > 8 << 20 {
            let root = pendingRoot
            try? rotateLog()
            try? writeSnapshot(root, seq: walSeq - 1)
        }
        close(walFD)
        lock.release()
    }

    private func close(_ fd: Int32) { if fd >= 0 { Glibc.close(fd) } }

    // MARK: Committer

    /// Group commit: everything queued since the last round goes out with one write and one
    /// `fdatasync`; rounds follow each other until nothing is left.
    private func commitRounds() {
        var buffer: [UInt8] = []
        var completions: [(StoreError?) -> Void] = []
        while true {
            condition.lock()
            if pending.isEmpty {
                roundScheduled = false
                condition.unlock()
                return
            }
            swap(&buffer, &pending)
            swap(&completions, &pendingCompletions)
            let root = pendingRoot
            condition.unlock()

            var error: StoreError?
            do {
                let path = folder + "/" + Store.walName(walSeq)
                try buffer.withUnsafeBytes { try FileIO.writeAll(walFD, $0, path: path) }
                try FileIO.sync(walFD, path: path)
                walBytes += buffer.count
            } catch let e as StoreError {
                error = e
            } catch let other {
                error = .failed("\(other)")
            }
            if let error {
                condition.lock()
                failure = error
                condition.unlock()
            }
            for completion in completions { completion(error) }
            buffer.removeAll(keepingCapacity: buffer.capacity < 1 << 20)
            completions.removeAll(keepingCapacity: true)

            if error == nil && walBytes > compactionThreshold && !snapshotRunning {
                startSnapshot(of: root)
            }
        }
    }

    private func rotateLog() throws {
        close(walFD)
        walSeq += 1
        walFD = try FileIO.open(folder + "/" + Store.walName(walSeq), O_WRONLY | O_CREAT | O_APPEND)
        walBytes = 0
        try FileIO.syncDirectory(folder)
    }

    private func startSnapshot(of root: Node) {
        do { try rotateLog() } catch { return }
        let covered = walSeq - 1
        snapshotRunning = true
        snapshots.enter()
        DispatchQueue.global(qos: .utility).async { [self] in
            try? writeSnapshot(root, seq: covered)
            condition.lock()
            snapshotRunning = false
            condition.unlock()
            snapshots.leave()
        }
    }

    /// Writes `snapshot-seq.json` durably, then removes the files it replaces.
    private func writeSnapshot(_ root: Node, seq: Int) throws {
        try Store.writeFile(folder + "/" + Store.snapshotName(seq), JSONWriter.bytes(root, options: .init(export: true)))
        try FileIO.syncDirectory(folder)
        for name in (try? FileIO.listDirectory(folder)) ?? [] {
            if let n = Store.sequence(name, prefix: "wal-", suffix: ".log"), n <= seq { unlink(folder + "/" + name) }
            if let n = Store.sequence(name, prefix: "snapshot-", suffix: ".json"), n < seq { unlink(folder + "/" + name) }
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
    static func replay(_ path: String, into root: Node, isLast: Bool, salvage: RecoveryReport? = nil) throws -> Node {
        let bytes = try FileIO.readFile(path)
        var root = root
        var offset = 0
        var tornReason: String?
        /// Damage at `offset`: salvage notes what it leaves out and goes on at `resume`;
        /// otherwise the open stops here.
        func damaged(leaving skipped: String, resume: Int, reason: String) throws {
            guard let salvage else { throw StoreError.corrupt(file: path, offset: offset, reason: reason) }
            salvage.skipped.append("\(path): \(skipped)")
            offset = resume
        }
        try bytes.withUnsafeBytes { raw in
            while true {
                switch LogRecord.decode(raw, at: offset) {
                case .end: return
                case .record(let record, let next):
                    root = record.apply(to: root)
                    salvage?.records += 1
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
                salvage.skipped.append("\(path): \(bytes.count - offset) bytes at the end (\(reason))")
                return root
            }
            // The tail of the newest log was being written when the process died.
            guard truncate(path, off_t(offset)) == 0 else { throw StoreError.io(operation: "truncate", path: path, errno: errno) }
        }
        return root
    }

    static func walName(_ n: Int) -> String { "wal-" + String(n).leftPadded(to: 10) + ".log" }
    static func snapshotName(_ n: Int) -> String { "snapshot-" + String(n).leftPadded(to: 10) + ".json" }

    static func sequence(_ name: String, prefix: String, suffix: String) -> Int? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return Int(name.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
