import RTDBProtocol

/// A database that keeps snapshots of its tree (`snapshot`): an embedded one, or a server's
/// namespace (its owner asks).
public protocol SnapshotKeeping: AnyObject, Sendable {
    /// The snapshots saved, by name.
    func snapshots() async throws -> [SnapshotInfo]
    /// Saves the tree as it is now as `name`, replacing one of that name.
    func saveSnapshot(_ name: String) async throws -> SnapshotInfo
    /// Makes snapshot `name` the whole tree, as one write of `/`.
    func restoreSnapshot(_ name: String) async throws
    /// Forgets snapshot `name`; false when there was none.
    func removeSnapshot(_ name: String) async throws -> Bool
}
