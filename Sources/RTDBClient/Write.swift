import RTDBData
import RTDBProtocol

/// A user's write: a set (pushes, priorities and removals are sets) or a multi-path update,
/// with server values unresolved, as it is sent. The write queue and onDisconnect hold these.
/// An update with guards is written only if the values it guards are still those read
/// (`UpdateGuard`: `cp` and `mv`).
public enum Write: Sendable, Equatable {
    case set(Path, Node)
    case update(Path, [UpdateEntry], guards: [UpdateGuard] = [])

    public var path: Path {
        switch self {
        case .set(let path, _), .update(let path, _, _): return path
        }
    }

    /// The places it writes, as flow control counts them (`WriteGate`).
    var entryCount: Int {
        switch self {
        case .set: return 1
        case .update(_, let updates, _): return max(1, updates.count)
        }
    }
}
