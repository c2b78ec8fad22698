import RTDBData

/// `cp SRC DST` and `mv SRC DST` (`rename`): what to copy where, and how.
public struct CopyRequest: Equatable, Sendable {
    public var source: Path
    public var destination: Path
    /// `mv`: the source is removed in the same write.
    public var move: Bool
    /// `--merge`: the source's children are written into the destination, which keeps its others.
    public var merge: Bool
    /// `--force`: what is at the destination (or, with `--merge`, its children of the same
    /// names) may be replaced.
    public var force: Bool

    /// "copy" or "move", for messages.
    var verb: String { move ? "move" : "copy" }
}
