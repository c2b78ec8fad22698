import CSQLite
import Foundation
import RTDBData
#if canImport(Glibc)
import Glibc
#endif

/// The disk cache's file: `cache.sqlite` in a folder of its own (mode 0700) that one process
/// holds at a time, its tables and their format, and the transactions every change is made
/// in. What the tables mean belongs to the parts that use them: `CacheWriteQueue`,
/// `CachedServerData`, `TrackedQueries`; settings and kept-synced paths are kept here.
///
/// Changes are grouped into one SQLite transaction until `commit()`; `commit()` returns once
/// they are on disk (WAL, full sync). Used from the core's queue only.
final class CacheStorage {
    /// The folder holding `cache.sqlite`.
    let folder: String
    var path: String { folder + "/cache.sqlite" }
    /// Said once after opening: the file was damaged (or made by a newer rtdb) and the cache
    /// starts empty, or its write queue was damaged; the old file is kept beside it.
    var openNote: String?
    /// The first error met since opening (a full disk, say): what was kept may be incomplete.
    private(set) var failure: String?
    private(set) var database: SQLiteDatabase
    private let lock: FolderLock
    private(set) var closed = false

    /// The file's layout; a file with a higher one is set aside, never misread.
    static let formatVersion: Int64 = 2

    /// Called when a change opens a new transaction: the owner schedules its `commit()`.
    var onFirstChange: (() -> Void)?
    /// The parts that take part in every transaction, in the order they were added.
    private var participants: [TransactionParticipant] = []

    private var inTransaction = false
    /// A change since the last commit failed (a read that failed, damage met in data no
    /// change needs, does not make the next commit fail).
    private var changeFailed = false

    /// Opens (creating) the file in `folder`. Throws `DiskCacheError.inUse` when another
    /// process has it. A damaged file is moved aside and the cache starts empty.
    init(folder: String) throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = chmod(folder, 0o700)
        do {
            lock = try FolderLock(folder: folder, name: "lock")
        } catch .held(let pid) {
            throw DiskCacheError.inUse(folder: folder, pid: pid)
        } catch .unusable(let code) {
            throw DiskCacheError.unusable(folder: folder, reason: String(cString: strerror(code)))
        }
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
            lock.release()
            throw DiskCacheError.unusable(folder: folder, reason: "\(error)")
        } catch {
            // Damaged or from a newer rtdb: kept aside for whoever wants to look, and a fresh start.
            let aside = path + ".unreadable-\(Int(Date().timeIntervalSince1970))"
            for suffix in ["", "-wal", "-shm"] { _ = rename(path + suffix, aside + suffix) }
            openNote = "the cache could not be read (\(error)); it starts empty, and the writes it queued, if any, will not be sent (the old file is \((aside as NSString).lastPathComponent))"
            do {
                database = try Self.openDatabase(path)
            } catch {
                lock.release()
                throw DiskCacheError.unusable(folder: folder, reason: "\(error)")
            }
        }
    }

    deinit { close() }

    /// Closes without committing (a failed open), or after the owner committed.
    func close() {
        guard !closed else { return }
        closed = true
        database.close()
        lock.release()
        // The participants hold this storage: letting them go breaks the cycle, so they (and
        // the write queue's ledger file) are freed with their owner.
        participants = []
    }

    /// Takes part in every transaction from now on.
    func join(_ participant: TransactionParticipant) {
        participants.append(participant)
    }

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
        // Each queued write's checksum (`CacheWriteQueue.checksum`); null in rows an older rtdb queued.
        if try database.integer("SELECT count(*) FROM pragma_table_info('writes') WHERE name = 'crc'") == 0 {
            try database.execute("ALTER TABLE writes ADD COLUMN crc INTEGER")
        }
        // A damaged file is found now rather than in the middle of work: the data only where
        // it starts, so that opening does not take longer as the cache grows (damage deeper
        // in is reported when met); the queue is checked whole next (`CacheWriteQueue.verify`).
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

    /// Replaces a damaged file by a new one holding its settings, its kept-synced paths and
    /// what `fill` adds; returns the name the old file was moved to. The new file is made
    /// whole under another name, then takes the old one's place: a failure on the way (a
    /// full disk) leaves the damaged file where it is, found again at the next open, rather
    /// than an empty cache that would say nothing.
    func rebuild(skippingSetting skipped: String, _ fill: (SQLiteDatabase) throws -> Void) throws -> String {
        let settings = (try? database.pairs("SELECT name, value FROM settings")) ?? []
        let kept = (try? database.strings("SELECT path FROM kept_synced")) ?? []
        let rebuilt = path + ".rebuilt"
        for suffix in ["", "-wal", "-shm"] { unlink(rebuilt + suffix) }
        do {
            let fresh = try Self.openDatabase(rebuilt)
            try fresh.execute("BEGIN IMMEDIATE")
            try fill(fresh)
            for (name, value) in settings where name != skipped { try Self.putSetting(name, value, in: fresh) }
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
        return (aside as NSString).lastPathComponent
    }

    // MARK: Transactions

    /// Puts what changed since the last commit on disk; false (and `failure` says why) when
    /// that failed, and what it held is not kept.
    @discardableResult
    func commit() -> Bool {
        defer { changeFailed = false }
        guard inTransaction else { return !changeFailed }
        // Best effort: without it, damage is still found, only not counted.
        for participant in participants { attempt { try participant.willCommit(database) } }
        inTransaction = false
        if attempt({ try database.execute("COMMIT") }) {
            for participant in participants { participant.committed() }
            return !changeFailed
        }
        try? database.execute("ROLLBACK")
        transactionLost()
        return false
    }

    /// The open transaction did not reach the disk (its commit failed, or SQLite rolled it
    /// back on an error such as a full disk).
    private func transactionLost() {
        inTransaction = false
        for participant in participants { participant.lost() }
    }

    /// Runs `body` inside the open transaction, beginning one if none is open.
    func change(_ body: () throws -> Void) {
        guard !closed else { return }
        if !inTransaction {
            guard attempt({ try database.execute("BEGIN IMMEDIATE") }) else {
                changeFailed = true
                return
            }
            inTransaction = true
            onFirstChange?()
            for participant in participants { participant.began() }
            // A full disk may have ended the transaction meanwhile: nothing runs outside one.
            guard inTransaction else {
                changeFailed = true
                return
            }
        }
        if !attempt(body) {
            changeFailed = true
            // SQLite ends the whole transaction on some errors (a full disk): what follows
            // must not run outside one, committed at once where the owner thinks it is not.
            if !database.inTransaction { transactionLost() }
        }
    }

    /// Runs `body`, keeping its error as `failure` if it is the first; whether it succeeded.
    @discardableResult
    func attempt(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return true
        } catch {
            if failure == nil { failure = "\(error)" }
            return false
        }
    }

    /// The size of the file, as SQLite counts its pages; nil when it cannot say.
    var fileBytes: Int? {
        guard let pages = try? database.integer("PRAGMA page_count"), let pageSize = try? database.integer("PRAGMA page_size") else { return nil }
        return Int(pages) * Int(pageSize)
    }

    /// Gives the pages freed by forgetting data back to the file system: the file shrinks too
    /// (at the next checkpoint), not just the data it holds.
    func giveBackFreePages() {
        attempt { try database.execute("PRAGMA incremental_vacuum") }
    }

    // MARK: Settings and kept-synced locations

    static func putSetting(_ name: String, _ value: String, in database: SQLiteDatabase) throws {
        try database.run("INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", [.text(name), .text(value)])
    }

    /// A setting kept with the cache (the kind of credential last used: never the credential).
    func setting(_ name: String) -> String? {
        var value: String?
        attempt { try database.run("SELECT value FROM settings WHERE name = ?", [.text(name)]) { value = $0.text(0) } }
        return value
    }

    func setSetting(_ name: String, _ value: String) {
        change { try Self.putSetting(name, value, in: database) }
        commit()
    }

    var keptSynced: [Path] {
        var paths: [Path] = []
        attempt { try database.run("SELECT path FROM kept_synced ORDER BY path") { paths.append(CachedServerData.path(ofRowKey: $0.text(0))) } }
        return paths
    }

    func setKeptSynced(_ path: Path, _ on: Bool) {
        change {
            if on {
                try database.run("INSERT OR IGNORE INTO kept_synced (path) VALUES (?)", [.text(CachedServerData.rowKey(path))])
            } else {
                try database.run("DELETE FROM kept_synced WHERE path = ?", [.text(CachedServerData.rowKey(path))])
            }
        }
    }
}

/// A part of the cache that takes part in its transactions (the write queue, which must know
/// what a lost transaction took with it).
protocol TransactionParticipant: AnyObject {
    /// A transaction began; changes made here are part of it.
    func began()
    /// About to commit: last changes (best effort: an error here does not stop the commit).
    func willCommit(_ database: SQLiteDatabase) throws
    /// The transaction is on disk.
    func committed()
    /// The transaction is gone: nothing it held was kept.
    func lost()
}
