import Synchronization

/// What a salvaging open (`--recover`) kept and what it had to leave out. Filled while the
/// store opens (the node file's damage reports come from the reads that open makes), read
/// after.
public final class RecoveryReport: Sendable {
    private struct Findings {
        var records = 0
        var skipped: [String] = []
        var repaired: [String] = []
        var movedTo: String?
    }

    private let findings = Mutex(Findings())

    public init() {}

    /// Log records read and applied.
    public var records: Int { findings.withLock { $0.records } }
    /// One line per stretch that could not be read.
    public var skipped: [String] { findings.withLock { $0.skipped } }
    /// One line per damaged file rebuilt with nothing lost (a head from its copy).
    public var repaired: [String] { findings.withLock { $0.repaired } }
    /// Where the damaged files were moved, when anything was left out.
    public var movedTo: String? { findings.withLock { $0.movedTo } }

    func countRecord() { findings.withLock { $0.records += 1 } }
    /// Damage found while reading (its message names the file and the byte).
    func noteDamage(_ message: String) { findings.withLock { $0.skipped.append(message) } }
    func noteRepair(_ message: String) { findings.withLock { $0.repaired.append(message) } }
    func noteMoved(to folder: String) { findings.withLock { $0.movedTo = folder } }

    public var summary: String {
        let found = findings.withLock { $0 }
        if found.skipped.isEmpty && found.repaired.isEmpty { return "no damage found; \(found.records) log records read, nothing changed" }
        var lines = found.repaired
        lines.append(found.skipped.isEmpty ? "\(found.records) log records kept; nothing left out" : "\(found.records) log records kept; left out:")
        lines += found.skipped.map { "  " + $0 }
        if let movedTo = found.movedTo { lines.append("the damaged files were moved to \(movedTo); a new node file holds what was kept") }
        return lines.joined(separator: "\n")
    }
}
