/// What a salvaging open (`--recover`) kept and what it had to leave out.
///
/// `@unchecked Sendable`: written only by the one thread that opens the store (the node
/// file's damage reports come from the reads that open makes), read after that open returns.
public final class RecoveryReport: @unchecked Sendable {
    /// Log records read and applied.
    public var records = 0
    /// One line per stretch that could not be read.
    public var skipped: [String] = []
    /// One line per damaged file rebuilt with nothing lost (a head from its copy).
    public var repaired: [String] = []
    /// Where the damaged files were moved, when anything was left out.
    public var movedTo: String?

    public init() {}

    /// Damage found while reading the node file (its message names the file and the byte).
    func noteDamage(_ message: String) { skipped.append(message) }

    public var summary: String {
        if skipped.isEmpty && repaired.isEmpty { return "no damage found; \(records) log records read, nothing changed" }
        var lines = repaired
        lines.append(skipped.isEmpty ? "\(records) log records kept; nothing left out" : "\(records) log records kept; left out:")
        lines += skipped.map { "  " + $0 }
        if let movedTo { lines.append("the damaged files were moved to \(movedTo); a new node file holds what was kept") }
        return lines.joined(separator: "\n")
    }
}
