/// A saved snapshot of a database, as `snapshot list` shows it.
public struct SnapshotInfo: Sendable, Equatable {
    public let name: String
    /// When it was saved, in milliseconds since the epoch.
    public let saved: Double
    /// Its file's size.
    public let bytes: Int

    public init(name: String, saved: Double, bytes: Int) {
        self.name = name
        self.saved = saved
        self.bytes = bytes
    }

    /// Why `name` cannot name a snapshot.
    static func nameRule(_ name: String) -> String {
        "invalid snapshot name \"\(name.prefix(80))\": use 1 to 64 letters, digits, \"-\" and \"_\""
    }
}
