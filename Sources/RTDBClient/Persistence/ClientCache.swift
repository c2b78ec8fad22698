import CSQLite
import Foundation
import RTDBData
import RTDBProtocol
#if canImport(Glibc)
import Glibc
#endif

// Plays the part of the Android SDK's PersistenceManager and its SQLite storage engine.

/// The client's disk cache for one database: the server data it received, which queries
/// that data is complete for, the writes not yet acknowledged, and the kept-synced paths.
/// A SQLite file in its own folder, which one process holds at a time.
///
/// Changes are grouped into one SQLite transaction until `commit()` (the core commits after
/// each burst of work on its queue); `commit()` returns once they are on disk.
/// Used from the core's queue only.
public final class ClientCache {
    /// The folder holding `cache.sqlite`.
    public let folder: String
    /// Said once after opening: the file was damaged (or made by a newer rtdb) and the cache
    /// starts empty; the old file is kept beside it.
    public private(set) var openNote: String?
    /// Past this many bytes of cached data, the least recently used is evicted.
    public private(set) var limit: Int
    /// The first error met since opening (a full disk, say): what was kept may be incomplete.
    public private(set) var failure: String?

    /// The cache file's layout; a file with a higher one is set aside, never misread.
    static let formatVersion: Int64 = 2

    private var database: SQLiteDatabase
    private let lockDescriptor: Int32
    private var inTransaction = false
    /// Called when a change opens a new transaction: the owner schedules its `commit()`.
    var onFirstChange: (() -> Void)?
    /// Told the rows of queued writes a failed commit did not keep: they are not on disk.
    var onWritesLost: (([Int64]) -> Void)?
    /// Rows of the write queue added, and removed, in the open transaction.
    private var writesAdded: [Int64] = []
    private var writesRemoved: [Int64] = []
    /// Rows whose removal a failed commit undid: removed again in the next transaction, so
    /// a write acknowledged is not sent again by a later session once the disk has room.
    /// Kept in the ledger meanwhile (`AcknowledgedLedger`), which needs no new room.
    private var removalsToRetry: [Int64] = [] {
        didSet { if removalsToRetry != oldValue { ledger?.record(removalsToRetry + retrying) } }
    }
    /// Those being removed again in the open transaction: in the ledger until it commits.
    private var retrying: [Int64] = [] {
        didSet { if retrying != oldValue { ledger?.record(removalsToRetry + retrying) } }
    }
    private var ledger: AcknowledgedLedger?
    /// How many writes the queue holds, kept in `settings` at each commit: what damage that
    /// SQLite cannot see past (a page lost whole) took from the queue is then known.
    private var queueLength: Int64 = 0
    static let queueLengthSetting = "queued writes"
    /// Bytes of data written since the size was last measured.
    private var writtenSinceCheck = 0
    /// The tracked keys last saved per filtered query, so unchanged sets are not rewritten.
    private var savedKeys: [String: Set<String>] = [:]

    /// Opens (creating) the cache in `folder`, mode 0700. Throws `ClientCacheError.inUse`
    /// when another process has it. A damaged file is moved aside and the cache starts empty.
    public init(folder: String, limit: Int = 10_000_000) throws {
        self.folder = folder
        self.limit = limit
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = chmod(folder, 0o700)
        let lockPath = folder + "/lock"
        let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ClientCacheError.unusable(folder: folder, reason: String(cString: strerror(errno))) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = read(fd, &buffer, buffer.count)
            Glibc.close(fd)
            let pid = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw ClientCacheError.inUse(folder: folder, pid: pid.isEmpty ? nil : pid)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        lockDescriptor = fd
        let path = folder + "/cache.sqlite"
        do {
            // An empty file is a cache cut short (SQLite would take it for a new one, and
            // nobody would hear that its queue is gone).
            if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size == 0 {
                throw SQLiteError(code: SQLITE_NOTADB, message: "the file is empty (cut short)")
            }
            database = try Self.openDatabase(path)
        } catch let error as SQLiteError where !error.isDamage {
            // A full disk, a file this user may not write: its queued writes must not be abandoned.
            flock(fd, LOCK_UN)
            Glibc.close(fd)
            throw ClientCacheError.unusable(folder: folder, reason: "\(error)")
        } catch {
            // Damaged or from a newer rtdb: kept aside for whoever wants to look, and a fresh start.
            let aside = path + ".unreadable-\(Int(Date().timeIntervalSince1970))"
            for suffix in ["", "-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
            openNote = "the cache could not be read (\(error)); it starts empty, and the writes it queued, if any, will not be sent (the old file is \((aside as NSString).lastPathComponent))"
            do {
                database = try Self.openDatabase(path)
            } catch {
                flock(fd, LOCK_UN)
                Glibc.close(fd)
                throw ClientCacheError.unusable(folder: folder, reason: "\(error)")
            }
        }
        ledger = AcknowledgedLedger(path: folder + "/acknowledged")
        if openNote != nil { ledger?.record([]) }  // its rows were those of the file set aside
        do {
            try checkQueue(path)
        } catch {
            database.close()
            flock(fd, LOCK_UN)
            Glibc.close(fd)
            closed = true  // deinit runs: it must not close the descriptor again
            throw ClientCacheError.unusable(folder: folder, reason: "\(error)")
        }
    }

    /// Reads the queue of writes whole: each row against its checksum, in the order of the
    /// queue, and SQLite's structure of the table. When any of it is damaged, the file is
    /// set aside and a new one holds the writes that read back whole, in their order; the
    /// note says how many cannot be sent. A damaged queue left in place would lose its rows
    /// silently, and send again at each start those whose removal it cannot record.
    private func checkQueue(_ path: String) throws {
        // Acknowledged writes an earlier session could not take out of the queue: out now,
        // or at the next commit, and never loaded meanwhile.
        removalsToRetry = ledger?.rows ?? []
        queueLength = countWrites() ?? 0
        if !removalsToRetry.isEmpty { removeAlone() }
        var problems: [String] = []
        do {
            let check = try database.strings("PRAGMA quick_check(writes)").flatMap { $0.split(separator: "\n") }.filter { !$0.hasPrefix("***") }
            if check != ["ok"] { problems.append(check.first.map(String.init) ?? "the table does not read") }
        } catch {
            problems.append("\(error)")
        }
        var whole: [(id: Int64, kind: Int64, path: String, value: [UInt8], cached: Int64)] = []
        var damagedRows = 0
        do {
            try database.run("SELECT id, kind, path, value, cached, crc FROM writes ORDER BY id") { row in
                let entry = (id: row.integer(0), kind: row.integer(1), path: row.text(2), value: row.blob(3), cached: row.integer(4))
                let stored = row.isNull(5) ? nil : row.integer(5)
                if let stored, stored != Self.checksum(id: entry.id, kind: entry.kind, path: entry.path, value: entry.value, cached: entry.cached) {
                    damagedRows += 1
                } else if let last = whole.last, last.id >= entry.id {
                    damagedRows += 1  // out of the queue's order: the table's structure is damaged
                } else {
                    whole.append(entry)
                }
            }
        } catch {
            problems.append("\(error)")
        }
        if damagedRows > 0 { problems.append("\(damagedRows) row\(damagedRows == 1 ? "" : "s") did not match \(damagedRows == 1 ? "its" : "their") checksum") }
        // How many writes the queue held at the last commit (absent in a file an older rtdb wrote).
        let recorded = (try? database.strings("SELECT value FROM settings WHERE name = '\(Self.queueLengthSetting)'"))?.first.flatMap { Int64($0) }
        guard !problems.isEmpty else {
            queueLength = Int64(whole.count + damagedRows)
            return
        }
        let settings = (try? database.pairs("SELECT name, value FROM settings")) ?? []
        let kept = (try? database.strings("SELECT path FROM kept_synced")) ?? []
        // Acknowledged writes the ledger names are not carried over.
        let acknowledged = Set(removalsToRetry)
        let carried = whole.filter { !acknowledged.contains($0.id) }
        // The new file is made whole under another name, then takes the old one's place: a
        // failure on the way (a full disk) leaves the damaged file where it is, found again
        // at the next open, rather than an empty cache that would say nothing.
        let rebuilt = path + ".rebuilt"
        for suffix in ["", "-wal", "-shm"] { unlink(rebuilt + suffix) }
        do {
            let fresh = try Self.openDatabase(rebuilt)
            try fresh.execute("BEGIN IMMEDIATE")
            for entry in carried {
                try Self.insertWrite(into: fresh, id: entry.id, kind: entry.kind, path: entry.path, value: entry.value, cached: entry.cached)
            }
            for (name, value) in settings where name != Self.queueLengthSetting { try Self.putSetting(name, value, in: fresh) }
            try Self.putSetting(Self.queueLengthSetting, String(carried.count), in: fresh)
            for path in kept { try fresh.run("INSERT OR REPLACE INTO kept_synced (path) VALUES (?)", [.text(path)]) }
            try fresh.execute("COMMIT")
            fresh.close()  // its log goes into the file
        } catch {
            for suffix in ["", "-wal", "-shm"] { unlink(rebuilt + suffix) }
            throw error
        }
        database.close()
        let aside = path + ".damaged-\(Int(Date().timeIntervalSince1970))"
        for suffix in ["", "-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
        for suffix in ["", "-wal", "-shm"] { _ = rename(rebuilt + suffix, path + suffix) }
        database = try Self.openDatabase(path)
        queueLength = Int64(carried.count)
        removalsToRetry = []
        let lost: String
        if let recorded, recorded >= Int64(whole.count) + Int64(damagedRows) {
            let n = Int(recorded) - whole.count
            lost = "\(n) queued write\(n == 1 ? "" : "s") could not be read and will not be sent"
        } else {
            lost = "\(damagedRows > 0 ? "at least \(damagedRows)" : "an unknown number of") queued writes could not be read and will not be sent"
        }
        openNote = "the cache is damaged (\(problems.joined(separator: "; "))): \(lost); the \(carried.count) that read back whole are kept, in their order, "
            + "and its cached data is dropped (the old file is \((aside as NSString).lastPathComponent))"
    }

    /// Adds a row to the queue of writes, with its checksum.
    private static func insertWrite(into database: SQLiteDatabase, id: Int64, kind: Int64, path: String, value: [UInt8], cached: Int64) throws {
        try database.run("INSERT INTO writes (id, kind, path, value, cached, crc) VALUES (?, ?, ?, ?, ?, ?)",
                         [.integer(id), .integer(kind), .text(path), .blob(value), .integer(cached),
                          .integer(checksum(id: id, kind: kind, path: path, value: value, cached: cached))])
    }

    private static func putSetting(_ name: String, _ value: String, in database: SQLiteDatabase) throws {
        try database.run("INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", [.text(name), .text(value)])
    }

    /// The rows the queue holds, as SQLite counts them now.
    private func countWrites() -> Int64? {
        try? database.integer("SELECT count(*) FROM writes")
    }

    /// A queued write's checksum: its place in the queue and all it holds, so that a row
    /// damaged on disk, or moved in the queue's order, is never sent.
    static func checksum(id: Int64, kind: Int64, path: String, value: [UInt8], cached: Int64) -> Int64 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24 + path.utf8.count + value.count)
        LittleEndian.append(UInt64(bitPattern: id), to: &bytes)
        LittleEndian.append(UInt64(bitPattern: kind), to: &bytes)
        LittleEndian.append(UInt64(bitPattern: cached), to: &bytes)
        LittleEndian.append(UInt32(truncatingIfNeeded: path.utf8.count), to: &bytes)
        bytes += path.utf8
        bytes += value
        return Int64(CRC32.checksum(bytes))
    }

    deinit { close() }

    private static func openDatabase(_ path: String) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        // Every commit is on disk when it returns (WAL with full sync): what the shell reports
        // as queued survives a crash or power loss. Pages freed by eviction can be given back
        // to the file system (this sets it for a new file; the mode is fixed once tables exist).
        try database.execute("PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;")
        let version = try database.integer("PRAGMA user_version")
        if version > formatVersion {
            throw SQLiteError(code: SQLITE_FORMAT, message: "it was made by a newer rtdb (format \(version))")
        }
        if version == 1 { try upgradeFromFormat1(database) }
        // server_data is a rowid table: its values (a child of a split value is often about a
        // kilobyte) are kept in its pages, where an index-ordered table would spill each one
        // into an overflow page of its own.
        try database.execute("""
            CREATE TABLE IF NOT EXISTS server_data (path TEXT PRIMARY KEY, value BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS tracked_queries (id INTEGER PRIMARY KEY, path TEXT NOT NULL, query TEXT NOT NULL,
                params BLOB NOT NULL, complete INTEGER NOT NULL, last_use REAL NOT NULL, UNIQUE (path, query));
            CREATE TABLE IF NOT EXISTS tracked_keys (query_id INTEGER NOT NULL, key TEXT NOT NULL, PRIMARY KEY (query_id, key)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS writes (id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, path TEXT NOT NULL, value BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS kept_synced (path TEXT PRIMARY KEY) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            """)
        if version != formatVersion { try database.execute("PRAGMA user_version = \(formatVersion)") }
        // Whether a queued write's data is cached once acknowledged (not an import's): added
        // to older files as they open, with the format unchanged, so an older rtdb still
        // reads them (its writes, naming their columns, get the default).
        if try database.integer("SELECT count(*) FROM pragma_table_info('writes') WHERE name = 'cached'") == 0 {
            try database.execute("ALTER TABLE writes ADD COLUMN cached INTEGER NOT NULL DEFAULT 1")
        }
        // Each queued write's checksum (see `checksum`); null in rows an older rtdb queued.
        if try database.integer("SELECT count(*) FROM pragma_table_info('writes') WHERE name = 'crc'") == 0 {
            try database.execute("ALTER TABLE writes ADD COLUMN crc INTEGER")
        }
        // A damaged file is found now rather than in the middle of work: the data only where
        // it starts, so that opening does not take longer as the cache grows (damage deeper
        // in is reported when met); the queue is checked whole next (`checkQueue`).
        try database.execute("SELECT count(*) FROM tracked_queries; SELECT path FROM server_data LIMIT 1;")
        return database
    }

    /// Format 1 kept server_data without rowids and the file without incremental vacuum:
    /// the rows move to the new table (the queue stays as it is) and the file is rebuilt.
    private static func upgradeFromFormat1(_ database: SQLiteDatabase) throws {
        try database.execute("""
            BEGIN;
            CREATE TABLE server_data_2 (path TEXT PRIMARY KEY, value BLOB NOT NULL);
            INSERT INTO server_data_2 (path, value) SELECT path, value FROM server_data;
            DROP TABLE server_data;
            ALTER TABLE server_data_2 RENAME TO server_data;
            PRAGMA user_version = 2;
            COMMIT;
            """)
        // Best effort: VACUUM needs room for a copy of the file, and the cache works without it.
        try? database.execute("PRAGMA auto_vacuum=INCREMENTAL; VACUUM;")
    }

    /// Commits and releases the folder.
    public func close() {
        guard lockDescriptor >= 0, !closed else { return }
        commit()
        database.close()
        _ = ftruncate(lockDescriptor, 0)
        flock(lockDescriptor, LOCK_UN)
        Glibc.close(lockDescriptor)
        closed = true
    }

    private var closed = false

    public func setLimit(_ bytes: Int) {
        limit = bytes
    }

    // MARK: Transactions

    /// Puts what changed since the last commit on disk; false (and `failure` says why) when
    /// that failed, and what it held is not kept.
    @discardableResult
    public func commit() -> Bool {
        defer { changeFailed = false }
        guard inTransaction else { return !changeFailed }
        // Best effort: without it, damage is still found, only not counted.
        attempt {
            try Self.putSetting(Self.queueLengthSetting, String(queueLength), in: database)
        }
        inTransaction = false
        if attempt({ try database.execute("COMMIT") }) {
            writesAdded = []
            writesRemoved = []
            retrying = []
            return !changeFailed
        }
        try? database.execute("ROLLBACK")
        transactionLost()
        return false
    }

    /// The open transaction did not reach the disk (its commit failed, or SQLite rolled it
    /// back on an error such as a full disk): the writes it queued are told lost, the
    /// removals it made are made again.
    private func transactionLost() {
        inTransaction = false
        let added = writesAdded, removed = writesRemoved
        writesAdded = []
        writesRemoved = []
        queueLength = countWrites() ?? queueLength
        // A row added in this transaction is gone with it (no number is given twice, so a
        // row both added and removed here was one write's).
        let gone = Set(added)
        removalsToRetry += removed.filter { !gone.contains($0) }
        retrying = []
        if !added.isEmpty { onWritesLost?(added) }
        if !removalsToRetry.isEmpty { removeAlone() }
    }

    /// The removals a failed commit undid, made again in a transaction of their own: they
    /// shrink the queue, and may fit where the writes beside them did not.
    private func removeAlone() {
        guard attempt({ try database.execute("BEGIN IMMEDIATE") }) else { return }
        var length = queueLength
        let done = attempt {
            for row in removalsToRetry {
                try database.run("DELETE FROM writes WHERE id = ?", [.integer(row)])
                length -= Int64(database.changes)
            }
            try Self.putSetting(Self.queueLengthSetting, String(length), in: database)
            try database.execute("COMMIT")
        }
        if done {
            queueLength = length
            removalsToRetry = []
        } else {
            try? database.execute("ROLLBACK")
        }
    }

    /// A change since the last commit failed (a read that failed, damage met in data no
    /// change needs, does not make the next commit fail).
    private var changeFailed = false

    private func change(_ body: () throws -> Void) {
        guard !closed else { return }
        if !inTransaction {
            guard attempt({ try database.execute("BEGIN IMMEDIATE") }) else {
                changeFailed = true
                return
            }
            inTransaction = true
            onFirstChange?()
            if !removalsToRetry.isEmpty {
                let rows = removalsToRetry
                retrying = rows  // first: the ledger holds them throughout
                removalsToRetry = []
                for row in rows { removeWrite(row) }
                // A full disk may have ended the transaction meanwhile: nothing runs outside one.
                guard inTransaction else {
                    changeFailed = true
                    return
                }
            }
        }
        if !attempt(body) {
            changeFailed = true
            // SQLite ends the whole transaction on some errors (a full disk): what follows
            // must not run outside one, committed at once where the queue thinks it is not.
            if !database.inTransaction { transactionLost() }
        }
    }

    @discardableResult
    private func attempt(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return true
        } catch {
            if failure == nil { failure = "\(error)" }
            return false
        }
    }

    // MARK: The write queue

    /// Keeps a write until `removeWrite`; returns its place in the queue, nil when the cache
    /// could not take it. It is on disk once the next `commit` succeeds (else `onWritesLost`).
    /// `cached`: whether its data is kept once acknowledged (see `Repo.set`).
    func saveWrite(_ write: Write, cached: Bool = true) -> Int64? {
        var id: Int64?
        change {
            // Never a number this session gave before: a write acknowledged and removed in the
            // open transaction would otherwise lend its number to the next, and a failed
            // commit, which brings the removed row back, would take that row for the new
            // write's (lost with the transaction) and never remove it again.
            let next = max(try database.integer("SELECT coalesce(max(id), 0) + 1 FROM writes"), lastWriteID + 1)
            try Self.insertWrite(into: database, id: next, kind: write.kindCode, path: write.path.description, value: write.encodedValue,
                                 cached: cached ? 1 : 0)
            id = next
            lastWriteID = next
            queueLength += 1
        }
        if let id { writesAdded.append(id) }
        return id
    }

    /// The number `saveWrite` last gave.
    private var lastWriteID: Int64 = 0

    func removeWrite(_ id: Int64) {
        var removed = false
        change {
            try database.run("DELETE FROM writes WHERE id = ?", [.integer(id)])
            queueLength -= Int64(database.changes)
            removed = true
        }
        if removed { writesRemoved.append(id) } else { removalsToRetry.append(id) }
    }

    func removeAllWrites() {
        change {
            try database.run("DELETE FROM writes")
            queueLength = 0
        }
        removalsToRetry = []
    }

    /// The writes kept, oldest first. One that cannot be read back is left out and counted.
    func loadWrites() -> (writes: [(row: Int64, write: Write, cached: Bool)], unreadable: Int) {
        var writes: [(row: Int64, write: Write, cached: Bool)] = []
        var unreadable = 0
        attempt {
            let acknowledged = Set(removalsToRetry)
            try database.run("SELECT id, kind, path, value, cached FROM writes ORDER BY id") { row in
                if acknowledged.contains(row.integer(0)) { return }
                if let write = Write(kindCode: row.integer(1), path: row.text(2), value: row.blob(3)) {
                    writes.append((row.integer(0), write, row.integer(4) != 0))
                } else {
                    unreadable += 1
                }
            }
        }
        return (writes, unreadable)
    }

    // MARK: Server data

    /// Rows are keyed `/a/b/` (root: `/`); a row holds the server's whole value at its path as
    /// it was written, and a deeper row overrides what an ancestor row says below it.
    private static func rowKey(_ path: Path) -> String {
        path.isRoot ? "/" : "/" + path.keys.joined(separator: "/") + "/"
    }

    /// The bounds of the rows at or below `path`, for `path >= ? AND path < ?`: its key, and
    /// the first key after all of them (`/a/` is followed by `/a0`).
    private static func rowRange(_ path: Path) -> [SQLiteDatabase.Value] {
        let key = rowKey(path)
        return [.text(key), .text(String(key.dropLast()) + "0")]
    }

    /// The size of the rows selected, as the limit counts it.
    private static let rowBytes = "coalesce(sum(length(value) + length(path)), 0)"

    private static func path(ofRowKey key: String) -> Path {
        Path(keys: key.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
    }

    /// A value larger than this with children is kept as a row per child (recursively), so
    /// that reading one child does not parse all of its siblings (the official clients split
    /// at the same size).
    static let splitBytes = 16 * 1024

    /// The server's value at `path` replaced by `node`.
    func overwrite(_ path: Path, _ node: Node) {
        change {
            let key = Self.rowKey(path)
            try database.run("DELETE FROM server_data WHERE path >= ? AND path < ?", Self.rowRange(path))
            if Self.splits(node) {
                // An empty row hides what an ancestor row says; the children's rows follow.
                if try hasRowAbove(path) { try insertRow(key, JSONWriter.bytes(.empty)) }
                try insertSplit(path, node)
                return
            }
            // An empty value needs a row only to hide what an ancestor row says.
            if node.isEmpty, try !hasRowAbove(path) { return }
            try insertRow(key, JSONWriter.bytes(node, options: JSONWriter.Options(export: true)))
        }
    }

    /// Whether `node` is kept as a row per child: it has children and no priority (a priority
    /// stays in its node's row, so that it goes when the node empties), and it is large.
    private static func splits(_ node: Node) -> Bool {
        guard node.priority == nil, !node.children.isEmpty else { return false }
        var budget = splitBytes
        return !fits(node, in: &budget)
    }

    /// Whether `node`'s JSON takes at most `budget` bytes (roughly: keys, strings and numbers);
    /// stops counting as soon as it does not, so a large value costs no more than the budget.
    private static func fits(_ node: Node, in budget: inout Int) -> Bool {
        switch node.content {
        case .empty: budget -= 4
        case .leaf(.string(let text)): budget -= text.utf8.count + 2
        case .leaf: budget -= 8
        case .children(let children):
            for entry in children {
                budget -= entry.key.name.utf8.count + 4
                if budget < 0 || !fits(entry.value, in: &budget) { return false }
            }
        }
        if node.priority != nil { budget -= 20 }
        return budget >= 0
    }

    /// The rows of a large `node` with children: one per child, split again when large too.
    private func insertSplit(_ path: Path, _ node: Node) throws {
        for entry in node.children {
            let childPath = path.child(entry.key.name)
            if Self.splits(entry.value) {
                try insertSplit(childPath, entry.value)
            } else {
                try insertRow(Self.rowKey(childPath), JSONWriter.bytes(entry.value, options: JSONWriter.Options(export: true)))
            }
        }
    }

    private func insertRow(_ key: String, _ bytes: [UInt8]) throws {
        writtenSinceCheck += bytes.count
        try database.run("INSERT INTO server_data (path, value) VALUES (?, ?)", [.text(key), .blob(bytes)])
    }

    private func hasRowAbove(_ path: Path) throws -> Bool {
        var prefix = Path()
        for key in path.keys {
            if try database.integer("SELECT count(*) FROM server_data WHERE path = ?", [.text(Self.rowKey(prefix))]) > 0 { return true }
            prefix = prefix.child(key)
        }
        return false
    }

    /// The server's data at `path` as cached (empty where nothing is known).
    func node(at path: Path) -> Node {
        var node = Node.empty
        attempt {
            // The deepest ancestor row is the base; rows below it (in key order, parents first) override.
            var prefix = Path()
            for (depth, key) in path.keys.enumerated() {
                try database.run("SELECT value FROM server_data WHERE path = ?", [.text(Self.rowKey(prefix))]) { row in
                    if let value = Self.decode(row.blob(0)) { node = value.child(at: path.dropFirst(depth)) }
                }
                prefix = prefix.child(key)
            }
            try database.run("SELECT path, value FROM server_data WHERE path >= ? AND path < ? ORDER BY path", Self.rowRange(path)) { row in
                guard let value = Self.decode(row.blob(1)) else { return }
                let relative = Self.path(ofRowKey: row.text(0)).dropFirst(path.count)
                node = relative.isRoot ? value : node.setting(relative, to: value)
            }
        }
        return node
    }

    private static func decode(_ bytes: [UInt8]) -> Node? {
        try? JSONReader.parse(data: bytes, options: JSONReader.Options(allowServerValues: false))
    }

    // MARK: Tracked queries

    /// A query as tracked: filtered queries by their parameters, the rest as the location's.
    private static func trackedName(_ query: QuerySpec) -> String {
        query.params.loadsAllData ? "default" : query.params.identifier
    }

    private func trackedID(_ query: QuerySpec) throws -> Int64? {
        var id: Int64?
        try database.run("SELECT id FROM tracked_queries WHERE path = ? AND query = ?",
                         [.text(Self.rowKey(query.path)), .text(Self.trackedName(query))]) { id = $0.integer(0) }
        return id
    }

    /// Records that `query` was used now (listened to or read), creating it incomplete.
    func touch(_ query: QuerySpec) {
        queriesSinceCheck += 1
        change {
            let params = query.params.loadsAllData ? [] : Array(query.params.wireObject.serialized().utf8)
            try database.run("""
                INSERT INTO tracked_queries (path, query, params, complete, last_use) VALUES (?, ?, ?, 0, ?)
                ON CONFLICT (path, query) DO UPDATE SET last_use = excluded.last_use
                """, [.text(Self.rowKey(query.path)), .text(Self.trackedName(query)), .blob(params), .real(Date().timeIntervalSince1970)])
        }
    }

    /// The server said the data it sent for `query` is complete; for a filtered query,
    /// `keys` are the children it holds.
    func setComplete(_ query: QuerySpec, keys: Set<String>?) {
        touch(query)
        change {
            try database.run("UPDATE tracked_queries SET complete = 1 WHERE path = ? AND query = ?",
                             [.text(Self.rowKey(query.path)), .text(Self.trackedName(query))])
        }
        if let keys, !query.params.loadsAllData { setKeys(query, keys) }
    }

    /// The children a complete filtered query holds now.
    func setKeys(_ query: QuerySpec, _ keys: Set<String>) {
        let name = query.key
        guard savedKeys[name] != keys else { return }
        change {
            guard let id = try trackedID(query) else { return }
            try database.run("DELETE FROM tracked_keys WHERE query_id = ?", [.integer(id)])
            for key in keys { try database.run("INSERT INTO tracked_keys (query_id, key) VALUES (?, ?)", [.integer(id), .text(key)]) }
            savedKeys[name] = keys
        }
    }

    private func keys(ofTracked id: Int64) throws -> Set<String> {
        var keys: Set<String> = []
        try database.run("SELECT key FROM tracked_keys WHERE query_id = ?", [.integer(id)]) { keys.insert($0.text(0)) }
        return keys
    }

    /// Whether the cache holds all of `path`: a complete location here or above.
    func isComplete(atOrAbove path: Path) throws -> Bool {
        var prefix = Path()
        for depth in 0...path.count {
            var complete = false
            try database.run("SELECT complete FROM tracked_queries WHERE path = ? AND query = 'default'",
                             [.text(Self.rowKey(prefix))]) { complete = $0.integer(0) == 1 }
            if complete { return true }
            if depth < path.count { prefix = prefix.child(path.keys[depth]) }
        }
        return false
    }

    /// The server's whole value at `path` (a read's answer, a write it acknowledged): as
    /// `overwrite`, and the location is complete (unless one above already is: no tracked
    /// query for each write).
    func overwriteComplete(_ path: Path, _ node: Node) {
        overwrite(path, node)
        guard path.last != ".priority" else { return }
        var covered = false
        attempt { covered = try isComplete(atOrAbove: path) }
        if !covered { setComplete(QuerySpec(path: path), keys: nil) }
    }

    /// The server's whole answer to `query`: for a filtered one, its children, and that the
    /// query is complete with them (as when its listen completes). Unless a listen keeps it
    /// fresh, the location is no longer known whole: children outside the answer may have
    /// gone since it was.
    func overwriteComplete(_ query: QuerySpec, _ node: Node, locationKeptFresh: Bool) {
        guard !query.params.loadsAllData else { return overwriteComplete(query.path, node) }
        // A leaf has no children to select: what the query holds there is not said.
        guard node.isEmpty || !node.children.isEmpty else { return }
        overwriteChildren(at: query.path, node)
        if !locationKeptFresh { change { try markIncomplete(atAndAbove: query.path) } }
        setComplete(query, keys: Set(node.children.map { $0.key.name }))
    }

    /// A query's data at `path`: its children, not the location's (children outside it are
    /// not known gone).
    func overwriteChildren(at path: Path, _ node: Node) {
        for (key, child) in node.children { overwrite(path.child(key.name), child) }
    }

    /// The queries at `path` and above no longer hold all they say they do.
    private func markIncomplete(atAndAbove path: Path) throws {
        var at: Path? = path
        while let location = at {
            try database.run("UPDATE tracked_queries SET complete = 0 WHERE path = ?", [.text(Self.rowKey(location))])
            at = location.parent
        }
    }

    /// Forgets what the cache holds at and below `path` (the server's value there is not
    /// known), but for the locations `kept` below it: its rows and queries go, and the
    /// queries above are no longer complete. Returns the bytes and queries removed.
    @discardableResult
    func forget(_ path: Path, except kept: [Path] = []) -> (bytes: Int, queries: Int) {
        var removed = (bytes: 0, queries: 0)
        // A kept location's data may lie in a row above it (between it and `path`), which goes.
        let keptData = kept.map { ($0, node(at: $0)) }
        defer { for (location, node) in keptData { overwrite(location, node) } }
        change {
            let range = Self.rowRange(path) + kept.flatMap { Self.rowRange($0) }
            let rows = "path >= ? AND path < ?" + String(repeating: " AND NOT (path >= ? AND path < ?)", count: kept.count)
            removed.bytes = Int(try database.integer("SELECT \(Self.rowBytes) FROM server_data WHERE \(rows)", range))
            removed.queries = Int(try database.integer("SELECT count(*) FROM tracked_queries WHERE \(rows)", range))
            try database.run("DELETE FROM server_data WHERE \(rows)", range)
            try database.run("DELETE FROM tracked_keys WHERE query_id IN (SELECT id FROM tracked_queries WHERE \(rows))", range)
            try database.run("DELETE FROM tracked_queries WHERE \(rows)", range)
            if let parent = path.parent { try markIncomplete(atAndAbove: parent) }
            savedKeys = [:]
        }
        return removed
    }

    /// What the cache knows for `query`: its server data, and whether it is complete (the
    /// server said so for this location or one above, or for a query that holds every child
    /// this one can show). Incomplete, only the children known complete. Nil when nothing is.
    func serverCache(for query: QuerySpec) -> (node: Node, complete: Bool)? {
        var result: (Node, Bool)?
        attempt {
            let path = query.path
            if try isComplete(atOrAbove: path) {
                result = (node(at: path), true)
                return
            }
            // Complete filtered queries here: one that holds all of this one, else the union of what they hold.
            var known: Set<String> = []
            var anyKnown = false
            var covering: Set<String>?
            var rows: [(Int64, [UInt8])] = []
            try database.run("SELECT id, params FROM tracked_queries WHERE path = ? AND query != 'default' AND complete = 1",
                             [.text(Self.rowKey(path))]) { rows.append(($0.integer(0), $0.blob(1))) }
            for (id, bytes) in rows {
                let keys = try keys(ofTracked: id)
                if !query.params.loadsAllData, let json = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self)),
                   Self.holdsAll(of: query.params, QueryParams(wire: json)) {
                    covering = keys
                }
                known.formUnion(keys)
                anyKnown = true
            }
            // Locations just below known complete.
            try database.run("SELECT path FROM tracked_queries WHERE query = 'default' AND complete = 1 AND path > ? AND path < ?",
                             Self.rowRange(path)) { row in
                let below = Self.path(ofRowKey: row.text(0))
                if below.count == path.count + 1, let last = below.last {
                    known.insert(last)
                    anyKnown = true
                }
            }
            guard anyKnown || covering != nil else { return }
            let data = node(at: path)
            let keys = covering ?? known
            var children: [(ChildKey, Node)] = []
            for name in keys {
                let child = data.child(ChildKey(name))
                if !child.isEmpty { children.append((ChildKey(name), child)) }
            }
            result = (Node(children: ChildMap(unsorted: children)), covering != nil)
        }
        return result
    }

    /// Whether a complete `held` query holds every child `wanted` can show: the same order
    /// and bounds, and no limit or a limit at least as large from the same side.
    static func holdsAll(of wanted: QueryParams, _ held: QueryParams) -> Bool {
        guard wanted.index == held.index, wanted.start == held.start, wanted.end == held.end else { return false }
        guard let heldLimit = held.limit else { return true }
        guard let wantedLimit = wanted.limit else { return false }
        return wanted.isViewFromLeft == held.isViewFromLeft && wantedLimit <= heldLimit
    }

    // MARK: Kept-synced locations

    public var keptSynced: [Path] {
        var paths: [Path] = []
        attempt { try database.run("SELECT path FROM kept_synced ORDER BY path") { paths.append(Self.path(ofRowKey: $0.text(0))) } }
        return paths
    }

    func setKeptSynced(_ path: Path, _ on: Bool) {
        change {
            if on {
                try database.run("INSERT OR IGNORE INTO kept_synced (path) VALUES (?)", [.text(Self.rowKey(path))])
            } else {
                try database.run("DELETE FROM kept_synced WHERE path = ?", [.text(Self.rowKey(path))])
            }
        }
    }

    // MARK: Settings

    /// A setting kept with the cache (the kind of credential last used: never the credential).
    public func setting(_ name: String) -> String? {
        var value: String?
        attempt { try database.run("SELECT value FROM settings WHERE name = ?", [.text(name)]) { value = $0.text(0) } }
        return value
    }

    public func setSetting(_ name: String, _ value: String) {
        change { try Self.putSetting(name, value, in: database) }
        commit()
    }

    // MARK: Size and eviction

    /// Bytes of cached server data.
    public var dataSize: Int {
        var size = 0
        attempt { size = Int(try database.integer("SELECT \(Self.rowBytes) FROM server_data")) }
        return size
    }

    /// Forgets every cached value and what queries were complete (the write queue stays).
    func clearData() {
        change {
            try database.execute("DELETE FROM server_data; DELETE FROM tracked_keys; DELETE FROM tracked_queries;")
        }
        savedKeys = [:]
        commit()
    }

    /// Tracked queries kept at most (as the official clients keep): every read location and
    /// every acknowledged write's is one, and each costs a look-up in later reads.
    static let maxQueries = 1000
    private var queriesSinceCheck = 0
    /// The listened paths that kept the last eviction from bringing the cache under its
    /// limit (their data was in use, as a watch's is): evict again when one is no longer.
    private(set) var evictionBlockedBy: Set<Path> = []

    /// At open: a file larger than the limit may hold more data than that (a smaller limit
    /// than before, or evictions cut short), which is evicted. The file's size bounds the
    /// data's, so a file within the limit is not measured (measuring reads all of it).
    func evictIfOverLimitWhenOpened(pinned listened: [Path]) {
        // If the file's size cannot be read (not a failure of the cache), the data is measured.
        if let pages = try? database.integer("PRAGMA page_count"), let pageSize = try? database.integer("PRAGMA page_size"),
           Int(pages) * Int(pageSize) <= limit { return }
        evictIfNeeded(pinned: listened, force: true)
    }

    /// Evicts the least recently used queries' data until the cache is under 80% of its
    /// limit (and of `maxQueries`), when it has grown past either. Data at, above or below
    /// `pinned` paths (those listened to) and below kept-synced ones stays.
    func evictIfNeeded(pinned listened: [Path], force: Bool = false) {
        guard force || writtenSinceCheck > limit / 10 || queriesSinceCheck > Self.maxQueries / 10 else { return }
        writtenSinceCheck = 0
        queriesSinceCheck = 0
        var size = dataSize
        var queries = 0
        attempt { queries = Int(try database.integer("SELECT count(*) FROM tracked_queries")) }
        evictionBlockedBy = []
        guard size > limit || queries > Self.maxQueries else { return }
        let target = limit * 8 / 10
        let queryTarget = Self.maxQueries * 8 / 10
        change {
            var candidates: [(id: Int64, path: Path)] = []
            try database.run("SELECT id, path FROM tracked_queries ORDER BY last_use, id") {
                candidates.append(($0.integer(0), Self.path(ofRowKey: $0.text(1))))
            }
            var blockedBy: Set<Path> = []
            defer { evictionBlockedBy = size > limit || queries > Self.maxQueries ? blockedBy : [] }
            for candidate in candidates where size > target || queries > queryTarget {
                // Data a pinned location uses is not this query's alone: rows at or above the
                // pin hold it, and rows below it are part of it.
                let pins = listened.filter { $0.overlaps(candidate.path) }
                blockedBy.formUnion(pins)
                if !pins.isEmpty || keptSynced.contains(where: { $0.overlaps(candidate.path) }) { continue }
                let removed = forget(candidate.path)
                size -= removed.bytes
                queries -= removed.queries
            }
        }
        commit()
        // The file shrinks too (at the next checkpoint), not just the data it holds.
        attempt { try database.execute("PRAGMA incremental_vacuum") }
    }
}

/// Why a cache could not be used.
public enum ClientCacheError: Error, CustomStringConvertible {
    case inUse(folder: String, pid: String?)
    case unusable(folder: String, reason: String)

    public var description: String {
        switch self {
        case let .inUse(folder, pid):
            return "the cache in \(folder) is in use by another rtdb" + (pid.map { " (pid \($0))" } ?? "")
        case let .unusable(folder, reason):
            return "the cache in \(folder) cannot be used: \(reason)"
        }
    }
}
