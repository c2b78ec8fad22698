import RTDBData

/// What the disk cache keeps: how much (its limit, and when to evict down to what), and what
/// of a write the server acknowledged becomes cached server data. The decisions only; the
/// disk cache carries them out.
struct CachePolicy {
    /// Past this many bytes of cached data, the least recently used is evicted.
    var limit: Int
    /// Tracked queries kept at most (as the official clients keep): every read location and
    /// every acknowledged write's is one, and each costs a look-up in later reads.
    static let maxQueries = 1000

    /// Whether the size is worth measuring again: a tenth of the limit written, or a tenth of
    /// the queries used, since it last was.
    func shouldCheck(written: Int, queriesUsed: Int) -> Bool {
        written > limit / 10 || queriesUsed > Self.maxQueries / 10
    }

    /// Whether the cache is over either bound.
    func isOver(size: Int, queries: Int) -> Bool {
        size > limit || queries > Self.maxQueries
    }

    /// Eviction goes down to 80% of both bounds, so it does not run again at the next write.
    func isAboveTarget(size: Int, queries: Int) -> Bool {
        size > limit * 8 / 10 || queries > Self.maxQueries * 8 / 10
    }

    /// What the cache does at a location when a write is acknowledged.
    enum Step: Equatable {
        /// The server's value there is not known: forget it, but for the locations kept.
        case forget(Path, except: [Path])
        /// The server's value there is `node`, and the location is complete.
        case keep(Path, Node)
    }

    /// An acknowledged write as the cache records it. Accepted, it is the server's data, all
    /// of it at each location written (as the official clients keep it): a later offline
    /// read there answers from the disk. Under a listen of the whole location, the server has
    /// sent its own data already (a query's listen gets only its window's); a server value's
    /// outcome is the server's to say, not the estimate.
    ///
    /// Not `cached` (an import's): what the disk held there is forgotten, no longer the
    /// server's data; at once for the whole write where no listen is near it (an import's
    /// update has thousands of entries). Where one listens below, it is kept as any write is:
    /// forgotten, the listen's (or kept-synced) data would go with it.
    ///
    /// `written`: each location the write set, its value as applied locally, and whether that
    /// holds an estimate of a server value. `listened`: locations with a listen;
    /// `whole`: those listened to whole; `wholeBefore`: those listened to whole since before
    /// the write was sent (their listens went first, so they hold what the server sent).
    static func steps(acknowledging path: Path, written: [(path: Path, node: Node, estimated: Bool)], cached: Bool,
                      listened: [Path], whole: [Path], wholeBefore: [Path]) -> [Step] {
        if !cached && !listened.contains(where: { $0.overlaps(path) }) { return [.forget(path, except: [])] }
        var steps: [Step] = []
        for (location, node, estimated) in written where !whole.contains(where: { $0.contains(location) }) {
            if estimated {
                steps.append(.forget(location, except: whole.filter { location.contains($0) && wholeBefore.contains($0) }))
            } else if !cached && !listened.contains(where: { location.contains($0) }) {
                steps.append(.forget(location, except: []))
            } else {
                steps.append(.keep(location, node))
            }
        }
        return steps
    }
}
