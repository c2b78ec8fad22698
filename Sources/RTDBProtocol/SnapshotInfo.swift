import RTDBData

/// A saved snapshot of a database, as `snapshot list` shows it and the server's
/// `/.settings/snapshots.json` sends it: `{"NAME": {"saved": MS, "bytes": N}, …}`.
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

    /// A snapshot's name follows a namespace's rule (letters, digits, "-", "_"), so it is
    /// safe in a URL and a file name alike.
    public static func isValid(_ name: String) -> Bool { NamespaceName.isValid(name) }

    /// Why `name` cannot name a snapshot.
    public static func nameRule(_ name: String) -> String {
        "invalid snapshot name \"\(name.prefix(80))\": use 1 to 64 letters, digits, \"-\" and \"_\""
    }

    /// What it says of itself, under its name in a listing.
    public var fields: JSONValue { .object([("saved", .number(saved)), ("bytes", .number(Double(bytes)))]) }

    /// A listing, by name.
    public static func json(_ snapshots: [SnapshotInfo]) -> JSONValue {
        .object(snapshots.sorted { $0.name < $1.name }.map { ($0.name, $0.fields) })
    }

    /// The snapshots a listing names; nil when it is not one.
    public static func list(json: JSONValue) -> [SnapshotInfo]? {
        guard case .object(let members) = json else { return nil }
        var list: [SnapshotInfo] = []
        for (name, fields) in members {
            guard let snapshot = SnapshotInfo(name: name, fields: fields) else { return nil }
            list.append(snapshot)
        }
        return list.sorted { $0.name < $1.name }
    }

    /// The snapshot `fields` describes under `name`; nil when they are not its fields.
    public init?(name: String, fields: JSONValue) {
        guard SnapshotInfo.isValid(name), let saved = fields["saved"]?.number, let bytes = fields["bytes"]?.int, bytes >= 0 else { return nil }
        self.init(name: name, saved: saved, bytes: bytes)
    }
}
