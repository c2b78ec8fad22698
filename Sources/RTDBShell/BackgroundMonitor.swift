import RTDBData

/// A monitor running in the background of the interactive shell (`monitor --bg`), listed
/// and stopped with the background watches.
final class BackgroundMonitor {
    let id: Int
    /// The operations it shows are at or below this path.
    let path: Path
    let task: Task<Void, Never>
    private let seen: BackgroundWatch.Counter

    init(id: Int, path: Path, task: Task<Void, Never>, seen: BackgroundWatch.Counter) {
        self.id = id
        self.path = path
        self.task = task
        self.seen = seen
    }

    var operationCount: Int { seen.value }
}
