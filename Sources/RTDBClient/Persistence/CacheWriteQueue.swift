import Foundation
import RTDBData
import RTDBProtocol

/// The user's writes not yet acknowledged, kept in the disk cache (`writes`) so that a later
/// session sends them: each row with a checksum of its place in the queue and all it holds,
/// checked whole when the cache opens (`verify`).
///
/// A write is on disk once the transaction that saved it commits; a lost transaction (a
/// full disk) tells the owner which writes it took (`onWritesLost`), and the removals it
/// undid are made again, recorded meanwhile in the `AcknowledgedLedger` so that a write the
/// server acknowledged is never sent again.
final class CacheWriteQueue: TransactionParticipant {
    private let storage: CacheStorage
    /// Told the rows of queued writes a failed commit did not keep: they are not on disk.
    var onWritesLost: (([Int64]) -> Void)?
    /// Rows of the queue added, and removed, in the open transaction.
    private var added: [Int64] = []
    private var removed: [Int64] = []
    /// Rows whose removal a failed commit undid: removed again in the next transaction, so
    /// a write acknowledged is not sent again by a later session once the disk has room.
    /// Kept in the ledger meanwhile, which needs no new room.
    private var removalsToRetry: [Int64] = [] {
        didSet { if removalsToRetry != oldValue { ledger?.record(removalsToRetry + retrying) } }
    }
    /// Those being removed again in the open transaction: in the ledger until it commits.
    private var retrying: [Int64] = [] {
        didSet { if retrying != oldValue { ledger?.record(removalsToRetry + retrying) } }
    }
    private let ledger: AcknowledgedLedger?
    /// How many writes the queue holds, kept in `settings` at each commit: what damage that
    /// SQLite cannot see past (a page lost whole) took from the queue is then known.
    private var length: Int64 = 0
    static let lengthSetting = "queued writes"
    /// The number `save` last gave.
    private var lastRow: Int64 = 0

    /// `fresh`: the cache's file was just made anew, and what the ledger names was in the old one.
    init(storage: CacheStorage, fresh: Bool) {
        self.storage = storage
        ledger = AcknowledgedLedger(path: storage.folder + "/acknowledged")
        if fresh { ledger?.record([]) }
        storage.join(self)
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

    /// Adds a row to the queue, with its checksum.
    private static func insert(into database: SQLiteDatabase, id: Int64, kind: Int64, path: String, value: [UInt8], cached: Int64) throws {
        try database.run("INSERT INTO writes (id, kind, path, value, cached, crc) VALUES (?, ?, ?, ?, ?, ?)",
                         [.integer(id), .integer(kind), .text(path), .blob(value), .integer(cached),
                          .integer(checksum(id: id, kind: kind, path: path, value: value, cached: cached))])
    }

    /// The rows the queue holds, as SQLite counts them now.
    private func countRows() -> Int64? {
        try? storage.database.integer("SELECT count(*) FROM writes")
    }

    /// Reads the queue whole at open: each row against its checksum, in the order of the
    /// queue, and SQLite's structure of the table. When any of it is damaged, the file is
    /// rebuilt holding the writes that read back whole, in their order, and the storage's
    /// note says how many cannot be sent. A damaged queue left in place would lose its rows
    /// silently, and send again at each start those whose removal it cannot record.
    func verify() throws {
        // Acknowledged writes an earlier session could not take out of the queue: out now,
        // or at the next commit, and never loaded meanwhile.
        removalsToRetry = ledger?.rows ?? []
        length = countRows() ?? 0
        if !removalsToRetry.isEmpty { removeAlone() }
        let database = storage.database
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
        let recorded = (try? database.strings("SELECT value FROM settings WHERE name = '\(Self.lengthSetting)'"))?.first.flatMap { Int64($0) }
        guard !problems.isEmpty else {
            length = Int64(whole.count + damagedRows)
            return
        }
        // Acknowledged writes the ledger names are not carried over.
        let acknowledged = Set(removalsToRetry)
        let carried = whole.filter { !acknowledged.contains($0.id) }
        let aside = try storage.rebuild(skippingSetting: Self.lengthSetting) { fresh in
            for entry in carried {
                try Self.insert(into: fresh, id: entry.id, kind: entry.kind, path: entry.path, value: entry.value, cached: entry.cached)
            }
            try CacheStorage.putSetting(Self.lengthSetting, String(carried.count), in: fresh)
        }
        length = Int64(carried.count)
        removalsToRetry = []
        let lost: String
        if let recorded, recorded >= Int64(whole.count) + Int64(damagedRows) {
            let n = Int(recorded) - whole.count
            lost = "\(n) queued write\(n == 1 ? "" : "s") could not be read and will not be sent"
        } else {
            lost = "\(damagedRows > 0 ? "at least \(damagedRows)" : "an unknown number of") queued writes could not be read and will not be sent"
        }
        storage.openNote = "the cache is damaged (\(problems.joined(separator: "; "))): \(lost); the \(carried.count) that read back whole are kept, in their order, "
            + "and its cached data is dropped (the old file is \(aside))"
    }

    // MARK: Transactions

    func began() {
        guard !removalsToRetry.isEmpty else { return }
        let rows = removalsToRetry
        retrying = rows  // first: the ledger holds them throughout
        removalsToRetry = []
        for row in rows { remove(row) }
    }

    func willCommit(_ database: SQLiteDatabase) throws {
        try CacheStorage.putSetting(Self.lengthSetting, String(length), in: database)
    }

    func committed() {
        added = []
        removed = []
        retrying = []
    }

    /// The writes the transaction queued are told lost, the removals it made are made again.
    func lost() {
        let lostRows = added, undone = removed
        added = []
        removed = []
        length = countRows() ?? length
        // A row added in this transaction is gone with it (no number is given twice, so a
        // row both added and removed here was one write's).
        let gone = Set(lostRows)
        removalsToRetry += undone.filter { !gone.contains($0) }
        retrying = []
        if !lostRows.isEmpty { onWritesLost?(lostRows) }
        if !removalsToRetry.isEmpty { removeAlone() }
    }

    /// The removals a failed commit undid, made again in a transaction of their own: they
    /// shrink the queue, and may fit where the writes beside them did not.
    private func removeAlone() {
        let database = storage.database
        guard storage.attempt({ try database.execute("BEGIN IMMEDIATE") }) else { return }
        var remaining = length
        let done = storage.attempt {
            for row in removalsToRetry {
                try database.run("DELETE FROM writes WHERE id = ?", [.integer(row)])
                remaining -= Int64(database.changes)
            }
            try CacheStorage.putSetting(Self.lengthSetting, String(remaining), in: database)
            try database.execute("COMMIT")
        }
        if done {
            length = remaining
            removalsToRetry = []
        } else {
            try? database.execute("ROLLBACK")
        }
    }

    // MARK: The queue

    /// Keeps a write until `remove`; returns its place in the queue, nil when the cache could
    /// not take it. It is on disk once the next commit succeeds (else `onWritesLost`).
    /// `cached`: whether its data is kept once acknowledged (see `Repo.set`).
    func save(_ write: Write, cached: Bool = true) -> Int64? {
        var id: Int64?
        storage.change {
            // Never a number this session gave before: a write acknowledged and removed in the
            // open transaction would otherwise lend its number to the next, and a failed
            // commit, which brings the removed row back, would take that row for the new
            // write's (lost with the transaction) and never remove it again.
            let next = max(try storage.database.integer("SELECT coalesce(max(id), 0) + 1 FROM writes"), lastRow + 1)
            try Self.insert(into: storage.database, id: next, kind: write.kindCode, path: write.path.description, value: write.encodedValue,
                            cached: cached ? 1 : 0)
            id = next
            lastRow = next
            length += 1
        }
        if let id { added.append(id) }
        return id
    }

    func remove(_ id: Int64) {
        var done = false
        storage.change {
            try storage.database.run("DELETE FROM writes WHERE id = ?", [.integer(id)])
            length -= Int64(storage.database.changes)
            done = true
        }
        if done { removed.append(id) } else { removalsToRetry.append(id) }
    }

    func removeAll() {
        storage.change {
            try storage.database.run("DELETE FROM writes")
            length = 0
        }
        removalsToRetry = []
    }

    /// The writes kept, oldest first. One that cannot be read back is left out and counted.
    func load() -> (writes: [(row: Int64, write: Write, cached: Bool)], unreadable: Int) {
        var writes: [(row: Int64, write: Write, cached: Bool)] = []
        var unreadable = 0
        storage.attempt {
            let acknowledged = Set(removalsToRetry)
            try storage.database.run("SELECT id, kind, path, value, cached FROM writes ORDER BY id") { row in
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
}
