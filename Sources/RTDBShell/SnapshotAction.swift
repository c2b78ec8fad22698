/// What `snapshot` does with the database's snapshots.
public enum SnapshotAction: Equatable, Sendable {
    case save(String)
    case restore(String)
    case list
    case remove(String)
}
